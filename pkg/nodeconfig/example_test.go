package nodeconfig_test

import (
	"fmt"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/pkg/nodeconfig"
)

// A release mirrored into ECR: render the worker configuration and look at
// the registries.conf drop-in it installs.
func ExampleRender() {
	rules, err := mirrorpolicy.ECRReleaseMirror("123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4")
	if err != nil {
		panic(err)
	}
	policy, err := mirrorpolicy.New(rules...)
	if err != nil {
		panic(err)
	}
	r, err := nodeconfig.Render(nodeconfig.Options{Policy: policy, Namespace: "clusters"})
	if err != nil {
		panic(err)
	}
	for _, f := range r.Files {
		fmt.Printf("%s %o\n", f.Path, f.Mode)
	}
	fmt.Print(string(r.DropIn))
	fmt.Println(r.ConfigMap.Name, len(r.Warnings))
	// Output:
	// /etc/containers/registries.conf.d/99-ecr-login-kubelet.conf 644
	// /etc/kubernetes/credential-providers/ecr-credential-provider.yaml 644
	// /usr/local/bin/docker-credential-ecr-login-kubelet 755
	// # Written by hypershift-ecr pkg/nodeconfig. containers/image asks these
	// # in order for every registry host it contacts, mirrors included: the auth
	// # files (the pull secret) first, then the helper docker-credential-ecr-login-kubelet,
	// # which serves Amazon ECR hosts only, with the instance role.
	// credential-helpers = ["containers-auth.json", "ecr-login-kubelet"]
	// 99-worker-ecr-credential-helper 0
}

// A mirror the helper cannot serve is refused before anything is rendered.
func ExampleMirrorError() {
	rule, err := mirrorpolicy.ECRPullThroughCache("quay.io", "mirror.example.com/quay")
	if err != nil {
		panic(err)
	}
	policy, err := mirrorpolicy.New(rule)
	if err != nil {
		panic(err)
	}
	_, err = nodeconfig.Render(nodeconfig.Options{Policy: policy})
	fmt.Println(err)
	// Output:
	// nodeconfig: mirror "mirror.example.com/quay" of source "quay.io" (ECRPullThroughCache/mirror.example.com/quay): host mirror.example.com is not an Amazon ECR registry host; declare it with an ecrhost.Alias if it is a CNAME of one, or give its credentials another way
}
