package releaseinfo_test

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	imagev1 "github.com/openshift/api/image/v1"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/releaseinfo/ggcrprobe"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// world is quay.io (anonymous) holding two real-fixture releases, and an
// ECR registry, trusting the fake ECR API's rotating tokens, to which only
// the first was copied by `oc adm release mirror`.
type world struct {
	clk    *clocktesting.FakeClock
	ecrAPI *fakeecr.ECR
	quay   *fakeregistry.Registry
	ecr    *fakeregistry.Registry
	kc     *registryauth.Keychain
	prober *ggcrprobe.Prober

	payload  *releasepayload.Payload
	mirrored string // quay.io digest pullspec of 4.10.3, copied to ECR
	lagging  string // quay.io digest pullspec of 4.10.4, not copied yet
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{clk: clocktesting.NewFakeClock(time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))}
	w.ecrAPI = fakeecr.New(fakeecr.WithClock(w.clk))
	w.quay = fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
	w.ecr = fakeregistry.New(t, fakeregistry.WithAuthenticator(w.ecrAPI.Authenticator()), fakeregistry.WithClock(w.clk))
	require.Equal(t, ecrHost, w.ecr.Host())

	var err error
	w.payload, err = releasepayload.Build(releasepayload.WithVersion("4.10.3"))
	require.NoError(t, err)
	newer, err := releasepayload.Build(releasepayload.WithVersion("4.10.4"))
	require.NoError(t, err)
	m, err := fakeregistry.MirrorRelease(t.Context(), w.quay, w.ecr, w.payload) // sourceRepo:4.10.3-x86_64 -> mirrorRepo
	require.NoError(t, err)
	w.mirrored = m.Release
	w.lagging = w.quay.Push(t, sourceRepo+":4.10.4-x86_64", newer.Image)
	w.quay.Reset()
	w.ecr.Reset()

	w.kc, err = registryauth.NewKeychain(registryauth.WithClientFactory(w.ecrAPI.ClientFactory), registryauth.WithClock(w.clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.kc.Close() })
	w.prober = ggcrprobe.New(ggcrauth.NewKeychain(w.kc), ggcrprobe.WithTransport(fakeregistry.Transport(w.quay, w.ecr)))
	return w
}

func (w *world) resolver(t *testing.T, policy *mirrorpolicy.Policy) *releaseinfo.Resolver {
	t.Helper()
	r, err := releaseinfo.NewResolver(policy, w.prober, releaseinfo.WithClock(w.clk))
	require.NoError(t, err)
	return r
}

func ecrReleaseMirror(t *testing.T, never bool) *mirrorpolicy.Policy {
	t.Helper()
	rules, err := mirrorpolicy.ECRReleaseMirror(mirrorRepo)
	require.NoError(t, err)
	for i := range rules {
		rules[i].NeverContactSource = never
	}
	return newPolicy(t, rules...)
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, w *world)
	}{
		{
			name: "When the release is in the ECR mirror, it should resolve there, digest-pinned, with one token",
			run: func(t *testing.T, w *world) {
				res, err := w.resolver(t, ecrReleaseMirror(t, false)).Resolve(t.Context(), w.mirrored)
				require.NoError(t, err)
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.mirrored), res.Pullspec)
				require.True(t, res.Candidate.Mirror)
				require.Empty(t, res.Skipped)
				require.Equal(t, 1, w.ecrAPI.Calls("us-east-1"))
				require.Zero(t, w.quay.Stats().ManifestHead, "quay.io is not contacted")
			},
		},
		{
			name: "When the ECR token rotates, it should still resolve to the mirror",
			run: func(t *testing.T, w *world) {
				r := w.resolver(t, ecrReleaseMirror(t, false))
				_, err := r.Resolve(t.Context(), w.mirrored)
				require.NoError(t, err)
				heads := w.ecr.Stats().ManifestHead

				w.clk.Step(12*time.Hour + time.Minute) // token and cache entry expire
				w.ecr.RevokeAll()
				res, err := r.Resolve(t.Context(), w.mirrored)
				require.NoError(t, err)
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.mirrored), res.Pullspec)
				require.Greater(t, w.ecr.Stats().ManifestHead, heads, "the mirror was asked again")
				require.GreaterOrEqual(t, w.ecrAPI.Calls("us-east-1"), 2, "with a new token")
			},
		},
		{
			name: "When the mirror lags and the policy allows quay.io, it should fall back to quay.io and explain why",
			run: func(t *testing.T, w *world) {
				res, err := w.resolver(t, ecrReleaseMirror(t, false)).Resolve(t.Context(), w.lagging)
				require.NoError(t, err)
				require.Equal(t, w.lagging, res.Pullspec)
				require.False(t, res.Candidate.Mirror)
				require.Len(t, res.Skipped, 1)
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.lagging), res.Skipped[0].Ref)
				require.Equal(t, "manifest unknown", res.Skipped[0].Reason)
				require.ErrorIs(t, res.Skipped[0].Err, releaseinfo.ErrManifestUnknown)
				require.Contains(t, res.String(), "; skipped "+mirrorRepo+"@"+digestOf(t, w.lagging)+": manifest unknown")
			},
		},
		{
			name: "When the mirror lags and the policy forbids quay.io, it should fail with ErrNotMirrored naming the mirror and the source",
			run: func(t *testing.T, w *world) {
				_, err := w.resolver(t, ecrReleaseMirror(t, true)).Resolve(t.Context(), w.lagging)
				require.ErrorIs(t, err, releaseinfo.ErrNotMirrored)
				var nm *releaseinfo.NotMirroredError
				require.ErrorAs(t, err, &nm)
				require.False(t, nm.SourceAllowed)
				require.Equal(t, []string{mirrorRepo}, nm.Mirrors)
				require.Equal(t, "release "+w.lagging+" is not yet in "+mirrorRepo+" (manifest unknown) and the policy forbids contacting quay.io", err.Error())
				require.Zero(t, w.quay.Stats(), "quay.io is never contacted")
			},
		},
		{
			name: "When a tag is resolved through a tag mirror, it should come back digest-pinned on ECR",
			run: func(t *testing.T, w *world) {
				policy := newPolicy(t, mirrorpolicy.Rule{Source: sourceRepo, Mirrors: []string{mirrorRepo},
					Kind: mirrorpolicy.TagMirrors, NeverContactSource: true, Origin: "ImageTagMirrorSet/ocp-release"})
				res, err := w.resolver(t, policy).Resolve(t.Context(), sourceRepo+":4.10.3-x86_64")
				require.NoError(t, err)
				require.Equal(t, mirrorRepo+"@"+digestOf(t, w.mirrored), res.Pullspec)
				require.Equal(t, "ImageTagMirrorSet/ocp-release", res.Candidate.Origin)
			},
		},
		{
			name: "When ECR denies the token, it should report the IAM error for the mirror and fall back",
			run: func(t *testing.T, w *world) {
				w.ecrAPI.SetError("us-east-1", fakeecr.AccessDeniedError())
				res, err := w.resolver(t, ecrReleaseMirror(t, false)).Resolve(t.Context(), w.mirrored)
				require.NoError(t, err)
				require.Equal(t, w.mirrored, res.Pullspec)
				require.ErrorIs(t, res.Skipped[0].Err, registryauth.ErrAccessDenied)
				require.Contains(t, res.Skipped[0].Reason, "unreachable: ")
			},
		},
		{
			name: "When HyperShift's provider is decorated, it should read the release metadata from ECR with in-memory credentials",
			run: func(t *testing.T, w *world) {
				leaf := &registryReader{transport: fakeregistry.Transport(w.quay, w.ecr)}
				var provider Provider = &releaseinfo.Decorator[*ReleaseImage]{
					Delegate: leaf.Lookup,
					Resolver: w.resolver(t, ecrReleaseMirror(t, false)),
					Keychain: w.kc,
				}
				pullSecret := []byte(`{"auths":{"quay.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("robot:quay-token")) + `"}}}`)
				img, err := provider.Lookup(t.Context(), w.mirrored, pullSecret)
				require.NoError(t, err)
				require.Equal(t, w.payload.ImageStream.Name, img.Name)
				require.Len(t, img.Spec.Tags, len(w.payload.ImageStream.Spec.Tags))
				require.Equal(t, []string{mirrorRepo + "@" + digestOf(t, w.mirrored)}, leaf.read)
				require.Zero(t, w.ecr.Stats().S3WithAuthorization, "no credential followed the S3 redirect")

				img, err = provider.Lookup(t.Context(), w.lagging, pullSecret)
				require.NoError(t, err)
				require.Equal(t, "4.10.4", img.Name)
				require.Equal(t, w.lagging, leaf.read[1])
				require.NotContains(t, string(pullSecret), "AWS")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newWorld(t))
		})
	}
}

// registryReader is a leaf Provider that reads release metadata the way
// HyperShift's RegistryClientProvider does: credentials from the
// dockerconfigjson it is given, layers last first, image-references only.
type registryReader struct {
	transport http.RoundTripper
	read      []string
}

func (r *registryReader) Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	r.read = append(r.read, image)
	ref, err := name.ParseReference(image)
	if err != nil {
		return nil, err
	}
	auth, err := basicAuthFor(pullSecret, ref.Context().RegistryStr())
	if err != nil {
		return nil, err
	}
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithAuth(auth), remote.WithTransport(r.transport))
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for i := len(layers) - 1; i >= 0; i-- {
		rc, err := layers[i].Uncompressed()
		if err != nil {
			return nil, err
		}
		data, err := findFile(rc, releasepayload.ImageReferencesPath)
		_ = rc.Close()
		if err != nil {
			return nil, err
		}
		if data != nil {
			is := &imagev1.ImageStream{}
			if err := json.Unmarshal(data, is); err != nil {
				return nil, err
			}
			return &ReleaseImage{ImageStream: is}, nil
		}
	}
	return nil, errors.New("release image has no " + releasepayload.ImageReferencesPath)
}

func findFile(r io.Reader, path string) ([]byte, error) {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if strings.TrimPrefix(h.Name, "./") == path {
			return io.ReadAll(tr)
		}
	}
}

func basicAuthFor(pullSecret []byte, host string) (authn.Authenticator, error) {
	var cfg struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(pullSecret, &cfg); err != nil {
		return nil, err
	}
	e, ok := cfg.Auths[host]
	if !ok {
		return authn.Anonymous, nil
	}
	raw, err := base64.StdEncoding.DecodeString(e.Auth)
	if err != nil {
		return nil, err
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return nil, fmt.Errorf("malformed auth for %s", host)
	}
	return &authn.Basic{Username: user, Password: pass}, nil
}
