package preflight_test

import (
	"os"

	"github.com/openshift/hypershift-ecr/pkg/preflight"
)

// A report as Run returns it when the ECR mirror lags behind quay.io: the
// network and IAM are fine, the release is not mirrored yet. The CLI
// prints it with WriteText, or as JSON for `-o json`.
func ExampleReport_WriteText() {
	const (
		release = "quay.io/openshift-release-dev/ocp-release@sha256:cd3aee8f26eda3cb2c9c2b08bcefb04ceb96217968ee3bd3830b003d93729019"
		mirror  = "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"
	)
	r := &preflight.Report{Release: release, Mirror: mirror, Region: "us-east-1", Checks: []preflight.Check{
		{Name: preflight.CheckAPIEndpoint, Status: preflight.StatusPass, Detail: "connected to api.ecr.us-east-1.amazonaws.com:443 (10.0.12.5:443)"},
		{Name: preflight.CheckRegistryDNS, Status: preflight.StatusPass, Detail: "123456789012.dkr.ecr.us-east-1.amazonaws.com resolves to 10.0.12.34 (private)"},
		{Name: preflight.CheckS3LayerBucket, Status: preflight.StatusPass, Detail: "connected to prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com:443 (52.217.1.2:443)"},
		{Name: preflight.CheckSTSEndpoint, Status: preflight.StatusSkip, Detail: "not needed: no web identity (IRSA) or assumed role configured"},
		{Name: preflight.CheckAuthorizationToken, Status: preflight.StatusPass, Detail: "token for 123456789012.dkr.ecr.us-east-1.amazonaws.com valid until 2026-08-01T12:00:00Z"},
		{Name: preflight.CheckReleaseInMirror, Status: preflight.StatusFail,
			Detail: "release " + release + " is not yet in " + mirror + " (manifest unknown) and the policy forbids contacting quay.io",
			Hint:   "copy it into the mirror: oc adm release mirror --from=" + release + " --to=" + mirror},
		{Name: preflight.CheckComponentsInMirror, Status: preflight.StatusSkip, Detail: "not run: release-in-mirror failed"},
	}}
	if err := r.WriteText(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// release: quay.io/openshift-release-dev/ocp-release@sha256:cd3aee8f26eda3cb2c9c2b08bcefb04ceb96217968ee3bd3830b003d93729019
	// mirror:  123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 (us-east-1)
	//
	// PASS  ecr-api-endpoint         connected to api.ecr.us-east-1.amazonaws.com:443 (10.0.12.5:443)
	// PASS  registry-dns             123456789012.dkr.ecr.us-east-1.amazonaws.com resolves to 10.0.12.34 (private)
	// PASS  s3-layer-bucket          connected to prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com:443 (52.217.1.2:443)
	// SKIP  sts-endpoint             not needed: no web identity (IRSA) or assumed role configured
	// PASS  get-authorization-token  token for 123456789012.dkr.ecr.us-east-1.amazonaws.com valid until 2026-08-01T12:00:00Z
	// FAIL  release-in-mirror        release quay.io/openshift-release-dev/ocp-release@sha256:cd3aee8f26eda3cb2c9c2b08bcefb04ceb96217968ee3bd3830b003d93729019 is not yet in 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 (manifest unknown) and the policy forbids contacting quay.io
	//                                hint: copy it into the mirror: oc adm release mirror --from=quay.io/openshift-release-dev/ocp-release@sha256:cd3aee8f26eda3cb2c9c2b08bcefb04ceb96217968ee3bd3830b003d93729019 --to=123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4
	// SKIP  components-in-mirror     not run: release-in-mirror failed
	//
	// FAIL: 1 check failed
}
