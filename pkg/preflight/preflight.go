package preflight

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/registryauth"
)

// Defaults of a Config.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 10 * time.Second
)

// Names of the checks, in the order Run reports them. They are stable:
// scripts and `-o json` consumers match on them.
const (
	CheckAPIEndpoint        = "ecr-api-endpoint"
	CheckRegistryDNS        = "registry-dns"
	CheckS3LayerBucket      = "s3-layer-bucket"
	CheckSTSEndpoint        = "sts-endpoint"
	CheckAuthorizationToken = "get-authorization-token"
	CheckReleaseInMirror    = "release-in-mirror"
	CheckComponentsInMirror = "components-in-mirror"
)

// Config says what to check and how to reach the network. Only Release and
// Keychain are required; see each field for its default.
type Config struct {
	// Release is the release image as users give it, by digest
	// (quay.io/openshift-release-dev/ocp-release@sha256:...) or by tag.
	Release string
	// Policy holds the mirror rules, e.g. from mirrorpolicy.ECRReleaseMirror.
	// The ECR mirror checked is the registry of the first candidate of
	// Release on an Amazon ECR host. Nil means no rules: Release itself must
	// then be on ECR.
	Policy *mirrorpolicy.Policy
	// Keychain gets the ECR token (registryauth.Keychain) and authenticates
	// every registry request. Required.
	Keychain registryauth.CredentialSource
	// Region names the regional endpoints checked. The default is the region
	// of the mirror's ECR host.
	Region string
	// APIEndpoint is a custom ECR API endpoint URL, such as an interface VPC
	// endpoint "https://vpce-0abc-xyz.api.ecr.us-east-1.vpce.amazonaws.com".
	// Give the one the Keychain uses (AWS_ENDPOINT_URL_ECR). The default is
	// the SDK's endpoint for the mirror host: api.ecr.<region>.amazonaws.com,
	// .amazonaws.com.cn in China, the FIPS endpoint for a FIPS host and the
	// dual-stack one for a dual-stack host.
	APIEndpoint string
	// UseSTS adds the sts-endpoint check, for identities that need STS to get
	// credentials (IRSA's AssumeRoleWithWebIdentity, assumed roles). The CLI
	// sets it when AWS_ROLE_ARN or AWS_WEB_IDENTITY_TOKEN_FILE is set.
	UseSTS bool
	// STSEndpoint is a custom STS endpoint URL (an interface VPC endpoint).
	// The default is the regional endpoint sts.<region>.amazonaws.com.
	STSEndpoint string
	// AllowPublic says the cluster reaches AWS through the internet (NAT or
	// internet gateway). By default the checks expect a zero-egress VPC and
	// warn when the registry or an interface endpoint answers on a public
	// address.
	AllowPublic bool
	// Transport carries registry requests. The default is
	// go-containerregistry's remote.DefaultTransport.
	Transport http.RoundTripper
	// Dialer opens the TCP connections of the reachability checks, with
	// addresses "host:port". The default is a net.Dialer.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// LookupHost resolves the registry host for registry-dns. The default is
	// net.DefaultResolver.LookupHost.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// Concurrency bounds the component manifest checks in flight. The
	// default is 8.
	Concurrency int
	// Timeout bounds each network operation: one dial, one lookup, one token
	// request, one manifest check, the release metadata read. The default is
	// 10 seconds.
	Timeout time.Duration
	// Progress receives progress lines during the component checks
	// ("components-in-mirror: checked 57/190"), at most one a second and a
	// last one when done. Nil writes nothing.
	Progress io.Writer
	// Platform selects the image of a manifest list. The default is
	// linux/amd64.
	Platform *v1.Platform
}

// Status is the outcome of one check.
type Status string

// Statuses. Only StatusFail makes a Report not OK.
const (
	// StatusPass: the check proved what it checks.
	StatusPass Status = "pass"
	// StatusFail: pulls will fail for the reason in Detail.
	StatusFail Status = "fail"
	// StatusWarn: it works now, but not the way a zero-egress cluster
	// should (public addresses, a release found by tag only).
	StatusWarn Status = "warn"
	// StatusSkip: not run, because a check it needs failed or it does not
	// apply (sts-endpoint without UseSTS).
	StatusSkip Status = "skip"
)

// Check is the result of one check. It never holds a token.
type Check struct {
	// Name is one of the Check* constants.
	Name string `json:"name"`
	// Status is the outcome.
	Status Status `json:"status"`
	// Detail says what was found, or why the check was skipped.
	Detail string `json:"detail,omitempty"`
	// Hint tells an operator what to fix; empty when there is nothing to do.
	Hint string `json:"hint,omitempty"`
	// Duration is how long the check took. It is "durationMs" in JSON.
	Duration time.Duration `json:"-"`
	// Err is the cause of a failure, for errors.Is and errors.As (for
	// example registryauth.ErrAccessDenied or releaseinfo.ErrNotMirrored).
	// It is not part of the JSON form.
	Err error `json:"-"`
}

// Report is the result of Run.
type Report struct {
	// Release is the release image as given.
	Release string `json:"release"`
	// Mirror is the ECR repository the release was checked in.
	Mirror string `json:"mirror"`
	// Region is the region whose endpoints were checked.
	Region string `json:"region"`
	// Pullspec is the release in the mirror, pinned by digest; empty when it
	// was not found.
	Pullspec string `json:"pullspec,omitempty"`
	// Checks are in the order of the Check* constants.
	Checks []Check `json:"checks"`
	// Components is the number of distinct component images checked.
	Components int `json:"components,omitempty"`
	// Missing are the component pullspecs the mirror does not hold (or that
	// the policy does not send to ECR), sorted.
	Missing []string `json:"missing,omitempty"`
	// Unchecked are the component pullspecs that could not be checked
	// (network errors, timeouts), sorted.
	Unchecked []string `json:"unchecked,omitempty"`
}

// Run checks, from where it runs, whether the release can be pulled from its
// ECR mirror, and why not. It returns an error only for unusable input (a
// Release that does not parse, a policy that sends the release to no ECR
// registry, a missing Keychain, a bad endpoint URL), each matching one of
// the Err* sentinels, or, with the partial report, when ctx ends. Failed
// checks are in the Report, not in the error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	p, err := newPlan(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Release: cfg.Release, Mirror: p.mirrorRepo, Region: p.region}

	// The reachability checks are independent: run them together, so that
	// several dead endpoints cost one timeout, not four.
	network := []func(context.Context) Check{p.checkAPIEndpoint, p.checkRegistryDNS, p.checkS3, p.checkSTS}
	done := make([]Check, len(network))
	var wg sync.WaitGroup
	for i, f := range network {
		wg.Go(func() { done[i] = timed(ctx, f) })
	}
	wg.Wait()
	rep.Checks = append(rep.Checks, done...)

	// The registry checks build on each other and on the network checks.
	// A check whose prerequisite failed, or was skipped for that reason, is
	// skipped: its outcome would only repeat that failure, slower. blocked
	// maps such a check to the failed check at the root.
	blocked := map[string]string{}
	for _, c := range rep.Checks {
		if c.Status == StatusFail {
			blocked[c.Name] = c.Name
		}
	}
	steps := []struct {
		name  string
		needs []string
		run   func(context.Context, *Report) Check
	}{
		{CheckAuthorizationToken, []string{CheckAPIEndpoint, CheckSTSEndpoint}, p.checkToken},
		{CheckReleaseInMirror, []string{CheckAuthorizationToken, CheckRegistryDNS}, p.checkRelease},
		{CheckComponentsInMirror, []string{CheckReleaseInMirror, CheckS3LayerBucket}, p.checkComponents},
	}
	for _, s := range steps {
		var c Check
		if root := firstBlocked(s.needs, blocked); root != "" {
			c = Check{Name: s.name, Status: StatusSkip, Detail: "not run: " + root + " failed"}
			blocked[s.name] = root
		} else {
			c = timed(ctx, func(ctx context.Context) Check { return s.run(ctx, rep) })
			if c.Status == StatusFail {
				blocked[s.name] = s.name
			}
		}
		rep.Checks = append(rep.Checks, c)
	}
	if err := context.Cause(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

func firstBlocked(needs []string, blocked map[string]string) string {
	for _, n := range needs {
		if root, ok := blocked[n]; ok {
			return root
		}
	}
	return ""
}

func timed(ctx context.Context, f func(context.Context) Check) Check {
	start := time.Now()
	c := f(ctx)
	c.Duration = time.Since(start)
	return c
}

// Check returns the check named name and whether the report has it.
func (r *Report) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// OK reports whether the report has checks and none of them failed.
// Warnings and skipped checks do not count: a check is skipped only because
// another failed, or because it does not apply.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			return false
		}
	}
	return len(r.Checks) > 0
}
