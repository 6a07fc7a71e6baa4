package mirrorpolicy_test

import (
	"fmt"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// A release mirrored into ECR with `oc adm release mirror`, and an ECR
// pull-through cache for everything else on quay.io: the release digest
// goes to the mirrored repository (the more specific source), other
// quay.io images, by tag too, to the cache.
func Example() {
	const ecr = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	rules, err := mirrorpolicy.ECRReleaseMirror(ecr + "/ocp4/openshift4")
	if err != nil {
		panic(err)
	}
	cache, err := mirrorpolicy.ECRPullThroughCache("quay.io", ecr+"/quay")
	if err != nil {
		panic(err)
	}
	p, err := mirrorpolicy.New(append(rules, cache)...)
	if err != nil {
		panic(err)
	}
	for _, image := range []string{
		"quay.io/openshift-release-dev/ocp-release@sha256:3a5b3c2b7f1c9e8d4d6f0e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
		"quay.io/openshift/origin-cli:4.18",
	} {
		candidates, err := p.Candidates(image)
		if err != nil {
			panic(err)
		}
		for _, c := range candidates {
			fmt.Printf("%s mirror=%t (%s)\n", c.Ref, c.Mirror, c.Origin)
		}
	}
	// Output:
	// 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:3a5b3c2b7f1c9e8d4d6f0e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c mirror=true (ECRReleaseMirror/123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4)
	// quay.io/openshift-release-dev/ocp-release@sha256:3a5b3c2b7f1c9e8d4d6f0e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c mirror=false (ECRReleaseMirror/123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4)
	// 123456789012.dkr.ecr.us-east-1.amazonaws.com/quay/openshift/origin-cli:4.18 mirror=true (ECRPullThroughCache/123456789012.dkr.ecr.us-east-1.amazonaws.com/quay)
	// quay.io/openshift/origin-cli:4.18 mirror=false (ECRPullThroughCache/123456789012.dkr.ecr.us-east-1.amazonaws.com/quay)
}

// HyperShift's OPENSHIFT_IMG_OVERRIDES round trip.
func ExampleParseOverrides() {
	m, err := mirrorpolicy.ParseOverrides("quay.io/openshift-release-dev/ocp-release=mirror.example.com/ocp,quay.io/openshift-release-dev/ocp-release=mirror2.example.com/ocp")
	if err != nil {
		panic(err)
	}
	fmt.Println(m["quay.io/openshift-release-dev/ocp-release"])
	fmt.Println(mirrorpolicy.FormatOverrides(m))

	_, err = mirrorpolicy.ParseOverrides("quay.io=mirror.example.com,quay.io")
	fmt.Println(err)
	// Output:
	// [mirror.example.com/ocp mirror2.example.com/ocp]
	// quay.io/openshift-release-dev/ocp-release=mirror.example.com/ocp,quay.io/openshift-release-dev/ocp-release=mirror2.example.com/ocp
	// mirrorpolicy: overrides pair 1 "quay.io": missing "="
}
