package fakeregistry_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

const (
	ecrHost    = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	releaseRef = ecrHost + "/openshift-release-dev/ocp-release:4.10.3-x86_64"
	s3Host     = "prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com"
)

func buildPayload(t testing.TB, opts ...releasepayload.Option) *releasepayload.Payload {
	t.Helper()
	p, err := releasepayload.Build(append([]releasepayload.Option{releasepayload.WithBaseLayers(64<<10, 32<<10)}, opts...)...)
	require.NoError(t, err)
	return p
}

// pullImage pulls ref's manifest, config and every layer, verifying digests as it reads, and
// returns the number of blob bytes read.
func pullImage(t testing.TB, ref string, opts ...remote.Option) (v1.Image, int64, error) {
	t.Helper()
	n, err := name.ParseReference(ref)
	if err != nil {
		return nil, 0, err
	}
	img, err := remote.Image(n, append(opts, remote.WithContext(t.Context()))...)
	if err != nil {
		return nil, 0, err
	}
	raw, err := img.RawConfigFile()
	if err != nil {
		return nil, 0, err
	}
	total := int64(len(raw))
	layers, err := img.Layers()
	if err != nil {
		return nil, 0, err
	}
	for _, l := range layers {
		rc, err := l.Compressed() // ggcr verifies the digest at EOF
		if err != nil {
			return nil, 0, err
		}
		n, err := io.Copy(io.Discard, rc)
		_ = rc.Close()
		if err != nil {
			return nil, 0, err
		}
		total += n
	}
	return img, total, nil
}

func statusOf(err error) int {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return terr.StatusCode
	}
	return 0
}

func TestPullThroughECRHostName(t *testing.T) {
	t.Parallel()
	ecr := fakeregistry.New(t)
	p := buildPayload(t)
	want, err := p.Image.Digest()
	require.NoError(t, err)
	require.Equal(t, ecrHost+"/openshift-release-dev/ocp-release@"+want.String(), ecr.Push(t, releaseRef, p.Image))
	require.Equal(t, fakeregistry.Stats{}, ecr.Stats(), "setup must not be counted")

	img, read, err := pullImage(t, releaseRef, remote.WithAuth(ecr.Auth()), remote.WithTransport(ecr.Transport()))
	require.NoError(t, err)
	got, err := img.Digest()
	require.NoError(t, err)
	require.Equal(t, want, got)

	layers, err := p.Image.Layers()
	require.NoError(t, err)
	blobs := int64(1 + len(layers)) // config + layers
	st := ecr.Stats()
	require.Equal(t, int64(1), st.Ping)
	require.Equal(t, int64(1), st.Unauthorized, "only the anonymous ping is challenged")
	require.Equal(t, int64(1), st.ManifestGet)
	require.Equal(t, blobs, st.BlobRedirect)
	require.Equal(t, blobs, st.S3BlobGet)
	require.Equal(t, read, st.S3Bytes)
	require.Zero(t, st.S3WithAuthorization, "ggcr must not forward Authorization across the redirect")

	for _, r := range ecr.Requests() {
		switch {
		case r.Kind == fakeregistry.KindS3Blob:
			require.Equal(t, s3Host, r.Host)
			require.False(t, r.HadAuthorization)
			require.Equal(t, http.StatusOK, r.Status)
		case r.Kind == fakeregistry.KindPing:
			require.Equal(t, http.StatusUnauthorized, r.Status)
		default:
			require.Equal(t, ecrHost, r.Host)
			require.True(t, r.HadAuthorization, "%+v", r)
		}
	}

	ecr.Reset()
	require.Equal(t, fakeregistry.Stats{}, ecr.Stats())
	require.Empty(t, ecr.Requests())
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	p := buildPayload(t, releasepayload.WithBaseLayers())

	// A fake ECR token source: a new password per issue, valid until revoked.
	var issued sync.Map
	var serial atomic.Int64
	issue := func() authn.Authenticator {
		pw := fmt.Sprintf("token-%d", serial.Add(1))
		issued.Store(pw, true)
		return &authn.Basic{Username: "AWS", Password: pw}
	}
	rotating := func(user, pass string) bool {
		_, ok := issued.Load(pass)
		return user == "AWS" && ok
	}

	tests := []struct {
		name       string
		opts       []fakeregistry.Option
		auth       func(r *fakeregistry.Registry) authn.Authenticator
		revoke     bool
		after      func(r *fakeregistry.Registry) authn.Authenticator // credential used after RevokeAll
		wantStatus int                                                // 0: success
	}{
		{
			name:       "When no credentials are sent, it should answer 401",
			auth:       func(*fakeregistry.Registry) authn.Authenticator { return authn.Anonymous },
			wantStatus: http.StatusUnauthorized,
		},
		{
			name: "When the password is wrong, it should answer 401",
			auth: func(*fakeregistry.Registry) authn.Authenticator {
				return &authn.Basic{Username: "AWS", Password: "not-the-password"}
			},
			wantStatus: http.StatusUnauthorized,
		},
		{
			name: "When the static credential is used, it should serve the image",
			auth: func(r *fakeregistry.Registry) authn.Authenticator { return r.Auth() },
		},
		{
			name:       "When the static credential was revoked, it should answer 401",
			auth:       func(r *fakeregistry.Registry) authn.Authenticator { return r.Auth() },
			revoke:     true,
			after:      func(r *fakeregistry.Registry) authn.Authenticator { return r.Auth() },
			wantStatus: http.StatusUnauthorized,
		},
		{
			name:       "When a rotated token was revoked and the client keeps using it, it should answer 401",
			opts:       []fakeregistry.Option{fakeregistry.WithAuthenticator(rotating)},
			auth:       func(*fakeregistry.Registry) authn.Authenticator { return issue() },
			revoke:     true,
			wantStatus: http.StatusUnauthorized,
		},
		{
			name:   "When a rotated token was revoked and the client gets a new one, it should serve the image",
			opts:   []fakeregistry.Option{fakeregistry.WithAuthenticator(rotating)},
			auth:   func(*fakeregistry.Registry) authn.Authenticator { return issue() },
			revoke: true,
			after:  func(*fakeregistry.Registry) authn.Authenticator { return issue() },
		},
		{
			name: "When the registry is anonymous, it should serve the image without credentials",
			opts: []fakeregistry.Option{fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous()},
			auth: func(*fakeregistry.Registry) authn.Authenticator { return authn.Anonymous },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := fakeregistry.New(t, tc.opts...)
			ref := reg.Host() + "/openshift-release-dev/ocp-release:4.10.3-x86_64"
			reg.Push(t, ref, p.Image)
			cred := tc.auth(reg)
			if tc.revoke {
				_, _, err := pullImage(t, ref, remote.WithAuth(cred), remote.WithTransport(reg.Transport()))
				require.NoError(t, err, "before RevokeAll")
				reg.RevokeAll()
				if tc.after != nil {
					cred = tc.after(reg)
				}
			}
			reg.Reset()
			_, _, err := pullImage(t, ref, remote.WithAuth(cred), remote.WithTransport(reg.Transport()))
			if tc.wantStatus == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, tc.wantStatus, statusOf(err), "%v", err)
			require.GreaterOrEqual(t, reg.Stats().Unauthorized, int64(2), "ping and the refused request")
			require.Zero(t, reg.Stats().S3BlobGet)
		})
	}
}

func TestChallenge(t *testing.T) {
	t.Parallel()
	ecr := fakeregistry.New(t, fakeregistry.WithHost(ecrHost), fakeregistry.WithHost("123456789012.dkr-ecr.us-east-1.on.aws"))
	for _, host := range ecr.Hosts() {
		t.Run("When "+host+" is pinged without credentials, it should send ECR's Basic challenge for that host", func(t *testing.T) {
			resp, err := ecr.Client().Get("https://" + host + "/v2/")
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			require.Equal(t, `Basic realm="https://`+host+`/",service="ecr.amazonaws.com"`, resp.Header.Get("WWW-Authenticate"))
		})
	}
	t.Run("When an unknown host is dialed, it should refuse instead of reaching the network", func(t *testing.T) {
		_, err := ecr.Client().Get("https://registry.example.com/v2/")
		require.ErrorContains(t, err, "refusing to dial")
	})
}

// firstLayer returns the digest and compressed bytes of p's first layer.
func firstLayer(t *testing.T, p *releasepayload.Payload) (digest string, content []byte) {
	t.Helper()
	layers, err := p.Image.Layers()
	require.NoError(t, err)
	d, err := layers[0].Digest()
	require.NoError(t, err)
	rc, err := layers[0].Compressed()
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return d.String(), b
}

func authedGet(t *testing.T, c *http.Client, reg *fakeregistry.Registry, url string, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	a, err := reg.Auth().Authorization()
	require.NoError(t, err)
	req.SetBasicAuth(a.Username, a.Password)
	resp, err := c.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestBlobRedirect(t *testing.T) {
	t.Parallel()
	ecr := fakeregistry.New(t)
	p := buildPayload(t)
	ecr.Push(t, releaseRef, p.Image)
	digest, content := firstLayer(t, p)
	blobURL := "https://" + ecrHost + "/v2/openshift-release-dev/ocp-release/blobs/" + digest

	// Does not follow redirects, to look at the 307 and the pre-signed URL.
	noFollow := ecr.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	location := func(t *testing.T) string {
		resp := authedGet(t, noFollow, ecr, blobURL, nil)
		require.Equal(t, http.StatusTemporaryRedirect, resp.StatusCode)
		return resp.Header.Get("Location")
	}

	t.Run("When a blob is requested, it should redirect to a pre-signed URL on the S3 host", func(t *testing.T) {
		loc := location(t)
		require.True(t, strings.HasPrefix(loc, "https://"+s3Host+"/"), loc)
		for _, q := range []string{"X-Amz-Algorithm=AWS4-HMAC-SHA256", "X-Amz-Signature=", "X-Amz-Expires=3600", "X-Amz-Date="} {
			require.Contains(t, loc, q)
		}
	})

	t.Run("When a net/http client follows the redirect, it should drop Authorization and get the blob", func(t *testing.T) {
		ecr.Reset()
		resp := authedGet(t, ecr.Client(), ecr, blobURL, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, content, got)
		require.Zero(t, ecr.Stats().S3WithAuthorization)
		require.Equal(t, int64(len(content)), ecr.Stats().S3Bytes)
	})

	t.Run("When a client forwards Authorization to S3, it should get 400 InvalidArgument without the header echoed", func(t *testing.T) {
		ecr.Reset()
		bad := ecr.Client()
		bad.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			req.Header.Set("Authorization", via[0].Header.Get("Authorization"))
			return nil
		}
		resp := authedGet(t, bad, ecr, blobURL, nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Contains(t, string(body), "<Code>InvalidArgument</Code>")
		require.Contains(t, string(body), "Only one auth mechanism allowed")
		a, _ := ecr.Auth().Authorization()
		require.NotContains(t, string(body), a.Password)
		require.Equal(t, int64(1), ecr.Stats().S3WithAuthorization)
		require.Zero(t, ecr.Stats().S3Bytes)
	})

	t.Run("When a Range is requested from S3, it should answer 206 with those bytes", func(t *testing.T) {
		resp := authedGet(t, ecr.Client(), ecr, blobURL, http.Header{"Range": {"bytes=100-199"}})
		require.Equal(t, http.StatusPartialContent, resp.StatusCode)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, content[100:200], got)
	})

	t.Run("When S3 cuts the body, it should let the client resume with a Range request", func(t *testing.T) {
		ecr.Reset()
		ecr.CutBlobAfter(1000)
		resp := authedGet(t, ecr.Client(), ecr, blobURL, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		head, err := io.ReadAll(resp.Body)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		require.Len(t, head, 1000)

		resp = authedGet(t, ecr.Client(), ecr, blobURL, http.Header{"Range": {fmt.Sprintf("bytes=%d-", len(head))}})
		require.Equal(t, http.StatusPartialContent, resp.StatusCode)
		tail, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, content, append(head, tail...))
		require.Equal(t, int64(len(content)), ecr.Stats().S3Bytes)
	})

	t.Run("When the signature is altered, it should answer 403 SignatureDoesNotMatch", func(t *testing.T) {
		ecr.Reset()
		loc := strings.Replace(location(t), "X-Amz-Signature=", "X-Amz-Signature=00", 1)
		resp, err := ecr.Client().Get(loc)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Contains(t, string(body), "SignatureDoesNotMatch")
		require.Equal(t, int64(1), ecr.Stats().S3Forbidden)
	})

	t.Run("When a blob is unknown, it should answer 404 instead of redirecting", func(t *testing.T) {
		resp := authedGet(t, noFollow, ecr, "https://"+ecrHost+"/v2/openshift-release-dev/ocp-release/blobs/sha256:"+strings.Repeat("0", 64), nil)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}

func TestPresignedURLExpires(t *testing.T) {
	t.Parallel()
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
	ecr := fakeregistry.New(t, fakeregistry.WithClock(clk), fakeregistry.WithPresignExpiry(10*time.Minute))
	p := buildPayload(t, releasepayload.WithBaseLayers(1024))
	ecr.Push(t, releaseRef, p.Image)
	digest, _ := firstLayer(t, p)

	noFollow := ecr.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp := authedGet(t, noFollow, ecr, "https://"+ecrHost+"/v2/openshift-release-dev/ocp-release/blobs/"+digest, nil)
	loc := resp.Header.Get("Location")

	tests := []struct {
		name    string
		elapsed time.Duration
		want    int
	}{
		{"When the URL is used within its lifetime, it should serve the blob", 9 * time.Minute, http.StatusOK},
		{"When the URL is used after it expired, it should answer 403", 11 * time.Minute, http.StatusForbidden},
	}
	for _, tc := range tests { // sequential: they move the clock
		t.Run(tc.name, func(t *testing.T) {
			clk.SetTime(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC).Add(tc.elapsed))
			resp, err := ecr.Client().Get(loc)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.want, resp.StatusCode)
		})
	}
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	ecr := fakeregistry.New(t)
	p := buildPayload(t, releasepayload.WithBaseLayers(1024))
	ecr.Push(t, releaseRef, p.Image)
	manifestURL := "https://" + ecrHost + "/v2/openshift-release-dev/ocp-release/manifests/4.10.3-x86_64"
	digest, _ := firstLayer(t, p)
	blobURL := "https://" + ecrHost + "/v2/openshift-release-dev/ocp-release/blobs/" + digest

	tests := []struct {
		name string
		kind fakeregistry.Kind
		url  string
		code int
	}{
		{"When manifest GETs are throttled, it should answer 429 then recover", fakeregistry.KindManifestGet, manifestURL, http.StatusTooManyRequests},
		{"When S3 fails, it should answer 503 then recover", fakeregistry.KindS3Blob, blobURL, http.StatusServiceUnavailable},
		{"When blob redirects fail, it should answer 500 then recover", fakeregistry.KindBlobRedirect, blobURL, http.StatusInternalServerError},
	}
	for _, tc := range tests { // sequential: faults are per registry
		t.Run(tc.name, func(t *testing.T) {
			ecr.FailNext(tc.kind, 2, tc.code)
			for range 2 {
				require.Equal(t, tc.code, authedGet(t, ecr.Client(), ecr, tc.url, nil).StatusCode)
			}
			require.Equal(t, http.StatusOK, authedGet(t, ecr.Client(), ecr, tc.url, nil).StatusCode)
		})
	}

	t.Run("When a manifest was deleted, it should answer 404", func(t *testing.T) {
		ecr.Delete(t, releaseRef)
		_, err := remote.Head(name.MustParseReference(releaseRef), remote.WithAuth(ecr.Auth()), remote.WithTransport(ecr.Transport()))
		require.Equal(t, http.StatusNotFound, statusOf(err), "%v", err)
	})
}

func TestMirrorBetweenRegistries(t *testing.T) {
	t.Parallel()
	quay := fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
	ecr := fakeregistry.New(t)
	p := buildPayload(t, releasepayload.WithArchitectures("amd64", "arm64"))
	src := quay.PushIndex(t, "quay.io/openshift-release-dev/ocp-release:4.10.3-multi", p.Index)
	dst := ecr.Copy(t, src, ecrHost+"/openshift-release-dev/ocp-release:4.10.3-multi", quay)
	require.Equal(t, strings.TrimPrefix(src, "quay.io"), strings.TrimPrefix(dst, ecrHost), "digests survive mirroring")

	// One client for both registries, credentials only for ECR.
	kc := authn.NewMultiKeychain(staticKeychain{ecrHost: ecr.Auth()})
	tr := fakeregistry.Transport(quay, ecr)
	for _, ref := range []string{src, dst} {
		t.Run("When "+strings.SplitN(ref, "/", 2)[0]+" is read through a combined transport, it should serve every architecture", func(t *testing.T) {
			n, err := name.ParseReference(ref)
			require.NoError(t, err)
			idx, err := remote.Index(n, remote.WithAuthFromKeychain(kc), remote.WithTransport(tr), remote.WithContext(t.Context()))
			require.NoError(t, err)
			im, err := idx.IndexManifest()
			require.NoError(t, err)
			require.Len(t, im.Manifests, 2)
			for _, m := range im.Manifests {
				img, err := idx.Image(m.Digest)
				require.NoError(t, err)
				cfg, err := img.ConfigFile()
				require.NoError(t, err)
				require.Equal(t, m.Platform.Architecture, cfg.Architecture)
			}
		})
	}
	require.Zero(t, quay.Stats().Unauthorized)
	require.Zero(t, ecr.Stats().S3WithAuthorization)

	t.Run("When two registries claim one host, it should panic", func(t *testing.T) {
		other := fakeregistry.New(t)
		require.Panics(t, func() { fakeregistry.Transport(ecr, other) })
	})
}

type staticKeychain map[string]authn.Authenticator

func (k staticKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if a, ok := k[r.RegistryStr()]; ok {
		return a, nil
	}
	return authn.Anonymous, nil
}

// fatalRecorder captures Fatalf from New without failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []fakeregistry.Option
		want string
	}{
		{"When anonymous and Basic auth are combined, it should fail", []fakeregistry.Option{fakeregistry.WithAnonymous(), fakeregistry.WithBasicAuth("AWS", "pw")}, "mutually exclusive"},
		{"When a host has a scheme, it should fail", []fakeregistry.Option{fakeregistry.WithHost("https://quay.io")}, "bare DNS name"},
		{"When the blob host is also a registry host, it should fail", []fakeregistry.Option{fakeregistry.WithHost("quay.io"), fakeregistry.WithBlobHost("quay.io")}, "also a registry host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &fatalRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				fakeregistry.New(rec, tc.opts...)
			}()
			<-done
			require.Contains(t, rec.msg, tc.want)
		})
	}
}

// BenchmarkPull measures a full pull of a 4 MiB single-arch release through the ECR front end,
// the S3 redirect and TLS: the cost a reader pays per uncached release lookup.
func BenchmarkPull(b *testing.B) {
	ecr := fakeregistry.New(b)
	p := buildPayload(b, releasepayload.WithBaseLayers(2<<20, 1<<20, 1<<20))
	ecr.Push(b, releaseRef, p.Image)
	tr := ecr.Transport()
	ecr.Reset()
	var read int64
	for b.Loop() {
		_, n, err := pullImage(b, releaseRef, remote.WithAuth(ecr.Auth()), remote.WithTransport(tr))
		if err != nil {
			b.Fatal(err)
		}
		read = n
	}
	b.SetBytes(read)
	st := ecr.Stats()
	b.ReportMetric(float64(st.BlobRedirect)/float64(b.N), "redirects/op")
}
