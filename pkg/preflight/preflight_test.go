package preflight_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/pkg/preflight"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

const (
	ecrHost       = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	mirrorRepo    = ecrHost + "/ocp4/openshift4"
	releaseRepo   = "quay.io/openshift-release-dev/ocp-release"
	componentRepo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	releaseTag    = "4.10.3-x86_64"

	apiHost = "api.ecr.us-east-1.amazonaws.com"
	s3Host  = "prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com"
	stsHost = "sts.us-east-1.amazonaws.com"
)

// payload is built once: Build is deterministic and its images immutable.
var payload = sync.OnceValues(func() (*releasepayload.Payload, error) {
	return releasepayload.Build(releasepayload.WithVersion("4.10.3"), releasepayload.WithComponents(componentRepo))
})

// world is a zero-egress cluster's view: the ECR API (fakeecr behind a
// real keychain), the ECR mirror holding the release and its components
// (copied from a quay.io fake as `oc adm release mirror` does), loopback
// listeners for the API, S3 and STS endpoints, and a VPC resolver.
type world struct {
	ecrAPI   *fakeecr.ECR
	quay     *fakeregistry.Registry
	ecr      *fakeregistry.Registry
	kc       *registryauth.Keychain
	payload  *releasepayload.Payload
	release  string // quay.io digest pullspec
	listen   map[string]string
	down     map[string]bool
	dnsAddrs []string
	refused  string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	p, err := payload()
	require.NoError(t, err)
	w := &world{payload: p, ecrAPI: fakeecr.New(), listen: map[string]string{}, down: map[string]bool{},
		dnsAddrs: []string{"10.0.12.34", "10.0.45.67"}}
	w.quay = fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
	w.ecr = fakeregistry.New(t, fakeregistry.WithAuthenticator(w.ecrAPI.Authenticator()))
	m, err := fakeregistry.MirrorRelease(t.Context(), w.quay, w.ecr, p) // releaseRepo:releaseTag -> mirrorRepo
	require.NoError(t, err)
	w.release = m.Release
	w.kc, err = registryauth.NewKeychain(registryauth.WithClientFactory(w.ecrAPI.ClientFactory))
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.kc.Close() })

	for _, host := range []string{apiHost, s3Host, stsHost} {
		w.listen[host] = listen(t)
	}
	// A port nobody listens on: dialing it is refused, as a missing VPC
	// endpoint's security group or route refuses.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	w.refused = l.Addr().String()
	require.NoError(t, l.Close())
	return w
}

// listen accepts and closes connections on 127.0.0.1 until the test ends.
func listen(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return l.Addr().String()
}

func (w *world) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != "443" {
		return nil, fmt.Errorf("unexpected address %q", addr)
	}
	target, ok := w.listen[host]
	if !ok || w.down[host] {
		target = w.refused
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

func (w *world) lookupHost(_ context.Context, host string) ([]string, error) {
	if host != ecrHost || w.dnsAddrs == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return w.dnsAddrs, nil
}

func (w *world) config(t *testing.T) preflight.Config {
	t.Helper()
	rules, err := mirrorpolicy.ECRReleaseMirror(mirrorRepo)
	require.NoError(t, err)
	for i := range rules {
		rules[i].NeverContactSource = true
	}
	policy, err := mirrorpolicy.New(rules...)
	require.NoError(t, err)
	return preflight.Config{
		Release:    w.release,
		Policy:     policy,
		Keychain:   w.kc,
		UseSTS:     true,
		Transport:  fakeregistry.Transport(w.quay, w.ecr),
		Dialer:     w.dial,
		LookupHost: w.lookupHost,
		Timeout:    5 * time.Second,
	}
}

func componentPullspec(t *testing.T, p *releasepayload.Payload, tag string) string {
	t.Helper()
	for _, tr := range p.ImageStream.Spec.Tags {
		if tr.Name == tag {
			return tr.From.Name
		}
	}
	t.Fatalf("no tag %s", tag)
	return ""
}

func digestOf(t *testing.T, pullspec string) string {
	t.Helper()
	_, d, ok := strings.Cut(pullspec, "@")
	require.True(t, ok, pullspec)
	return d
}

func statuses(r *preflight.Report) map[string]preflight.Status {
	m := map[string]preflight.Status{}
	for _, c := range r.Checks {
		m[c.Name] = c.Status
	}
	return m
}

func check(t *testing.T, r *preflight.Report, name string) preflight.Check {
	t.Helper()
	c, ok := r.Check(name)
	require.True(t, ok, "no check %s", name)
	return c
}

var allNames = []string{
	preflight.CheckAPIEndpoint, preflight.CheckRegistryDNS, preflight.CheckS3LayerBucket, preflight.CheckSTSEndpoint,
	preflight.CheckAuthorizationToken, preflight.CheckReleaseInMirror, preflight.CheckComponentsInMirror,
}

func TestRun(t *testing.T) {
	t.Parallel()
	const (
		pass = preflight.StatusPass
		fail = preflight.StatusFail
		warn = preflight.StatusWarn
		skip = preflight.StatusSkip
	)
	tests := []struct {
		name   string
		setup  func(t *testing.T, w *world, cfg *preflight.Config)
		want   map[string]preflight.Status
		verify func(t *testing.T, w *world, r *preflight.Report)
	}{
		{
			name: "When the VPC endpoints, the token and every image are in place, it should pass every check",
			want: map[string]preflight.Status{preflight.CheckAPIEndpoint: pass, preflight.CheckRegistryDNS: pass,
				preflight.CheckS3LayerBucket: pass, preflight.CheckSTSEndpoint: pass, preflight.CheckAuthorizationToken: pass,
				preflight.CheckReleaseInMirror: pass, preflight.CheckComponentsInMirror: pass},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.True(t, r.OK())
				require.Equal(t, mirrorRepo, r.Mirror)
				require.Equal(t, "us-east-1", r.Region)
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.release), r.Pullspec)
				require.Len(t, w.payload.Components, r.Components)
				require.Empty(t, r.Missing)
				require.Empty(t, r.Unchecked)
				require.Contains(t, check(t, r, preflight.CheckAPIEndpoint).Detail, "connected to "+apiHost+":443 (127.0.0.1:")
				require.Equal(t, ecrHost+" resolves to 10.0.12.34, 10.0.45.67 (private)", check(t, r, preflight.CheckRegistryDNS).Detail)
				require.Equal(t, fmt.Sprintf("all %d component images are in %s", r.Components, mirrorRepo),
					check(t, r, preflight.CheckComponentsInMirror).Detail)
				require.Zero(t, w.quay.Stats(), "quay.io is never contacted")
				require.Zero(t, w.ecr.Stats().S3WithAuthorization)
				require.Equal(t, 1, w.ecrAPI.Calls("us-east-1"), "one token serves every check")
				t.Logf("components-in-mirror: %d images in %v (%d ECR pings, %d manifest HEADs)",
					r.Components, check(t, r, preflight.CheckComponentsInMirror).Duration,
					w.ecr.Stats().Ping, w.ecr.Stats().ManifestHead)
			},
		},
		{
			name: "When one component is missing from the mirror, it should fail components-in-mirror listing exactly it",
			setup: func(t *testing.T, w *world, _ *preflight.Config) {
				w.ecr.Delete(t, mirrorRepo+"@"+digestOf(t, componentPullspec(t, w.payload, "machine-config-operator")))
			},
			want: map[string]preflight.Status{preflight.CheckReleaseInMirror: pass, preflight.CheckComponentsInMirror: fail},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.False(t, r.OK())
				missing := mirrorRepo + "@" + digestOf(t, componentPullspec(t, w.payload, "machine-config-operator"))
				require.Equal(t, []string{missing}, r.Missing)
				c := check(t, r, preflight.CheckComponentsInMirror)
				require.Equal(t, fmt.Sprintf("1 of %d component images are not in the mirror", r.Components), c.Detail)
				require.Equal(t, "copy the release again: oc adm release mirror --from="+w.release+" --to="+mirrorRepo+
					" (an interrupted or filtered copy leaves components behind)", c.Hint)
				require.ErrorIs(t, c.Err, releaseinfo.ErrNotMirrored)
			},
		},
		{
			name: "When a component cannot be asked, it should fail listing it as unchecked, not missing",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) {
				broken := digestOf(t, componentPullspec(t, w.payload, "cli"))
				base := cfg.Transport
				cfg.Transport = roundTripFunc(func(req *http.Request) (*http.Response, error) {
					if strings.HasSuffix(req.URL.Path, "/manifests/"+broken) {
						return nil, errors.New("connection reset by peer")
					}
					return base.RoundTrip(req)
				})
			},
			want: map[string]preflight.Status{preflight.CheckComponentsInMirror: fail},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.Empty(t, r.Missing)
				require.Equal(t, []string{mirrorRepo + "@" + digestOf(t, componentPullspec(t, w.payload, "cli"))}, r.Unchecked)
				c := check(t, r, preflight.CheckComponentsInMirror)
				require.Contains(t, c.Detail, "1 could not be checked: ")
				require.Contains(t, c.Detail, "connection reset by peer")
				require.Contains(t, c.Hint, "retry")
				require.NotErrorIs(t, c.Err, releaseinfo.ErrNotMirrored)
			},
		},
		{
			name: "When the policy mirrors the release but not its components, it should list every component as missing",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) {
				policy, err := mirrorpolicy.New(mirrorpolicy.Rule{Source: releaseRepo, Mirrors: []string{mirrorRepo}, NeverContactSource: true})
				require.NoError(t, err)
				cfg.Policy = policy
			},
			want: map[string]preflight.Status{preflight.CheckReleaseInMirror: pass, preflight.CheckComponentsInMirror: fail},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.Len(t, r.Missing, r.Components)
				require.True(t, strings.HasPrefix(r.Missing[0], componentRepo+"@sha256:"), r.Missing[0])
				c := check(t, r, preflight.CheckComponentsInMirror)
				require.Contains(t, c.Detail, fmt.Sprintf("%d of %d component images are not in the mirror; %d sent off ECR by the policy",
					r.Components, r.Components, r.Components))
				require.Equal(t, "add a mirror rule for "+componentRepo, c.Hint)
				require.Zero(t, w.quay.Stats(), "quay.io is never contacted")
			},
		},
		{
			name: "When IAM denies GetAuthorizationToken, it should fail with the IAM hint and skip the registry checks",
			setup: func(t *testing.T, w *world, _ *preflight.Config) {
				w.ecrAPI.SetError("us-east-1", fakeecr.AccessDeniedError())
			},
			want: map[string]preflight.Status{preflight.CheckAPIEndpoint: pass, preflight.CheckAuthorizationToken: fail,
				preflight.CheckReleaseInMirror: skip, preflight.CheckComponentsInMirror: skip},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				c := check(t, r, preflight.CheckAuthorizationToken)
				require.ErrorIs(t, c.Err, registryauth.ErrAccessDenied)
				require.Equal(t, `allow "ecr:GetAuthorizationToken" on Resource "*" for this identity (and the ECR read actions on the repositories)`, c.Hint)
				require.True(t, strings.HasPrefix(c.Detail, "ecr: access denied getting a token for "+ecrHost+" (region us-east-1): "), c.Detail)
				require.NotContains(t, c.Detail, c.Hint, "the hint has its own line")
				require.Equal(t, "not run: get-authorization-token failed", check(t, r, preflight.CheckReleaseInMirror).Detail)
				require.Equal(t, "not run: get-authorization-token failed", check(t, r, preflight.CheckComponentsInMirror).Detail)
				require.Zero(t, w.ecr.Stats().ManifestHead, "the registry is not asked without a token")
			},
		},
		{
			name:  "When the ECR API endpoint refuses connections, it should fail naming the ecr.api VPC endpoint",
			setup: func(t *testing.T, w *world, _ *preflight.Config) { w.down[apiHost] = true },
			want: map[string]preflight.Status{preflight.CheckAPIEndpoint: fail, preflight.CheckRegistryDNS: pass,
				preflight.CheckS3LayerBucket: pass, preflight.CheckAuthorizationToken: skip,
				preflight.CheckReleaseInMirror: skip, preflight.CheckComponentsInMirror: skip},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				c := check(t, r, preflight.CheckAPIEndpoint)
				require.Equal(t, "cannot connect to "+apiHost+":443: connect: connection refused", c.Detail)
				require.Contains(t, c.Hint, "create the interface endpoint com.amazonaws.us-east-1.ecr.api")
				var opErr *net.OpError
				require.ErrorAs(t, c.Err, &opErr)
				require.Zero(t, w.ecrAPI.TotalCalls(), "no token call that would only time out")
				require.Equal(t, "not run: ecr-api-endpoint failed", check(t, r, preflight.CheckComponentsInMirror).Detail)
			},
		},
		{
			name: "When a custom VPC endpoint URL is given, it should check that host and port",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) {
				const vpce = "vpce-0abc123-xyz.api.ecr.us-east-1.vpce.amazonaws.com"
				w.listen[vpce] = w.listen[apiHost]
				w.down[apiHost] = true
				cfg.APIEndpoint = "https://" + vpce
			},
			want: map[string]preflight.Status{preflight.CheckAPIEndpoint: pass, preflight.CheckComponentsInMirror: pass},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.Contains(t, check(t, r, preflight.CheckAPIEndpoint).Detail, "vpce-0abc123-xyz.api.ecr.us-east-1.vpce.amazonaws.com:443")
			},
		},
		{
			name: "When the release is not yet in the mirror, it should fail with the mirror, the reason and the mirror command",
			setup: func(t *testing.T, w *world, _ *preflight.Config) {
				w.ecr.Delete(t, mirrorRepo+"@"+digestOf(t, w.release))
			},
			want: map[string]preflight.Status{preflight.CheckAuthorizationToken: pass, preflight.CheckReleaseInMirror: fail,
				preflight.CheckComponentsInMirror: skip},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				c := check(t, r, preflight.CheckReleaseInMirror)
				require.ErrorIs(t, c.Err, releaseinfo.ErrNotMirrored)
				require.ErrorIs(t, c.Err, releaseinfo.ErrManifestUnknown)
				require.Equal(t, "release "+w.release+" is not yet in "+mirrorRepo+" (manifest unknown) and the policy forbids contacting quay.io", c.Detail)
				require.Equal(t, "copy it into the mirror: oc adm release mirror --from="+w.release+" --to="+mirrorRepo+
					" (new releases reach quay.io before their mirror)", c.Hint)
				require.Empty(t, r.Pullspec)
			},
		},
		{
			name: "When the mirror repository is not readable, it should fail with the repository policy hint",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) {
				policy, err := mirrorpolicy.New(mirrorpolicy.Rule{Source: releaseRepo, Mirrors: []string{ecrHost + "/ocp4/missing"}})
				require.NoError(t, err)
				cfg.Policy = policy
				w.ecr.FailNext(fakeregistry.KindManifestHead, 1, 403)
			},
			want: map[string]preflight.Status{preflight.CheckReleaseInMirror: fail},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				c := check(t, r, preflight.CheckReleaseInMirror)
				require.ErrorIs(t, c.Err, releaseinfo.ErrUnauthorized)
				require.Contains(t, c.Detail, "(unauthorized (on ECR: no such repository, or not readable))")
				require.Contains(t, c.Hint, "allows ecr:BatchGetImage and ecr:GetDownloadUrlForLayer")
			},
		},
		{
			name: "When the registry resolves to public addresses, it should warn and still be OK",
			setup: func(t *testing.T, w *world, _ *preflight.Config) {
				w.dnsAddrs = []string{"10.0.12.34", "52.46.128.11"}
			},
			want: map[string]preflight.Status{preflight.CheckRegistryDNS: warn, preflight.CheckComponentsInMirror: pass},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.True(t, r.OK())
				c := check(t, r, preflight.CheckRegistryDNS)
				require.Contains(t, c.Detail, "(public: 52.46.128.11; pulls would leave the VPC)")
				require.Contains(t, c.Hint, "com.amazonaws.us-east-1.ecr.dkr with private DNS enabled")
			},
		},
		{
			name: "When the cluster is allowed internet egress, it should accept public registry addresses",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) {
				w.dnsAddrs = []string{"52.46.128.11"}
				cfg.AllowPublic = true
			},
			want: map[string]preflight.Status{preflight.CheckRegistryDNS: pass},
		},
		{
			name:  "When the registry host does not resolve, it should fail registry-dns and skip the registry checks",
			setup: func(t *testing.T, w *world, _ *preflight.Config) { w.dnsAddrs = nil },
			want: map[string]preflight.Status{preflight.CheckRegistryDNS: fail, preflight.CheckAuthorizationToken: pass,
				preflight.CheckReleaseInMirror: skip, preflight.CheckComponentsInMirror: skip},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.Equal(t, "cannot resolve "+ecrHost+": DNS: no such host", check(t, r, preflight.CheckRegistryDNS).Detail)
			},
		},
		{
			name:  "When the S3 layer bucket is unreachable, it should fail with the gateway endpoint hint and skip the component checks",
			setup: func(t *testing.T, w *world, _ *preflight.Config) { w.down[s3Host] = true },
			want: map[string]preflight.Status{preflight.CheckS3LayerBucket: fail, preflight.CheckReleaseInMirror: pass,
				preflight.CheckComponentsInMirror: skip},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.Contains(t, check(t, r, preflight.CheckS3LayerBucket).Hint, "S3 gateway endpoint (com.amazonaws.us-east-1.s3)")
			},
		},
		{
			name: "When no IRSA or assumed role is used, it should skip sts-endpoint without blocking the token check",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) {
				cfg.UseSTS = false
				w.down[stsHost] = true
			},
			want: map[string]preflight.Status{preflight.CheckSTSEndpoint: skip, preflight.CheckAuthorizationToken: pass,
				preflight.CheckComponentsInMirror: pass},
			verify: func(t *testing.T, w *world, r *preflight.Report) { require.True(t, r.OK()) },
		},
		{
			name:  "When STS is unreachable under IRSA, it should fail naming the sts VPC endpoint and skip the token check",
			setup: func(t *testing.T, w *world, _ *preflight.Config) { w.down[stsHost] = true },
			want:  map[string]preflight.Status{preflight.CheckSTSEndpoint: fail, preflight.CheckAuthorizationToken: skip},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				require.Contains(t, check(t, r, preflight.CheckSTSEndpoint).Hint, "com.amazonaws.us-east-1.sts")
			},
		},
		{
			name:  "When the release is given by tag under digest-only mirrors, it should find the tag in the mirror and warn to pin the digest",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) { cfg.Release = releaseRepo + ":" + releaseTag },
			want:  map[string]preflight.Status{preflight.CheckReleaseInMirror: warn, preflight.CheckComponentsInMirror: pass},
			verify: func(t *testing.T, w *world, r *preflight.Report) {
				c := check(t, r, preflight.CheckReleaseInMirror)
				require.Equal(t, "tag "+releaseTag+" found as "+mirrorRepo+"@"+digestOf(t, w.release)+
					", but the policy mirrors this release by digest only: pulls by tag go to quay.io", c.Detail)
				require.Equal(t, "give the release by digest: "+w.release, c.Hint)
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.release), r.Pullspec)
			},
		},
		{
			name:  "When progress is requested, it should report the component checks and end with the total",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) { cfg.Progress = &bytes.Buffer{} },
			want:  map[string]preflight.Status{preflight.CheckComponentsInMirror: pass},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			cfg := w.config(t)
			if tc.setup != nil {
				tc.setup(t, w, &cfg)
			}
			w.ecr.Reset()
			r, err := preflight.Run(t.Context(), cfg)
			require.NoError(t, err)
			var names []string
			for _, c := range r.Checks {
				names = append(names, c.Name)
			}
			require.Equal(t, allNames, names, "every check, in order")
			got := statuses(r)
			for name, want := range tc.want {
				require.Equal(t, want, got[name], "%s: %+v", name, check(t, r, name))
			}
			if tc.verify != nil {
				tc.verify(t, w, r)
			}
			if buf, ok := cfg.Progress.(*bytes.Buffer); ok {
				lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
				require.Equal(t, "components-in-mirror: reading the release metadata of "+r.Pullspec, lines[0])
				require.Equal(t, fmt.Sprintf("components-in-mirror: checked %d/%d", r.Components, r.Components), lines[len(lines)-1])
			}
			assertNoToken(t, w, r)
		})
	}
}

// assertNoToken checks that no password the fake ECR API issued appears
// in the report, its text or its JSON.
func assertNoToken(t *testing.T, w *world, r *preflight.Report) {
	t.Helper()
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	js, err := json.Marshal(r)
	require.NoError(t, err)
	for n := 1; n <= w.ecrAPI.Calls("us-east-1"); n++ {
		pw := fakeecr.Password("us-east-1", n)
		require.NotContains(t, text.String(), pw)
		require.NotContains(t, string(js), pw)
		for _, c := range r.Checks {
			if c.Err != nil {
				require.NotContains(t, c.Err.Error(), pw)
			}
		}
	}
}

func TestRunInput(t *testing.T) {
	t.Parallel()
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(fakeecr.New().ClientFactory))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })
	rules, err := mirrorpolicy.ECRReleaseMirror(mirrorRepo)
	require.NoError(t, err)
	policy, err := mirrorpolicy.New(rules...)
	require.NoError(t, err)
	release := releaseRepo + "@sha256:" + strings.Repeat("a", 64)
	tests := []struct {
		name string
		cfg  preflight.Config
		want error
		text string
	}{
		{
			name: "When the release is not an image reference, it should fail with ErrInvalidRelease",
			cfg:  preflight.Config{Release: "quay.io/Openshift/ocp-release:4.10.3", Policy: policy, Keychain: kc},
			want: preflight.ErrInvalidRelease,
		},
		{
			name: "When the policy sends the release to no ECR registry, it should fail with ErrNoECRMirror",
			cfg:  preflight.Config{Release: "quay.io/other/release@sha256:" + strings.Repeat("a", 64), Policy: policy, Keychain: kc},
			want: preflight.ErrNoECRMirror,
			text: "preflight: Policy sends quay.io/other/release@sha256:" + strings.Repeat("a", 64) + " to no Amazon ECR registry",
		},
		{
			name: "When there is no policy and the release is on quay.io, it should fail with ErrNoECRMirror",
			cfg:  preflight.Config{Release: release, Keychain: kc},
			want: preflight.ErrNoECRMirror,
		},
		{
			name: "When no keychain is given, it should fail with ErrInvalidConfig",
			cfg:  preflight.Config{Release: release, Policy: policy},
			want: preflight.ErrInvalidConfig,
			text: "preflight: Keychain is required",
		},
		{
			name: "When the API endpoint is not a URL, it should fail without echoing its credentials",
			cfg:  preflight.Config{Release: release, Policy: policy, Keychain: kc, APIEndpoint: "vpce://user:secret@vpce-1.example"},
			want: preflight.ErrInvalidConfig,
			text: `preflight: APIEndpoint "vpce://vpce-1.example" is not an http(s) URL with a host`,
		},
		{
			name: "When the region is not an AWS region, it should fail with ErrInvalidConfig",
			cfg:  preflight.Config{Release: release, Policy: policy, Keychain: kc, Region: "moon-1"},
			want: preflight.ErrInvalidConfig,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := preflight.Run(t.Context(), tc.cfg)
			require.Nil(t, r)
			require.ErrorIs(t, err, tc.want)
			var ce *preflight.ConfigError
			require.ErrorAs(t, err, &ce)
			if tc.text != "" {
				require.Equal(t, tc.text, err.Error())
			}
			for _, other := range []error{preflight.ErrInvalidRelease, preflight.ErrNoECRMirror, preflight.ErrInvalidConfig} {
				if other != tc.want {
					require.NotErrorIs(t, err, other)
				}
			}
		})
	}
}

var addrRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

func TestReportText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, w *world, cfg *preflight.Config)
		want  func(w *world, r *preflight.Report) string
	}{
		{
			name:  "When every check passes, it should print one line per check and an OK verdict",
			setup: func(t *testing.T, w *world, cfg *preflight.Config) { cfg.UseSTS = false },
			want: func(w *world, r *preflight.Report) string {
				return `release: ` + w.release + `
mirror:  ` + mirrorRepo + ` (us-east-1)
found:   ` + r.Pullspec + `

PASS  ecr-api-endpoint         connected to ` + apiHost + `:443 (ADDR)
PASS  registry-dns             ` + ecrHost + ` resolves to 10.0.12.34, 10.0.45.67 (private)
PASS  s3-layer-bucket          connected to ` + s3Host + `:443 (ADDR)
SKIP  sts-endpoint             not needed: no web identity (IRSA) or assumed role configured
PASS  get-authorization-token  ` + check(t, r, preflight.CheckAuthorizationToken).Detail + `
PASS  release-in-mirror        found as ` + r.Pullspec + `
PASS  components-in-mirror     all ` + fmt.Sprint(r.Components) + ` component images are in ` + mirrorRepo + `

OK: the release can be pulled from ` + mirrorRepo + `
`
			},
		},
		{
			name: "When the token is denied and components are missing, it should print hints, skips and a FAIL verdict",
			setup: func(t *testing.T, w *world, _ *preflight.Config) {
				w.ecrAPI.SetError("us-east-1", fakeecr.AccessDeniedError())
				w.dnsAddrs = []string{"52.46.128.11"}
			},
			want: func(w *world, r *preflight.Report) string {
				tok := check(t, r, preflight.CheckAuthorizationToken)
				dns := check(t, r, preflight.CheckRegistryDNS)
				return `release: ` + w.release + `
mirror:  ` + mirrorRepo + ` (us-east-1)

PASS  ecr-api-endpoint         connected to ` + apiHost + `:443 (ADDR)
WARN  registry-dns             ` + ecrHost + ` resolves to 52.46.128.11 (public: 52.46.128.11; pulls would leave the VPC)
                               hint: ` + dns.Hint + `
PASS  s3-layer-bucket          connected to ` + s3Host + `:443 (ADDR)
PASS  sts-endpoint             connected to ` + stsHost + `:443 (ADDR)
FAIL  get-authorization-token  ` + tok.Detail + `
                               hint: allow "ecr:GetAuthorizationToken" on Resource "*" for this identity (and the ECR read actions on the repositories)
SKIP  release-in-mirror        not run: get-authorization-token failed
SKIP  components-in-mirror     not run: get-authorization-token failed

FAIL: 1 check failed, 1 warning
`
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			cfg := w.config(t)
			tc.setup(t, w, &cfg)
			r, err := preflight.Run(t.Context(), cfg)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, r.WriteText(&buf))
			require.Equal(t, tc.want(w, r), addrRE.ReplaceAllString(buf.String(), "ADDR"))
		})
	}
}

func TestReportTextListsMissing(t *testing.T) {
	t.Parallel()
	r := &preflight.Report{Release: releaseRepo + "@sha256:" + strings.Repeat("a", 64), Mirror: mirrorRepo, Region: "us-east-1",
		Components: 150, Checks: []preflight.Check{{Name: preflight.CheckComponentsInMirror, Status: preflight.StatusFail,
			Detail: "23 of 150 component images are not in the mirror", Hint: "copy the release again"}}}
	for i := range 23 {
		r.Missing = append(r.Missing, fmt.Sprintf("%s@sha256:%064d", mirrorRepo, i))
	}
	var buf bytes.Buffer
	require.NoError(t, r.WriteText(&buf))
	out := buf.String()
	require.Contains(t, out, "\ncomponents missing from the mirror (23 of 150):\n  "+r.Missing[0]+"\n")
	require.Contains(t, out, "\n  "+r.Missing[19]+"\n  ... and 3 more\n")
	require.NotContains(t, out, r.Missing[20])
	require.True(t, strings.HasSuffix(out, "\nFAIL: 1 check failed\n"), out)
}

func TestReportJSON(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfg := w.config(t)
	w.ecr.Delete(t, mirrorRepo+"@"+digestOf(t, componentPullspec(t, w.payload, "cli")))
	r, err := preflight.Run(t.Context(), cfg)
	require.NoError(t, err)

	js, err := json.Marshal(r)
	require.NoError(t, err)
	var back preflight.Report
	require.NoError(t, json.Unmarshal(js, &back))
	want := *r
	want.Checks = slices.Clone(r.Checks)
	for i := range want.Checks {
		want.Checks[i].Duration = want.Checks[i].Duration.Truncate(time.Millisecond)
		want.Checks[i].Err = nil
	}
	require.Equal(t, want, back)

	// Field names are the contract of `-o json`.
	var raw map[string]any
	require.NoError(t, json.Unmarshal(js, &raw))
	require.ElementsMatch(t, []string{"release", "mirror", "region", "pullspec", "checks", "components", "missing", "ok"}, keys(raw))
	require.Equal(t, false, raw["ok"])
	first := raw["checks"].([]any)[0].(map[string]any)
	require.ElementsMatch(t, []string{"name", "status", "detail", "durationMs"}, keys(first))
	require.Equal(t, "ecr-api-endpoint", first["name"])
	require.Equal(t, "pass", first["status"])
	failed := raw["checks"].([]any)[6].(map[string]any)
	require.Equal(t, "fail", failed["status"])
	require.Contains(t, failed, "hint")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfg := w.config(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, err := preflight.Run(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, r, "the partial report comes back with the error")
	require.False(t, r.OK())
	require.True(t, errors.Is(check(t, r, preflight.CheckAPIEndpoint).Err, context.Canceled))
}

func TestRunManifestList(t *testing.T) {
	t.Parallel()
	multi, err := releasepayload.Build(releasepayload.WithVersion("4.10.3"), releasepayload.WithComponents(componentRepo),
		releasepayload.WithArchitectures("amd64", "arm64"), releasepayload.WithBaseLayers(1024))
	require.NoError(t, err)
	tests := []struct {
		name     string
		platform *v1.Platform
		want     preflight.Status
		detail   string
	}{
		{
			name:     "When the release is a manifest list holding the platform, it should pin the list and check its image",
			platform: &v1.Platform{OS: "linux", Architecture: "arm64"},
			want:     preflight.StatusPass,
		},
		{
			name:     "When the manifest list lacks the platform, it should fail release-in-mirror",
			platform: &v1.Platform{OS: "linux", Architecture: "s390x"},
			want:     preflight.StatusFail,
			detail:   "(manifest unknown)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			m, err := fakeregistry.MirrorRelease(t.Context(), w.quay, w.ecr, multi) // releaseRepo:4.10.3-multi -> mirrorRepo
			require.NoError(t, err)
			w.release = m.Release
			cfg := w.config(t)
			cfg.Platform = tc.platform
			r, err := preflight.Run(t.Context(), cfg)
			require.NoError(t, err)
			c := check(t, r, preflight.CheckReleaseInMirror)
			require.Equal(t, tc.want, c.Status, c.Detail)
			require.Contains(t, c.Detail, tc.detail)
			if tc.want == preflight.StatusPass {
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.release), r.Pullspec, "pinned to the list, as HyperShift pins releases")
				require.Equal(t, preflight.StatusPass, check(t, r, preflight.CheckComponentsInMirror).Status)
				require.Len(t, multi.Components, r.Components)
			}
		})
	}
}
