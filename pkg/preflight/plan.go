package preflight

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo/ggcrprobe"
)

// plan is a validated Config with everything derived from it: the mirror,
// its candidates and the endpoint addresses to check.
type plan struct {
	cfg    Config // defaults applied
	policy *mirrorpolicy.Policy

	reg        ecrhost.Registry // the mirror's ECR registry
	mirrorRepo string           // repository of the first ECR candidate
	candidates []string         // ECR candidates of the release on reg.Host, in policy order
	// tagOnDigestMirror is set when the release is a tag reference that the
	// policy mirrors by digest only: the tag is then looked up in the
	// mirror repository, which a node would never do.
	tagOnDigestMirror bool

	region, partition string
	apiAddr, stsAddr  string // host:port
	s3Addr            string // host:443
	transport         http.RoundTripper
	platform          v1.Platform

	auth   *ggcrauth.Keychain // cfg.Keychain for go-containerregistry
	prober *ggcrprobe.Prober  // authenticated manifest HEADs

	pinned     string // digest-pinned release in the mirror, set by checkRelease
	progressMu sync.Mutex
}

func newPlan(ctx context.Context, cfg Config) (*plan, error) {
	if cfg.Keychain == nil {
		return nil, &ConfigError{Field: "Keychain", Reason: "is required", Kind: ErrInvalidConfig}
	}
	if cfg.Concurrency < 0 {
		return nil, &ConfigError{Field: "Concurrency", Reason: "must not be negative", Kind: ErrInvalidConfig}
	}
	if cfg.Timeout < 0 {
		return nil, &ConfigError{Field: "Timeout", Reason: "must not be negative", Kind: ErrInvalidConfig}
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Dialer == nil {
		d := &net.Dialer{Timeout: cfg.Timeout}
		cfg.Dialer = d.DialContext
	}
	if cfg.LookupHost == nil {
		cfg.LookupHost = net.DefaultResolver.LookupHost
	}
	p := &plan{cfg: cfg, policy: cfg.Policy, transport: cfg.Transport,
		platform: v1.Platform{OS: "linux", Architecture: "amd64"}}
	if p.policy == nil {
		p.policy = &mirrorpolicy.Policy{}
	}
	if p.transport == nil {
		p.transport = remote.DefaultTransport
	}
	if cfg.Platform != nil {
		p.platform = *cfg.Platform
	}
	if err := p.selectMirror(); err != nil {
		return nil, err
	}

	p.region = cfg.Region
	if p.region == "" {
		p.region = p.reg.Region
	}
	part, ok := ecrhost.PartitionForRegion(p.region)
	if !ok {
		return nil, &ConfigError{Field: "Region", Value: p.region, Reason: "is not an AWS region", Kind: ErrInvalidConfig}
	}
	p.partition = part

	var err error
	if p.apiAddr, err = endpointAddr("APIEndpoint", cfg.APIEndpoint, func() (string, error) {
		ep, err := ecr.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, ecr.EndpointParameters{
			Region: aws.String(p.region), UseFIPS: aws.Bool(p.reg.FIPS), UseDualStack: aws.Bool(p.reg.DualStack)})
		return ep.URI.String(), err
	}); err != nil {
		return nil, err
	}
	if p.stsAddr, err = endpointAddr("STSEndpoint", cfg.STSEndpoint, func() (string, error) {
		ep, err := sts.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, sts.EndpointParameters{Region: aws.String(p.region)})
		return ep.URI.String(), err
	}); err != nil {
		return nil, err
	}
	// ECR answers layer GETs with a redirect to this bucket; a private VPC
	// reaches it through an S3 gateway endpoint, which has no DNS name of
	// its own, so the public name is what must connect.
	p.s3Addr = net.JoinHostPort("prod-"+p.region+"-starport-layer-bucket.s3."+p.region+"."+dnsSuffix(p.partition), "443")

	// One puller for every HEAD: it keeps the authenticated transport of
	// each repository, so ~150 component checks cost one /v2/ ping, not 150.
	p.auth = ggcrauth.NewKeychain(cfg.Keychain)
	puller, err := remote.NewPuller(remote.WithTransport(p.transport), remote.WithAuthFromKeychain(p.auth))
	if err != nil {
		return nil, &ConfigError{Field: "Transport", Reason: "is not usable", Kind: ErrInvalidConfig, Err: err}
	}
	p.prober = ggcrprobe.New(p.auth, ggcrprobe.WithTransport(p.transport), ggcrprobe.WithPlatform(p.platform),
		ggcrprobe.WithRemoteOptions(remote.Reuse(puller)))
	return p, nil
}

// selectMirror finds the ECR candidates of the release under the policy.
func (p *plan) selectMirror() error {
	release := p.cfg.Release
	if release == "" {
		return &ConfigError{Field: "Release", Reason: "is required", Kind: ErrInvalidRelease}
	}
	cands, err := p.policy.Candidates(release)
	switch {
	case errors.Is(err, mirrorpolicy.ErrInvalidReference):
		return &ConfigError{Field: "Release", Value: release, Reason: "is not an image reference", Kind: ErrInvalidRelease, Err: err}
	case err != nil && !errors.Is(err, mirrorpolicy.ErrBlocked):
		return &ConfigError{Field: "Policy", Reason: "cannot place the release", Kind: ErrInvalidConfig, Err: err}
	}
	refs := ecrRefs(cands)
	if len(refs) == 0 {
		// A tag under digest-only mirrors (what `oc adm release mirror`
		// configures): find the mirror repository through the digest
		// rules and look for the same tag there, which is where
		// `oc adm release mirror` also pushes it.
		if tagged, name, ok := splitTag(release); ok {
			cands, err := p.policy.Candidates(name + "@sha256:" + strings.Repeat("0", 64))
			if err == nil || errors.Is(err, mirrorpolicy.ErrBlocked) {
				for _, r := range ecrRefs(cands) {
					refs = append(refs, repository(r)+":"+tagged)
				}
				p.tagOnDigestMirror = len(refs) > 0
			}
		}
	}
	if len(refs) == 0 {
		return &ConfigError{Field: "Policy", Reason: "sends " + release + " to no Amazon ECR registry", Kind: ErrNoECRMirror}
	}
	p.reg, _ = ecrhost.Parse(refs[0])
	p.mirrorRepo = repository(refs[0])
	// The checks are about one registry (one region, one set of
	// endpoints): keep the candidates on the first ECR host.
	for _, r := range refs {
		if reg, _ := ecrhost.Parse(r); reg.Host == p.reg.Host {
			p.candidates = append(p.candidates, r)
		}
	}
	return nil
}

// ecrRefs keeps the candidates on private ECR registries, in order.
func ecrRefs(cands []mirrorpolicy.Candidate) []string {
	var refs []string
	for _, c := range cands {
		if reg, ok := ecrhost.Parse(c.Ref); ok && !reg.Public {
			refs = append(refs, c.Ref)
		}
	}
	return refs
}

// splitTag returns the tag and normalised repository of a tag reference.
func splitTag(image string) (tag, name string, ok bool) {
	ref, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", "", false
	}
	t, isTag := ref.(reference.Tagged)
	if !isTag {
		return "", "", false
	}
	return t.Tag(), ref.Name(), true
}

// repository returns ref without its tag or digest.
func repository(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref
}

// hostOf returns the registry host of a normalised pullspec.
func hostOf(ref string) string {
	host, _, _ := strings.Cut(ref, "/")
	return host
}

// endpointAddr returns "host:port" of a custom endpoint URL, or of the
// default one def computes.
func endpointAddr(field, custom string, def func() (string, error)) (string, error) {
	raw := custom
	if raw == "" {
		var err error
		if raw, err = def(); err != nil {
			return "", &ConfigError{Field: field, Reason: "has no default for this region", Kind: ErrInvalidConfig, Err: err}
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		// Never echo a URL that may carry credentials in its user info.
		return "", &ConfigError{Field: field, Value: redactURL(raw), Reason: "is not an http(s) URL with a host", Kind: ErrInvalidConfig}
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

// dnsSuffix is the DNS suffix of a partition, as in the SDK's partitions.
func dnsSuffix(partition string) string {
	switch partition {
	case "aws-cn":
		return "amazonaws.com.cn"
	case "aws-eusc":
		return "amazonaws.eu"
	case "aws-iso":
		return "c2s.ic.gov"
	case "aws-iso-b":
		return "sc2s.sgov.gov"
	case "aws-iso-e":
		return "cloud.adc-e.uk"
	case "aws-iso-f":
		return "csp.hci.ic.gov"
	default:
		return "amazonaws.com"
	}
}

// vpcService names the VPC endpoint service for service ("ecr.api",
// "ecr.dkr", "sts", "s3") in the plan's region.
func (p *plan) vpcService(service string) string {
	prefix := "com.amazonaws."
	if p.partition == "aws-cn" {
		prefix = "cn.com.amazonaws."
	}
	return prefix + p.region + "." + service
}
