// Package conformance proves this module against the real programs it must
// interoperate with, instead of against its own fakes: the AWS SDK's
// credential chain over a fake EC2 metadata service, the real kubelet
// credential provider ecr-credential-provider (k8s.io/cloud-provider-aws),
// Debian's docker-registry (distribution 2.8) with htpasswd authentication
// whose password rotates with every ECR token, and Debian's skopeo as the
// client of the pull secrets that registryauth's Augment produces.
//
// The tests carry the build tag "conformance", so `go test ./...` skips them.
// `make conformance` installs the peers (testing/conformance/setup.sh) and
// runs them:
//
//	make conformance
//	# or, with the peers installed:
//	ECR_CREDENTIAL_PROVIDER=$(bash testing/conformance/setup.sh) \
//		go test -tags conformance -count=1 -v ./testing/conformance/
//
// Only the Amazon ECR API is faked (testing/fakeecr, over its HTTP wire
// protocol). Everything listens on loopback: the fake ECR and IMDS on
// 127.0.0.1, docker-registry on 127.0.0.2:443 under the name
// 123456789012.dkr.ecr.us-east-1.amazonaws.com with a certificate from a CA
// made per test. Go clients reach that name through a dialer override; the
// command-line clients run in a private mount namespace (unshare -m) whose
// /etc/hosts maps it. The tests need root (port 443, mount namespaces), run
// one at a time, and stop every process they start.
//
// Every failure names the component and the step that failed, for example
// "docker-registry 2.8.2+ds1: push with rotated password: ...". The versions
// of the components are logged by TestComponentVersions. See
// docs/conformance.md for what each test proves.
package conformance
