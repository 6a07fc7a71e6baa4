package remote_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/secretcheck"
)

// countingRefresher counts Forget calls before passing them on.
type countingRefresher struct {
	kc     *registryauth.Keychain
	forgot atomic.Int64
}

func (r *countingRefresher) Forget(host string) {
	r.forgot.Add(1)
	r.kc.Forget(host)
}

// forgettingKeychain is a go-containerregistry keychain that is also a
// CredentialRefresher, for the detection the Reader does on its own.
type forgettingKeychain struct {
	authn.Keychain
	kc *registryauth.Keychain
}

func (k forgettingKeychain) Forget(host string) { k.kc.Forget(host) }

// TestFaultTokenRevokedEarly: the registry answers 401 to a token the
// keychain still holds as valid. The Reader drops it (Forget), fetches one
// new token, retries once, and gives up with a typed error if that fails.
func TestFaultTokenRevokedEarly(t *testing.T) {
	t.Parallel()
	const region = "us-east-1"
	tests := []struct {
		name string
		// onlyFirst makes the registry accept the first token ECR issued
		// and nothing else: a new token does not help.
		onlyFirst bool
		setup     func(kc *registryauth.Keychain, ref *countingRefresher) []remote.Option
		wantErr   bool
		// Expected: ECR calls, registry 401s, Forget calls.
		wantCalls, want401, wantForgets int
	}{
		{
			name: "When the registry revokes the cached token, it should forget it, fetch one new token and read the release",
			setup: func(kc *registryauth.Keychain, ref *countingRefresher) []remote.Option {
				return []remote.Option{remote.WithCredentialRefresher(ref)}
			},
			wantCalls: 2, want401: 1, wantForgets: 1,
		},
		{
			name: "When the keychain given to WithKeychain can forget, it should be used without WithCredentialRefresher",
			setup: func(kc *registryauth.Keychain, _ *countingRefresher) []remote.Option {
				return []remote.Option{remote.WithKeychain(forgettingKeychain{Keychain: ggcrauth.NewKeychain(kc), kc: kc})}
			},
			wantCalls: 2, want401: 1,
		},
		{
			name:      "When the new token is rejected too, it should retry once only and fail with ErrCredentialsRejected",
			onlyFirst: true,
			setup: func(kc *registryauth.Keychain, ref *countingRefresher) []remote.Option {
				return []remote.Option{remote.WithCredentialRefresher(ref)}
			},
			wantErr:   true,
			wantCalls: 2, want401: 2, wantForgets: 1,
		},
		{
			name:      "When no refresher is configured, it should fail at once with the registry's 401",
			setup:     func(*registryauth.Keychain, *countingRefresher) []remote.Option { return nil },
			wantErr:   true,
			wantCalls: 1, want401: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := secretcheck.New(t)
			api := fakeecr.New()
			sc.WatchFunc(func() []string {
				return []string{fakeecr.Password(region, 1), fakeecr.Password(region, 2), fakeecr.Password(region, 3)}
			})
			auth := api.Authenticator()
			if tc.onlyFirst {
				auth = func(user, pass string) bool { return user == "AWS" && pass == fakeecr.Password(region, 1) }
			}
			reg := fakeregistry.New(t, fakeregistry.WithAuthenticator(auth))
			push(t, reg, releaseTag, build(t))
			kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(api.ClientFactory), registryauth.WithLogger(sc.Logger()))
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })
			refresher := &countingRefresher{kc: kc}
			r, err := remote.NewReader(append([]remote.Option{
				remote.WithTransport(reg.Transport()),
				remote.WithKeychain(authn.NewMultiKeychain(ggcrauth.NewKeychain(kc))),
			}, tc.setup(kc, refresher)...)...)
			require.NoError(t, err)
			ctx := logr.NewContext(t.Context(), sc.Logger())

			first, err := r.Lookup(ctx, releaseTag)
			require.NoError(t, err)
			reg.RevokeAll() // ECR still considers the token valid for hours
			reg.Reset()

			rel, err := r.Lookup(ctx, releaseTag)
			sc.CheckError(err)
			require.Equal(t, tc.wantCalls, api.Calls(region), "ECR calls")
			require.Equal(t, tc.want401, rejected(reg), "registry 401s to credentials")
			require.Equal(t, int64(tc.wantForgets), refresher.forgot.Load(), "Forget calls")
			require.Zero(t, reg.Stats().S3WithAuthorization)
			if !tc.wantErr {
				require.NoError(t, err)
				require.Equal(t, first.Pullspec, rel.Pullspec)
				require.Greater(t, rel.Stats.RoundTrips, first.Stats.RoundTrips, "the rejected attempt counts in the stats")
				return
			}
			require.Nil(t, rel)
			var terr *transport.Error
			require.ErrorAs(t, err, &terr)
			require.Equal(t, http.StatusUnauthorized, terr.StatusCode)
			var rerr *remote.Error
			require.ErrorAs(t, err, &rerr)
			if tc.wantForgets > 0 {
				require.ErrorIs(t, err, remote.ErrCredentialsRejected)
				require.Contains(t, rerr.Hint, "ecr:BatchGetImage")
			} else {
				require.NotErrorIs(t, err, remote.ErrCredentialsRejected)
			}
		})
	}
}

// rejected counts the registry's 401s to requests that carried a
// credential (the anonymous /v2/ ping of each lookup is answered 401 too).
func rejected(reg *fakeregistry.Registry) int {
	n := 0
	for _, r := range reg.Requests() {
		if r.Status == http.StatusUnauthorized && r.HadAuthorization {
			n++
		}
	}
	return n
}

func TestFaultAnonymous401IsNotRetried(t *testing.T) {
	t.Parallel()
	api := fakeecr.New()
	reg := fakeregistry.New(t) // a static credential nobody gave the reader
	push(t, reg, releaseTag, build(t))
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(api.ClientFactory))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })
	refresher := &countingRefresher{kc: kc}
	r, err := remote.NewReader(remote.WithTransport(reg.Transport()), remote.WithCredentialRefresher(refresher))
	require.NoError(t, err)

	_, err = r.Lookup(t.Context(), releaseTag)
	var terr *transport.Error
	require.ErrorAs(t, err, &terr)
	require.Equal(t, http.StatusUnauthorized, terr.StatusCode)
	require.Zero(t, refresher.forgot.Load(), "When the 401 answered an anonymous request, it should not forget or retry")
	require.NotErrorIs(t, err, remote.ErrCredentialsRejected)
}

// TestFaultLayerCut: a layer download cut mid-stream fails the lookup
// cleanly with a typed error; the Reader does not resume it. A release
// lookup reads a few MiB and HyperShift retries the whole lookup on its
// next reconcile, which costs less than stitching and re-verifying a
// resumed stream; the test proves that retry works and reads no more
// than the cut plus one full read.
func TestFaultLayerCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cut  int64
	}{
		{name: "When the download is cut in the gzip header, it should fail with io.ErrUnexpectedEOF naming the layer", cut: 5},
		{name: "When the download is cut mid-layer, it should fail with io.ErrUnexpectedEOF naming the layer", cut: 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := secretcheck.New(t)
			reg := fakeregistry.New(t, fakeregistry.WithBasicAuth("AWS", fakeecr.Password("us-east-1", 1)))
			sc.Watch(fakeecr.Password("us-east-1", 1))
			push(t, reg, releaseTag, build(t))
			r := newReader(t, reg)
			reg.Reset()
			reg.CutBlobAfter(tc.cut)

			rel, err := r.Lookup(t.Context(), releaseTag)
			sc.CheckError(err)
			require.Nil(t, rel)
			require.ErrorIs(t, err, io.ErrUnexpectedEOF)
			var rerr *remote.Error
			require.ErrorAs(t, err, &rerr)
			require.True(t, strings.HasPrefix(rerr.Op, "read layer sha256:"), "the error names the layer: %q", rerr.Op)
			require.NotRegexp(t, presignedQuery, err.Error(), "the pre-signed URL's query is redacted")
			st := reg.Stats()
			require.Equal(t, tc.cut, st.S3Bytes, "nothing is read past the cut")
			require.Equal(t, int64(1), st.S3BlobGet, "no resume, no Range request")
			require.Zero(t, st.S3WithAuthorization)

			again, err := r.Lookup(t.Context(), releaseTag)
			require.NoError(t, err, "the caller's retry reads the release")
			require.Equal(t, 1, again.Stats.LayersRead)
		})
	}
}

// expiringTransport moves the clock past the pre-signed URL's expiry
// whenever a request leaves for the blob host, as a slow client or a long
// queue between the redirect and the download would.
type expiringTransport struct {
	base     http.RoundTripper
	blobHost string
	clock    *clocktesting.FakeClock
}

func (t *expiringTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Hostname() == t.blobHost {
		t.clock.Step(2 * time.Hour)
	}
	return t.base.RoundTrip(req)
}

func TestFaultPresignedURLExpired(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		arm      func(reg *fakeregistry.Registry, clk *clocktesting.FakeClock) http.RoundTripper
		wantBody string
	}{
		{
			name: "When the pre-signed URL has expired by the time S3 gets it, it should fail with S3's 403 and a hint naming the expiry",
			arm: func(reg *fakeregistry.Registry, clk *clocktesting.FakeClock) http.RoundTripper {
				return &expiringTransport{base: reg.Transport(), blobHost: reg.BlobHost(), clock: clk}
			},
			wantBody: "Request has expired",
		},
		{
			name: "When S3 refuses the signature, it should fail with S3's 403 and the same hint",
			arm: func(reg *fakeregistry.Registry, _ *clocktesting.FakeClock) http.RoundTripper {
				reg.FailNext(fakeregistry.KindS3Blob, 1, http.StatusForbidden)
				return reg.Transport()
			},
			wantBody: "AccessDenied",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := secretcheck.New(t)
			clk := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
			password := fakeecr.Password("us-east-1", 1)
			sc.Watch(password)
			reg := fakeregistry.New(t, fakeregistry.WithBasicAuth("AWS", password), fakeregistry.WithClock(clk))
			push(t, reg, releaseTag, build(t))
			r, err := remote.NewReader(remote.WithTransport(tc.arm(reg, clk)),
				remote.WithKeychain(hostKeychain{ecrHost: reg.Auth()}))
			require.NoError(t, err)

			_, err = r.Lookup(t.Context(), releaseTag)
			sc.CheckError(err)
			var terr *transport.Error
			require.ErrorAs(t, err, &terr)
			require.Equal(t, http.StatusForbidden, terr.StatusCode)
			require.Equal(t, reg.BlobHost(), terr.Request.URL.Hostname())
			var rerr *remote.Error
			require.ErrorAs(t, err, &rerr)
			require.Contains(t, rerr.Hint, "blob host "+reg.BlobHost())
			require.Contains(t, rerr.Hint, "expired URL signature")
			require.Contains(t, err.Error(), tc.wantBody)
			require.NotRegexp(t, presignedQuery, err.Error(), "the pre-signed URL's query is redacted")
			require.NotContains(t, err.Error(), "Basic ")
			require.Zero(t, reg.Stats().S3WithAuthorization, "the registry's Authorization never followed the redirect")
		})
	}
}
