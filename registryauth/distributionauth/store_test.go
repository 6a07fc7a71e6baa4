package distributionauth_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distribution/reference"
	"github.com/docker/distribution/registry/client"
	"github.com/docker/distribution/registry/client/auth"
	"github.com/docker/distribution/registry/client/auth/challenge"
	"github.com/docker/distribution/registry/client/transport"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/distributionauth"
)

const (
	ecrHost  = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	password = "eyJwYXlsb2FkIjoiZmFrZS1lY3ItcGFzc3dvcmQifQ"
)

// fakeSource is a registryauth.CredentialSource answering from a table.
type fakeSource struct {
	creds map[string]registryauth.Credential
	errs  map[string]error
	// block makes Credential wait for the caller's context.
	block bool
	calls atomic.Int32
}

func (f *fakeSource) Credential(ctx context.Context, host string) (registryauth.Credential, error) {
	f.calls.Add(1)
	if f.block {
		<-ctx.Done()
		return registryauth.Credential{}, &registryauth.TokenError{Registry: host, Region: "us-east-1", Partition: "aws", Kind: registryauth.ErrTokenFetch, Err: ctx.Err()}
	}
	if err, ok := f.errs[host]; ok {
		return registryauth.Credential{}, err
	}
	if c, ok := f.creds[host]; ok {
		return c, nil
	}
	return registryauth.Credential{}, &registryauth.NotECRError{Input: host}
}

// staticStore is a pull-secret-like delegate.
type staticStore struct {
	basic   map[string][2]string
	refresh map[string]string
}

func (s *staticStore) Basic(u *url.URL) (string, string) {
	c := s.basic[u.Host]
	return c[0], c[1]
}
func (s *staticStore) RefreshToken(u *url.URL, service string) string {
	return s.refresh[u.Host+"|"+service]
}
func (s *staticStore) SetRefreshToken(u *url.URL, service, token string) {
	s.refresh[u.Host+"|"+service] = token
}

func ecrCredential(host string) registryauth.Credential {
	return registryauth.Credential{Registry: host, Username: "AWS", Password: password, ExpiresAt: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

func accessDenied(host string) error {
	return &registryauth.TokenError{
		Registry: host, Region: "us-east-1", Partition: "aws", Kind: registryauth.ErrAccessDenied,
		Err:  errors.New("AccessDeniedException: not authorized to perform ecr:GetAuthorizationToken"),
		Hint: "grant ecr:GetAuthorizationToken to the identity",
	}
}

// logBuffer captures a logr sink's output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		fmt.Fprintln(&l.b, prefix, args)
	}, funcr.Options{Verbosity: 10})
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestBasic(t *testing.T) {
	t.Parallel()
	const quay = "quay.io"
	tests := []struct {
		name     string
		src      *fakeSource
		delegate auth.CredentialStore
		url      *url.URL
		wantUser string
		wantPass string
		wantErr  error
	}{
		{
			name:     "When the host is ECR, it should answer with the source's credential",
			src:      &fakeSource{creds: map[string]registryauth.Credential{ecrHost: ecrCredential(ecrHost)}},
			delegate: &staticStore{basic: map[string][2]string{ecrHost: {"AWS", "stale-token-from-pull-secret"}}},
			url:      &url.URL{Scheme: "https", Host: ecrHost, Path: "/v2/"},
			wantUser: "AWS", wantPass: password,
		},
		{
			name:     "When the host is not ECR, it should answer with the delegate's credential",
			src:      &fakeSource{},
			delegate: &staticStore{basic: map[string][2]string{quay: {"robot", "quay-pass"}}},
			url:      &url.URL{Scheme: "https", Host: quay, Path: "/v2/"},
			wantUser: "robot", wantPass: "quay-pass",
		},
		{
			name:     "When the host is ECR Public, it should answer with the delegate's credential",
			src:      &fakeSource{errs: map[string]error{"public.ecr.aws": fmt.Errorf("ecr: public.ecr.aws: %w", registryauth.ErrPublicRegistry)}},
			delegate: &staticStore{basic: map[string][2]string{"public.ecr.aws": {"AWS", "public-pass"}}},
			url:      &url.URL{Scheme: "https", Host: "public.ecr.aws", Path: "/v2/"},
			wantUser: "AWS", wantPass: "public-pass",
		},
		{
			name: "When the host is not ECR and there is no delegate, it should answer anonymously",
			src:  &fakeSource{},
			url:  &url.URL{Scheme: "https", Host: quay, Path: "/v2/"},
		},
		{
			name:     "When the source fails for an ECR host, it should answer anonymously and keep the error",
			src:      &fakeSource{errs: map[string]error{ecrHost: accessDenied(ecrHost)}},
			delegate: &staticStore{basic: map[string][2]string{ecrHost: {"AWS", "stale-token-from-pull-secret"}}},
			url:      &url.URL{Scheme: "https", Host: ecrHost, Path: "/v2/"},
			wantErr:  registryauth.ErrAccessDenied,
		},
		{
			name:    "When the source does not answer in time, it should answer anonymously after the timeout",
			src:     &fakeSource{block: true},
			url:     &url.URL{Scheme: "https", Host: ecrHost, Path: "/v2/"},
			wantErr: context.DeadlineExceeded,
		},
		{
			name:     "When the URL is nil, it should answer anonymously",
			src:      &fakeSource{},
			delegate: &staticStore{basic: map[string][2]string{}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs logBuffer
			s := distributionauth.NewCredentialStore(tc.src, tc.delegate, distributionauth.WithTimeout(20*time.Millisecond), distributionauth.WithLogger(logs.logger()))
			user, pass := s.Basic(tc.url)
			require.Equal(t, tc.wantUser, user)
			require.Equal(t, tc.wantPass, pass)
			if tc.wantErr == nil {
				require.NoError(t, s.Err())
			} else {
				require.ErrorIs(t, s.Err(), tc.wantErr)
				require.Contains(t, logs.String(), ecrHost)
			}
			for _, secret := range []string{password, "stale-token-from-pull-secret", "quay-pass", "public-pass"} {
				require.NotContains(t, logs.String(), secret)
				if err := s.Err(); err != nil {
					require.NotContains(t, err.Error(), secret)
				}
			}
		})
	}
}

func TestErr(t *testing.T) {
	t.Parallel()
	const other = "210987654321.dkr.ecr.eu-west-1.amazonaws.com"
	tests := []struct {
		name  string
		calls []string // hosts passed to Basic, in order
		// flip makes ecrHost succeed from this call index on (-1: never).
		flip    int
		wantIs  []error
		wantNil bool
	}{
		{
			name:   "When two hosts fail, it should join both errors",
			calls:  []string{ecrHost, other},
			flip:   -1,
			wantIs: []error{registryauth.ErrAccessDenied, registryauth.ErrThrottled},
		},
		{
			name:   "When a host fails twice, it should keep one error for it",
			calls:  []string{ecrHost, ecrHost},
			flip:   -1,
			wantIs: []error{registryauth.ErrAccessDenied},
		},
		{
			name:    "When a failed host later succeeds, it should forget its error",
			calls:   []string{ecrHost, ecrHost},
			flip:    1,
			wantNil: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fakeSource{
				creds: map[string]registryauth.Credential{},
				errs: map[string]error{
					ecrHost: accessDenied(ecrHost),
					other:   &registryauth.TokenError{Registry: other, Region: "eu-west-1", Partition: "aws", Kind: registryauth.ErrThrottled},
				},
			}
			s := distributionauth.NewCredentialStore(src, nil)
			for i, h := range tc.calls {
				if i == tc.flip {
					delete(src.errs, ecrHost)
					src.creds[ecrHost] = ecrCredential(ecrHost)
				}
				s.Basic(&url.URL{Scheme: "https", Host: h})
			}
			if tc.wantNil {
				require.NoError(t, s.Err())
				return
			}
			for _, target := range tc.wantIs {
				require.ErrorIs(t, s.Err(), target)
			}
			require.Len(t, s.Err().(interface{ Unwrap() []error }).Unwrap(), len(tc.wantIs))
		})
	}

	t.Run("When the same failure repeats, it should log it at error level once", func(t *testing.T) {
		t.Parallel()
		var logs logBuffer
		s := distributionauth.NewCredentialStore(&fakeSource{errs: map[string]error{ecrHost: accessDenied(ecrHost)}}, nil, distributionauth.WithLogger(logs.logger()))
		for range 3 {
			s.Basic(&url.URL{Scheme: "https", Host: ecrHost})
		}
		require.Equal(t, 1, strings.Count(logs.String(), "Cannot get ECR credentials"))
		require.Equal(t, 2, strings.Count(logs.String(), "Still cannot get ECR credentials"))
	})
}

func TestRefreshToken(t *testing.T) {
	t.Parallel()
	realm := &url.URL{Scheme: "https", Host: "auth.example.com", Path: "/token"}
	tests := []struct {
		name     string
		delegate *staticStore
		want     string
	}{
		{
			name:     "When there is a delegate, it should store and return its refresh tokens",
			delegate: &staticStore{refresh: map[string]string{}},
			want:     "refresh-1",
		},
		{
			name: "When there is no delegate, it should return no refresh token",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var d auth.CredentialStore
			if tc.delegate != nil {
				d = tc.delegate
			}
			s := distributionauth.NewCredentialStore(&fakeSource{}, d)
			s.SetRefreshToken(realm, "registry.example.com", "refresh-1")
			require.Equal(t, tc.want, s.RefreshToken(realm, "registry.example.com"))
		})
	}
}

// ecrLikeRegistry is an in-memory registry that, like ECR, demands Basic
// AWS:<password> on every /v2/ request and challenges with Basic.
type ecrLikeRegistry struct {
	open, protected *httptest.Server
	password        string
	unauthorized    atomic.Int32
}

func newECRLikeRegistry(t *testing.T, password string) *ecrLikeRegistry {
	r := &ecrLikeRegistry{password: password}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("AWS:"+password))
	r.open = httptest.NewServer(h)
	r.protected = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != want {
			r.unauthorized.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="https://`+req.Host+`/",service="ecr.amazonaws.com"`)
			http.Error(w, `{"errors":[{"code":"DENIED","message":"Not Authorized"}]}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.open.Close)
	t.Cleanup(r.protected.Close)
	return r
}

// seed pushes a random image as repo:tag through the open server and
// returns its digest.
func (r *ecrLikeRegistry) seed(t *testing.T, repo, tag string) string {
	img, err := random.Image(256, 1)
	require.NoError(t, err)
	ref, err := name.ParseReference(strings.TrimPrefix(r.open.URL, "http://")+"/"+repo+":"+tag, name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img))
	d, err := img.Digest()
	require.NoError(t, err)
	return d.String()
}

// resolveTag does what HyperShift's registry client does: ping /v2/, learn
// the challenge, then talk to the repository through an authorizing
// transport built on the credential store.
func resolveTag(ctx context.Context, base http.RoundTripper, baseURL, repo, tag string, store auth.CredentialStore) (string, error) {
	mgr := challenge.NewSimpleManager()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v2/", nil)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: base}).Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if err := mgr.AddResponse(resp); err != nil {
		return "", err
	}
	tr := transport.NewTransport(base, auth.NewAuthorizer(mgr, auth.NewBasicHandler(store)))
	named, err := reference.WithName(repo)
	if err != nil {
		return "", err
	}
	r, err := client.NewRepository(named, baseURL, tr)
	if err != nil {
		return "", err
	}
	desc, err := r.Tags(ctx).Get(ctx, tag)
	if err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}

func TestWithDistributionClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		src     func(host string) *fakeSource
		wantErr error
	}{
		{
			name: "When the source has a credential, it should fetch the manifest",
			src: func(host string) *fakeSource {
				return &fakeSource{creds: map[string]registryauth.Credential{host: ecrCredential(host)}}
			},
		},
		{
			name: "When the source is denied, it should get a 401 and Err should say why",
			src: func(host string) *fakeSource {
				return &fakeSource{errs: map[string]error{host: accessDenied(host)}}
			},
			wantErr: registryauth.ErrAccessDenied,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newECRLikeRegistry(t, password)
			want := reg.seed(t, "openshift-release-dev/ocp-release", "4.19.0-x86_64")
			host := strings.TrimPrefix(reg.protected.URL, "http://")
			var logs logBuffer
			store := distributionauth.NewCredentialStore(tc.src(host), nil, distributionauth.WithLogger(logs.logger()))

			got, err := resolveTag(t.Context(), http.DefaultTransport, reg.protected.URL, "openshift-release-dev/ocp-release", "4.19.0-x86_64", store)
			if tc.wantErr != nil {
				require.Error(t, err)
				require.Positive(t, reg.unauthorized.Load(), "the registry must have answered 401")
				require.ErrorIs(t, store.Err(), tc.wantErr)
				require.NotContains(t, logs.String(), password)
				return
			}
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.NoError(t, store.Err())
		})
	}
}

func Example() {
	// In HyperShift, src is the process's *registryauth.Keychain and the
	// delegate is the store built from the pull secret.
	src := &fakeSource{creds: map[string]registryauth.Credential{ecrHost: ecrCredential(ecrHost)}}
	store := distributionauth.NewCredentialStore(src, nil)

	user, pass := store.Basic(&url.URL{Scheme: "https", Host: ecrHost, Path: "/v2/"})
	fmt.Println(user, pass != "")
	user, pass = store.Basic(&url.URL{Scheme: "https", Host: "quay.io", Path: "/v2/"})
	fmt.Printf("%q %q\n", user, pass)
	fmt.Println(store.Err())
	// Output:
	// AWS true
	// "" ""
	// <nil>
}
