package releaseinfo_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docker/distribution"
	"github.com/docker/distribution/registry/client"
	imagev1 "github.com/openshift/api/image/v1"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// ReleaseImage and Provider have the shape of HyperShift's
// support/releaseinfo types.
type ReleaseImage struct {
	*imagev1.ImageStream `json:",inline"`
	StreamMetadata       any `json:"streamMetadata"`
}

type Provider interface {
	Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error)
}

// The whole wiring: the decorator is a Provider.
var _ Provider = &releaseinfo.Decorator[*ReleaseImage]{}

// The caller's pull secret: what <hcp-namespace>/pull-secret holds.
const callerPullSecret = `{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K29jbTpxdWF5LXJvYm90LXRva2Vu","email":"ops@example.com"}}}`

// recordingProvider is a leaf Provider over an in-memory registry: images it
// holds map to release names; errs forces an answer per pullspec. It keeps
// a copy of every call.
type recordingProvider struct {
	mu     sync.Mutex
	images map[string]string
	errs   map[string]error
	calls  []providerCall
}

type providerCall struct {
	image      string
	pullSecret []byte
}

func (p *recordingProvider) Lookup(_ context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, providerCall{image: image, pullSecret: bytes.Clone(pullSecret)})
	if err, ok := p.errs[image]; ok {
		return nil, err
	}
	name, ok := p.images[image]
	if !ok {
		return nil, manifestUnknown(image)
	}
	is := &imagev1.ImageStream{}
	is.Name = name
	return &ReleaseImage{ImageStream: is}, nil
}

func (p *recordingProvider) called() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, c := range p.calls {
		out = append(out, c.image)
	}
	return out
}

// registryError builds the error HyperShift's registry client (docker/
// distribution v2.8.3) returns for a registry answer.
func registryError(status int, body string) error {
	resp := &http.Response{
		StatusCode: status,
		Status:     fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Header:     http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Body:       io.NopCloser(strings.NewReader(body)),
	}
	return client.HandleErrorResponse(resp)
}

func manifestUnknown(image string) error {
	return fmt.Errorf("failed to get manifest for %s: %w", image,
		registryError(http.StatusNotFound, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"Requested image not found"}]}`))
}

// authFor returns the password of host's entry in a dockerconfigjson.
func authFor(t *testing.T, pullSecret []byte, host string) (string, bool) {
	t.Helper()
	var cfg struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	require.NoError(t, json.Unmarshal(pullSecret, &cfg))
	e, ok := cfg.Auths[host]
	if !ok {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(e.Auth)
	require.NoError(t, err)
	_, pass, _ := strings.Cut(string(raw), ":")
	return pass, true
}

func newKeychain(t *testing.T, f *fakeecr.ECR) *registryauth.Keychain {
	t.Helper()
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(f.ClientFactory))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })
	return kc
}

func TestDecorator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		never     bool
		registry  map[string]string // what the prober sees
		images    map[string]string // what the leaf provider can read
		errs      map[string]error  // leaf provider answers
		ecrErr    error
		noProbing bool

		wantRelease string
		wantCalls   []string
		wantErr     []error
		wantMessage string
	}{
		{
			name:        "When the mirror holds the release, it should read it there with ECR credentials added in memory",
			registry:    map[string]string{mirror4181: digest4181, release4181: digest4181},
			images:      map[string]string{mirror4181: "4.18.1", release4181: "4.18.1"},
			wantRelease: "4.18.1",
			wantCalls:   []string{mirror4181},
		},
		{
			name:        "When the mirror lags, it should read the release from quay.io without asking the leaf about the mirror",
			registry:    map[string]string{release4181: digest4181},
			images:      map[string]string{release4181: "4.18.1"},
			wantRelease: "4.18.1",
			wantCalls:   []string{release4181},
		},
		{
			name:        "When the leaf finds no manifest on a confirmed mirror, it should move on to the source",
			registry:    map[string]string{mirror4181: digest4181, release4181: digest4181},
			images:      map[string]string{release4181: "4.18.1"},
			wantRelease: "4.18.1",
			wantCalls:   []string{mirror4181, release4181},
		},
		{
			name:     "When the leaf is denied on the mirror, it should move on to the source",
			registry: map[string]string{mirror4181: digest4181, release4181: digest4181},
			images:   map[string]string{release4181: "4.18.1"},
			errs: map[string]error{mirror4181: registryError(http.StatusForbidden,
				`{"errors":[{"code":"DENIED","message":"User: arn:aws:sts::123456789012:assumed-role/worker is not authorized to perform: ecr:BatchGetImage"}]}`)},
			wantRelease: "4.18.1",
			wantCalls:   []string{mirror4181, release4181},
		},
		{
			name:        "When the leaf fails on a confirmed mirror for another reason, it should return that error and not contact quay.io",
			registry:    map[string]string{mirror4181: digest4181, release4181: digest4181},
			images:      map[string]string{release4181: "4.18.1"},
			errs:        map[string]error{mirror4181: errors.New("read tcp 10.0.0.5:41234->52.0.0.1:443: read: connection reset by peer")},
			wantCalls:   []string{mirror4181},
			wantMessage: "releaseinfo: looking up " + release4181 + " at " + mirror4181 + ": read tcp",
		},
		{
			name:        "When the policy forbids the source and the mirror lookup fails, it should fail with ErrNotMirrored without contacting quay.io",
			never:       true,
			registry:    map[string]string{mirror4181: digest4181, release4181: digest4181},
			images:      map[string]string{release4181: "4.18.1"},
			wantCalls:   []string{mirror4181},
			wantErr:     []error{releaseinfo.ErrNotMirrored, releaseinfo.ErrManifestUnknown},
			wantMessage: "release " + release4181 + " is not yet in " + mirrorRepo + " (lookup failed: failed to get manifest for " + mirror4181 + ": manifest unknown: Requested image not found) and the policy forbids contacting quay.io",
		},
		{
			name:        "When the policy forbids the source and the mirror lags, it should fail before any lookup",
			never:       true,
			registry:    map[string]string{release4181: digest4181},
			images:      map[string]string{release4181: "4.18.1"},
			wantErr:     []error{releaseinfo.ErrNotMirrored, releaseinfo.ErrManifestUnknown},
			wantMessage: "release " + release4181 + " is not yet in " + mirrorRepo + " (manifest unknown) and the policy forbids contacting quay.io",
		},
		{
			name:      "When ECR credentials cannot be had, it should fail with the IAM error and look nothing up",
			registry:  map[string]string{mirror4181: digest4181},
			images:    map[string]string{mirror4181: "4.18.1"},
			ecrErr:    fakeecr.AccessDeniedError(),
			wantErr:   []error{registryauth.ErrAccessDenied},
			wantCalls: nil,
		},
		{
			name:        "When there is no Resolver, it should let the leaf try each candidate in policy order",
			noProbing:   true,
			images:      map[string]string{release4181: "4.18.1"},
			wantRelease: "4.18.1",
			wantCalls:   []string{mirror4181, release4181},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New()
			if tc.ecrErr != nil {
				f.SetError("us-east-1", tc.ecrErr)
			}
			policy := releasePolicy(t, tc.never)
			leaf := &recordingProvider{images: tc.images, errs: tc.errs}
			d := &releaseinfo.Decorator[*ReleaseImage]{Delegate: leaf.Lookup, Keychain: newKeychain(t, f)}
			if tc.noProbing {
				d.Policy = policy
			} else {
				r, err := releaseinfo.NewResolver(policy, newMemProber(tc.registry))
				require.NoError(t, err)
				d.Resolver = r
			}
			var p Provider = d

			pullSecret := []byte(callerPullSecret)
			got, err := p.Lookup(t.Context(), release4181, pullSecret)

			require.Equal(t, callerPullSecret, string(pullSecret), "the caller's pull secret is never modified")
			require.Equal(t, tc.wantCalls, leaf.called())
			for _, c := range leaf.calls {
				pass, ok := authFor(t, c.pullSecret, ecrHost)
				require.True(t, ok, "the leaf gets ECR credentials")
				require.Equal(t, fakeecr.Password("us-east-1", 1), pass)
				quay, ok := authFor(t, c.pullSecret, "quay.io")
				require.True(t, ok, "the leaf keeps the caller's other credentials")
				require.Equal(t, "quay-robot-token", quay)
			}
			if tc.wantRelease == "" {
				require.Error(t, err)
				require.Nil(t, got)
				for _, want := range tc.wantErr {
					require.ErrorIs(t, err, want)
				}
				require.Contains(t, err.Error(), tc.wantMessage)
				require.NotContains(t, err.Error(), fakeecr.Password("us-east-1", 1))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantRelease, got.Name)
		})
	}
}

func TestDecoratorForgetsContradictedProbe(t *testing.T) {
	t.Parallel()
	prober := newMemProber(map[string]string{mirror4181: digest4181, release4181: digest4181})
	r, err := releaseinfo.NewResolver(releasePolicy(t, false), prober)
	require.NoError(t, err)
	leaf := &recordingProvider{images: map[string]string{release4181: "4.18.1"}}
	d := &releaseinfo.Decorator[*ReleaseImage]{Delegate: leaf.Lookup, Resolver: r}
	for range 2 {
		_, err := d.Lookup(t.Context(), release4181, []byte(callerPullSecret))
		require.NoError(t, err)
	}
	require.Equal(t, 2, prober.callsFor(mirror4181),
		"When a lookup contradicts a cached probe, it should probe the mirror again next time")
}

func TestDecoratorMisuse(t *testing.T) {
	t.Parallel()
	r, err := releaseinfo.NewResolver(releasePolicy(t, false), newMemProber(nil))
	require.NoError(t, err)
	leaf := &recordingProvider{}
	tests := []struct {
		name    string
		d       *releaseinfo.Decorator[*ReleaseImage]
		wantErr string
	}{
		{
			name:    "When there is no Delegate, it should fail",
			d:       &releaseinfo.Decorator[*ReleaseImage]{Resolver: r},
			wantErr: "no Delegate",
		},
		{
			name:    "When Policy differs from the Resolver's, it should fail",
			d:       &releaseinfo.Decorator[*ReleaseImage]{Delegate: leaf.Lookup, Resolver: r, Policy: releasePolicy(t, true)},
			wantErr: "differs from its Resolver's policy",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.d.Lookup(t.Context(), release4181, nil)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
	require.Empty(t, leaf.called())
}

func TestDefaultRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "When the registry says MANIFEST_UNKNOWN, it should be retryable", err: manifestUnknown(mirror4181), want: true},
		{name: "When the registry says NAME_UNKNOWN, it should be retryable", err: registryError(http.StatusNotFound,
			`{"errors":[{"code":"NAME_UNKNOWN","message":"The repository with name 'ocp4/openshift4' does not exist in the registry with id '123456789012'"}]}`), want: true},
		{name: "When the registry says UNAUTHORIZED, it should be retryable", err: registryError(http.StatusUnauthorized, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`), want: true},
		{name: "When the registry says DENIED, it should be retryable", err: registryError(http.StatusForbidden, `{"errors":[{"code":"DENIED","message":"Your authorization token has expired. Reauthenticate and try again."}]}`), want: true},
		{name: "When a 401 has an unparsable body, it should be retryable", err: registryError(http.StatusUnauthorized, `not json`), want: true},
		{name: "When distribution reports an unknown manifest revision, it should be retryable", err: distribution.ErrManifestUnknownRevision{Name: "ocp4/openshift4", Revision: digest4181}, want: true},
		{name: "When a message carries HTTP 404, it should be retryable", err: errors.New("error parsing HTTP 404 response body: unexpected end of JSON input"), want: true},
		{name: "When a message carries 403 Forbidden, it should be retryable", err: errors.New("GET https://quay.io/v2/: unexpected status code 403 Forbidden"), want: true},
		{name: "When the error wraps ErrManifestUnknown, it should be retryable", err: fmt.Errorf("reading: %w", releaseinfo.ErrManifestUnknown), want: true},
		{name: "When the error wraps ErrUnauthorized, it should be retryable", err: fmt.Errorf("reading: %w", releaseinfo.ErrUnauthorized), want: true},
		{name: "When the registry throttles, it should not be retryable", err: registryError(http.StatusTooManyRequests, `{"errors":[{"code":"TOOMANYREQUESTS","message":"Rate exceeded"}]}`), want: false},
		{name: "When the registry fails with 503, it should not be retryable", err: &client.UnexpectedHTTPStatusError{Status: "503 Service Unavailable"}, want: false},
		{name: "When the network fails, it should not be retryable", err: errors.New("dial tcp: lookup quay.io: no such host"), want: false},
		{name: "When the deadline passes, it should not be retryable even if the message says denied", err: fmt.Errorf("denied: %w", context.DeadlineExceeded), want: false},
		{name: "When the caller cancels, it should not be retryable", err: context.Canceled, want: false},
		{name: "When a digest happens to contain 404, it should not be retryable", err: errors.New("layer sha256:0404a404 is corrupt"), want: false},
		{name: "When the error is nil, it should not be retryable", err: nil, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, releaseinfo.DefaultRetryable(tc.err), "%v", tc.err)
		})
	}
}

func TestCandidateRefs(t *testing.T) {
	t.Parallel()
	refs, err := releaseinfo.CandidateRefs(releasePolicy(t, false), release4181, release4181, "quay.io/openshift-release-dev/ocp-v4.0-art-dev@"+digest4182)
	require.NoError(t, err)
	require.Equal(t, []string{mirror4181, release4181, mirror4182, "quay.io/openshift-release-dev/ocp-v4.0-art-dev@" + digest4182}, refs,
		"When images share mirrors, it should list every candidate once, in order")
	_, err = releaseinfo.CandidateRefs(releasePolicy(t, false), "quay.io/openshift-release-dev/ocp-release@sha256:short")
	require.ErrorIs(t, err, mirrorpolicy.ErrInvalidReference)
}

func TestDecoratorPassesUnmirroredImagesThrough(t *testing.T) {
	t.Parallel()
	const ci = "registry.ci.openshift.org/ocp/release:4.18.0-0.nightly-2026-07-30-101010"
	prober := newMemProber(nil)
	r, err := releaseinfo.NewResolver(releasePolicy(t, false), prober)
	require.NoError(t, err)
	notFound := manifestUnknown(ci)
	leaf := &recordingProvider{errs: map[string]error{ci: notFound}}
	d := &releaseinfo.Decorator[*ReleaseImage]{Delegate: leaf.Lookup, Resolver: r}
	_, err = d.Lookup(t.Context(), ci, []byte(callerPullSecret))
	require.Same(t, notFound, err, "When no mirror applies, it should return the leaf's answer unchanged")
	require.Equal(t, []string{ci}, leaf.called())
	require.Zero(t, prober.total.Load(), "and probe nothing")
}
