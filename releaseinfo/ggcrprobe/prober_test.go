package ggcrprobe_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/releaseinfo/ggcrprobe"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

const (
	mirrorRepo = fakeregistry.DefaultHost + "/ocp4/openshift4"
	sourceRepo = "quay.io/openshift-release-dev/ocp-release"
	absent     = "sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"
)

// noRetry keeps 5xx tests fast: ggcr would otherwise back off for seconds.
var noRetry = ggcrprobe.WithRemoteOptions(remote.WithRetryBackoff(remote.Backoff{Steps: 1}))

type setup struct {
	ecrAPI *fakeecr.ECR
	ecr    *fakeregistry.Registry
	quay   *fakeregistry.Registry
	kc     authn.Keychain
	single string // digest pullspec of a single-arch release on the mirror
	index  string // digest pullspec of a two-arch release on the mirror
	arm64  string // digest of the arm64 image of index
}

func newSetup(t *testing.T) *setup {
	t.Helper()
	s := &setup{ecrAPI: fakeecr.New()}
	s.ecr = fakeregistry.New(t, fakeregistry.WithAuthenticator(s.ecrAPI.Authenticator()))
	s.quay = fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
	single, err := releasepayload.Build(releasepayload.WithVersion("4.10.3"), releasepayload.WithBaseLayers(1024))
	require.NoError(t, err)
	multi, err := releasepayload.Build(releasepayload.WithVersion("4.10.3"), releasepayload.WithBaseLayers(1024),
		releasepayload.WithArchitectures("amd64", "arm64"))
	require.NoError(t, err)
	s.single = s.ecr.Push(t, mirrorRepo+":4.10.3-x86_64", single.Image)
	s.index = s.ecr.PushIndex(t, mirrorRepo+":4.10.3-multi", multi.Index)
	im, err := multi.Index.IndexManifest()
	require.NoError(t, err)
	for _, m := range im.Manifests {
		if m.Platform.Architecture == "arm64" {
			s.arm64 = m.Digest.String()
		}
	}
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(s.ecrAPI.ClientFactory))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })
	s.kc = ggcrauth.NewKeychain(kc)
	return s
}

func digest(ref string) string {
	for i := range ref {
		if ref[i] == '@' {
			return ref[i+1:]
		}
	}
	return ""
}

func TestProbe(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		keychain   func(s *setup) authn.Keychain
		prepare    func(t *testing.T, s *setup)
		opts       []ggcrprobe.Option
		ref        func(s *setup) string
		wantDigest func(s *setup) string
		wantErr    error
		notErr     []error
	}{
		{
			name:       "When the mirror holds the digest, it should return it",
			ref:        func(s *setup) string { return s.single },
			wantDigest: func(s *setup) string { return digest(s.single) },
		},
		{
			name:       "When a tag exists, it should return the digest it points at",
			ref:        func(s *setup) string { return mirrorRepo + ":4.10.3-x86_64" },
			wantDigest: func(s *setup) string { return digest(s.single) },
		},
		{
			name:    "When the digest is not in the repository, it should fail with ErrManifestUnknown",
			ref:     func(*setup) string { return mirrorRepo + "@" + absent },
			wantErr: releaseinfo.ErrManifestUnknown,
		},
		{
			name:    "When the repository does not exist, it should fail with ErrManifestUnknown",
			ref:     func(*setup) string { return fakeregistry.DefaultHost + "/ocp4/other@" + absent },
			wantErr: releaseinfo.ErrManifestUnknown,
		},
		{
			name:     "When no credentials are sent, it should fail with ErrUnauthorized",
			keychain: func(*setup) authn.Keychain { return nil },
			ref:      func(s *setup) string { return s.single },
			wantErr:  releaseinfo.ErrUnauthorized,
		},
		{
			name:    "When ECR answers 403, it should fail with ErrUnauthorized",
			prepare: func(_ *testing.T, s *setup) { s.ecr.FailNext(fakeregistry.KindManifestHead, 1, http.StatusForbidden) },
			ref:     func(s *setup) string { return s.single },
			wantErr: releaseinfo.ErrUnauthorized,
		},
		{
			name: "When the registry fails with 503, it should report a failure that is neither absent nor unauthorized",
			prepare: func(_ *testing.T, s *setup) {
				s.ecr.FailNext(fakeregistry.KindManifestHead, 1, http.StatusServiceUnavailable)
			},
			opts:   []ggcrprobe.Option{noRetry},
			ref:    func(s *setup) string { return s.single },
			notErr: []error{releaseinfo.ErrManifestUnknown, releaseinfo.ErrUnauthorized},
		},
		{
			name:    "When no ECR token can be had, it should return the IAM error, not a bare 401",
			prepare: func(_ *testing.T, s *setup) { s.ecrAPI.SetError("us-east-1", fakeecr.AccessDeniedError()) },
			ref:     func(s *setup) string { return s.single },
			wantErr: registryauth.ErrAccessDenied,
			notErr:  []error{releaseinfo.ErrUnauthorized, releaseinfo.ErrManifestUnknown},
		},
		{
			name:       "When quay.io serves the release anonymously, it should need no credentials",
			prepare:    func(t *testing.T, s *setup) { s.quay.Copy(t, s.single, sourceRepo+":4.10.3-x86_64", s.ecr) },
			ref:        func(s *setup) string { return sourceRepo + "@" + digest(s.single) },
			wantDigest: func(s *setup) string { return digest(s.single) },
		},
		{
			name:       "When a platform is required and the index has it, it should return the index digest",
			opts:       []ggcrprobe.Option{ggcrprobe.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"})},
			ref:        func(s *setup) string { return s.index },
			wantDigest: func(s *setup) string { return digest(s.index) },
		},
		{
			name:    "When a platform is required and the index lacks it, it should fail with ErrManifestUnknown",
			opts:    []ggcrprobe.Option{ggcrprobe.WithPlatform(v1.Platform{OS: "linux", Architecture: "s390x"})},
			ref:     func(s *setup) string { return s.index },
			wantErr: releaseinfo.ErrManifestUnknown,
		},
		{
			name:    "When a platform is required and its image was not mirrored, it should fail with ErrManifestUnknown",
			prepare: func(t *testing.T, s *setup) { s.ecr.Delete(t, mirrorRepo+"@"+s.arm64) },
			opts:    []ggcrprobe.Option{ggcrprobe.WithPlatform(v1.Platform{OS: "linux", Architecture: "arm64"})},
			ref:     func(s *setup) string { return s.index },
			wantErr: releaseinfo.ErrManifestUnknown,
		},
		{
			name:   "When the reference is invalid, it should fail without a request",
			ref:    func(*setup) string { return "quay.io/openshift-release-dev/ocp-release@sha256:short" },
			notErr: []error{releaseinfo.ErrManifestUnknown, releaseinfo.ErrUnauthorized},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSetup(t)
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			kc := s.kc
			if tc.keychain != nil {
				kc = tc.keychain(s)
			}
			opts := append([]ggcrprobe.Option{ggcrprobe.WithTransport(fakeregistry.Transport(s.ecr, s.quay))}, tc.opts...)
			p := ggcrprobe.New(kc, opts...)

			got, err := p.Probe(t.Context(), tc.ref(s))
			if tc.wantDigest != nil {
				require.NoError(t, err)
				require.Equal(t, tc.wantDigest(s), got)
				return
			}
			require.Error(t, err)
			require.Empty(t, got)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			}
			for _, not := range tc.notErr {
				require.NotErrorIs(t, err, not)
			}
			for n := 1; n <= s.ecrAPI.Calls("us-east-1"); n++ {
				require.NotContains(t, err.Error(), fakeecr.Password("us-east-1", n))
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	diag := func(status int, codes ...transport.ErrorCode) error {
		e := &transport.Error{StatusCode: status}
		for _, c := range codes {
			e.Errors = append(e.Errors, transport.Diagnostic{Code: c, Message: "from the registry"})
		}
		return e
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{name: "When the body says MANIFEST_UNKNOWN, it should map to ErrManifestUnknown", err: diag(404, transport.ManifestUnknownErrorCode), want: releaseinfo.ErrManifestUnknown},
		{name: "When the body says NAME_UNKNOWN, it should map to ErrManifestUnknown", err: diag(404, transport.NameUnknownErrorCode), want: releaseinfo.ErrManifestUnknown},
		{name: "When the body says UNAUTHORIZED, it should map to ErrUnauthorized", err: diag(401, transport.UnauthorizedErrorCode), want: releaseinfo.ErrUnauthorized},
		{name: "When the body says DENIED with status 400, it should map to ErrUnauthorized", err: diag(400, transport.DeniedErrorCode), want: releaseinfo.ErrUnauthorized},
		{name: "When a HEAD gets a bare 404, it should map to ErrManifestUnknown", err: diag(404), want: releaseinfo.ErrManifestUnknown},
		{name: "When a HEAD gets a bare 403, it should map to ErrUnauthorized", err: diag(403), want: releaseinfo.ErrUnauthorized},
		{name: "When the registry throttles, it should map to neither", err: diag(429, transport.TooManyRequestsErrorCode)},
		{name: "When the error is not the registry's, it should map to neither", err: errors.New("dial tcp: connection refused")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ggcrprobe.Classify(tc.err)
			require.ErrorIs(t, got, tc.err, "the original stays in the chain")
			for _, s := range []error{releaseinfo.ErrManifestUnknown, releaseinfo.ErrUnauthorized} {
				require.Equal(t, s == tc.want, errors.Is(got, s), "%v", s)
			}
		})
	}
}
