package ggcrauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
)

const ecrHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"

// fakeSource is a registryauth.CredentialSource. ECR hosts are those in
// passwords; each lookup returns the host's current password.
type fakeSource struct {
	mu        sync.Mutex
	passwords map[string]string
	errs      map[string]error
	calls     atomic.Int32
}

func (f *fakeSource) Credential(_ context.Context, host string) (registryauth.Credential, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err, ok := f.errs[host]; ok {
		return registryauth.Credential{}, err
	}
	if p, ok := f.passwords[host]; ok {
		return registryauth.Credential{Registry: host, Username: "AWS", Password: p, ExpiresAt: time.Now().Add(12 * time.Hour)}, nil
	}
	return registryauth.Credential{}, &registryauth.NotECRError{Input: host}
}

func (f *fakeSource) set(host, password string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passwords[host] = password
}

func accessDenied(host string) error {
	return &registryauth.TokenError{
		Registry: host, Region: "us-east-1", Partition: "aws", Kind: registryauth.ErrAccessDenied,
		Err: errors.New("AccessDeniedException: not authorized to perform ecr:GetAuthorizationToken"),
	}
}

func mustRegistry(t *testing.T, s string) name.Registry {
	t.Helper()
	r, err := name.NewRegistry(s)
	require.NoError(t, err)
	return r
}

func TestResolveContext(t *testing.T) {
	t.Parallel()
	const pass = "ecr-password-1"
	tests := []struct {
		name     string
		kc       *ggcrauth.Keychain
		resource string
		wantAnon bool
		wantAuth *authn.AuthConfig
		wantErr  error
	}{
		{
			name:     "When the registry is ECR, it should return the source's credential",
			kc:       ggcrauth.NewKeychain(&fakeSource{passwords: map[string]string{ecrHost: pass}}),
			resource: ecrHost,
			wantAuth: &authn.AuthConfig{Username: "AWS", Password: pass},
		},
		{
			name:     "When the registry is not ECR, it should return Anonymous",
			kc:       ggcrauth.NewKeychain(&fakeSource{passwords: map[string]string{ecrHost: pass}}),
			resource: "quay.io",
			wantAnon: true,
		},
		{
			name: "When the registry is ECR Public, it should return Anonymous",
			kc: ggcrauth.NewKeychain(&fakeSource{errs: map[string]error{
				"public.ecr.aws": fmt.Errorf("ecr: public.ecr.aws: %w", registryauth.ErrPublicRegistry),
			}}),
			resource: "public.ecr.aws",
			wantAnon: true,
		},
		{
			name:     "When the source is denied, it should return the error, not Anonymous",
			kc:       ggcrauth.NewKeychain(&fakeSource{errs: map[string]error{ecrHost: accessDenied(ecrHost)}}),
			resource: ecrHost,
			wantErr:  registryauth.ErrAccessDenied,
		},
		{
			name:     "When the keychain is the zero value, it should return Anonymous",
			kc:       &ggcrauth.Keychain{},
			resource: ecrHost,
			wantAnon: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			auth, err := tc.kc.ResolveContext(t.Context(), mustRegistry(t, tc.resource))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Nil(t, auth)
				require.Contains(t, err.Error(), ecrHost)
				return
			}
			require.NoError(t, err)
			if tc.wantAnon {
				require.Equal(t, authn.Anonymous, auth)
				return
			}
			require.NotEqual(t, authn.Anonymous, auth)
			cfg, err := authn.Authorization(t.Context(), auth)
			require.NoError(t, err)
			require.Equal(t, tc.wantAuth, cfg)
			for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
				require.NotContains(t, fmt.Sprintf(format, auth), pass, "format %s", format)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	t.Run("When Resolve is called without a context, it should behave as ResolveContext", func(t *testing.T) {
		t.Parallel()
		kc := ggcrauth.NewKeychain(&fakeSource{passwords: map[string]string{ecrHost: "p"}})
		auth, err := kc.Resolve(mustRegistry(t, ecrHost))
		require.NoError(t, err)
		cfg, err := auth.Authorization()
		require.NoError(t, err)
		require.Equal(t, "AWS", cfg.Username)
	})

	t.Run("When the token rotates after resolving, it should hand out the new one", func(t *testing.T) {
		t.Parallel()
		src := &fakeSource{passwords: map[string]string{ecrHost: "old"}}
		auth, err := ggcrauth.NewKeychain(src).Resolve(mustRegistry(t, ecrHost))
		require.NoError(t, err)
		src.set(ecrHost, "new")
		cfg, err := auth.Authorization()
		require.NoError(t, err)
		require.Equal(t, "new", cfg.Password)
	})

	t.Run("When the source starts failing after resolving, it should return the error", func(t *testing.T) {
		t.Parallel()
		src := &fakeSource{passwords: map[string]string{ecrHost: "old"}, errs: map[string]error{}}
		auth, err := ggcrauth.NewKeychain(src).Resolve(mustRegistry(t, ecrHost))
		require.NoError(t, err)
		src.mu.Lock()
		src.errs[ecrHost] = accessDenied(ecrHost)
		src.mu.Unlock()
		_, err = auth.Authorization()
		require.ErrorIs(t, err, registryauth.ErrAccessDenied)
	})
}

// ecrLikeRegistry is an in-memory registry that, like ECR, demands Basic
// AWS:<password> on every request and challenges with Basic.
type ecrLikeRegistry struct {
	open, protected *httptest.Server
	host            string // host:port of protected
	mu              sync.Mutex
	password        string
	unauthorized    atomic.Int32
}

func newECRLikeRegistry(t *testing.T, password string) *ecrLikeRegistry {
	r := &ecrLikeRegistry{password: password}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.open = httptest.NewServer(h)
	r.protected = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte("AWS:"+r.password))
		r.mu.Unlock()
		if req.Header.Get("Authorization") != want {
			r.unauthorized.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="https://`+req.Host+`/",service="ecr.amazonaws.com"`)
			http.Error(w, `{"errors":[{"code":"DENIED","message":"Not Authorized"}]}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, req)
	}))
	r.host = strings.TrimPrefix(r.protected.URL, "http://")
	t.Cleanup(r.open.Close)
	t.Cleanup(r.protected.Close)
	return r
}

func (r *ecrLikeRegistry) setPassword(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.password = p
}

// seed pushes a random image through the open server and returns the
// reference of the image on the protected one.
func (r *ecrLikeRegistry) seed(t *testing.T, repo string) name.Reference {
	img, err := random.Image(256, 2)
	require.NoError(t, err)
	open, err := name.ParseReference(strings.TrimPrefix(r.open.URL, "http://")+"/"+repo, name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(open, img))
	ref, err := name.ParseReference(r.host+"/"+repo, name.Insecure)
	require.NoError(t, err)
	return ref
}

func TestWithRemote(t *testing.T) {
	t.Parallel()
	const pass = "ecr-password-1"
	tests := []struct {
		name    string
		src     func(host string) *fakeSource
		wantErr error
	}{
		{
			name:    "When the source has the registry's password, it should pull the image",
			src:     func(host string) *fakeSource { return &fakeSource{passwords: map[string]string{host: pass}} },
			wantErr: nil,
		},
		{
			name: "When the source is denied, it should fail with the IAM error, not a bare 401",
			src: func(host string) *fakeSource {
				return &fakeSource{errs: map[string]error{host: accessDenied(host)}}
			},
			wantErr: registryauth.ErrAccessDenied,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newECRLikeRegistry(t, pass)
			ref := reg.seed(t, "openshift-release-dev/ocp-v4.0-art-dev:4.19.0-x86_64")
			kc := ggcrauth.NewKeychain(tc.src(reg.host))

			desc, err := remote.Head(ref, remote.WithAuthFromKeychain(kc), remote.WithContext(t.Context()))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), pass)
				return
			}
			require.NoError(t, err)
			img, err := remote.Image(ref, remote.WithAuthFromKeychain(kc), remote.WithContext(t.Context()))
			require.NoError(t, err)
			d, err := img.Digest()
			require.NoError(t, err)
			require.Equal(t, desc.Digest, d)
			layers, err := img.Layers()
			require.NoError(t, err)
			for _, l := range layers {
				rc, err := l.Compressed()
				require.NoError(t, err)
				_, err = io.Copy(io.Discard, rc)
				require.NoError(t, err)
				require.NoError(t, rc.Close())
			}
		})
	}

	t.Run("When the registry rotates its password during a pull, it should follow the source", func(t *testing.T) {
		t.Parallel()
		reg := newECRLikeRegistry(t, "old")
		ref := reg.seed(t, "openshift-release-dev/ocp-release:4.19.0-x86_64")
		src := &fakeSource{passwords: map[string]string{reg.host: "old"}}
		img, err := remote.Image(ref, remote.WithAuthFromKeychain(ggcrauth.NewKeychain(src)))
		require.NoError(t, err)
		reg.setPassword("new")
		src.set(reg.host, "new")
		// Layers are fetched through the transport made for the manifest.
		layers, err := img.Layers()
		require.NoError(t, err)
		rc, err := layers[0].Compressed()
		require.NoError(t, err)
		require.NoError(t, rc.Close())
	})
}

// staticKeychain stands for authn.DefaultKeychain: it knows one host.
type staticKeychain struct {
	host string
	cfg  authn.AuthConfig
}

func (s staticKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() == s.host {
		return authn.FromConfig(s.cfg), nil
	}
	return authn.Anonymous, nil
}

func TestMultiKeychain(t *testing.T) {
	t.Parallel()
	const quay = "quay.io"
	src := &fakeSource{
		passwords: map[string]string{ecrHost: "ecr-pass"},
		errs:      map[string]error{"210987654321.dkr.ecr.eu-west-1.amazonaws.com": accessDenied("210987654321.dkr.ecr.eu-west-1.amazonaws.com")},
	}
	next := staticKeychain{host: quay, cfg: authn.AuthConfig{Username: "robot", Password: "quay-pass"}}
	// A pull-secret keychain that also (wrongly) holds an ECR entry: ours
	// comes first, so it must win for ECR hosts.
	stale := staticKeychain{host: ecrHost, cfg: authn.AuthConfig{Username: "AWS", Password: "stale"}}
	kc := authn.NewMultiKeychain(ggcrauth.NewKeychain(src), next, stale)
	tests := []struct {
		name     string
		resource string
		want     *authn.AuthConfig
		wantErr  error
	}{
		{
			name:     "When the registry is ECR, it should use our keychain first",
			resource: ecrHost,
			want:     &authn.AuthConfig{Username: "AWS", Password: "ecr-pass"},
		},
		{
			name:     "When the registry is not ECR, it should go on to the next keychain",
			resource: quay,
			want:     &authn.AuthConfig{Username: "robot", Password: "quay-pass"},
		},
		{
			name:     "When no keychain knows the registry, it should be anonymous",
			resource: "registry.redhat.io",
			want:     &authn.AuthConfig{},
		},
		{
			name:     "When our keychain fails for an ECR host, it should stop the chain with the error",
			resource: "210987654321.dkr.ecr.eu-west-1.amazonaws.com",
			wantErr:  registryauth.ErrAccessDenied,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			auth, err := authn.Resolve(t.Context(), kc, mustRegistry(t, tc.resource))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			cfg, err := authn.Authorization(t.Context(), auth)
			require.NoError(t, err)
			require.Equal(t, tc.want, cfg)
		})
	}
}

func Example() {
	// In HyperShift, src is the process's *registryauth.Keychain.
	src := &fakeSource{passwords: map[string]string{ecrHost: "ecr-password"}}
	kc := authn.NewMultiKeychain(ggcrauth.NewKeychain(src), authn.DefaultKeychain)
	_ = kc // remote.Image(ref, remote.WithAuthFromKeychain(kc))

	ours := ggcrauth.NewKeychain(src)
	for _, host := range []string{ecrHost, "quay.io"} {
		reg, _ := name.NewRegistry(host)
		auth, _ := ours.Resolve(reg)
		cfg, _ := auth.Authorization()
		fmt.Printf("%s: anonymous=%t user=%q\n", host, auth == authn.Anonymous, cfg.Username)
	}
	// Output:
	// 123456789012.dkr.ecr.us-east-1.amazonaws.com: anonymous=false user="AWS"
	// quay.io: anonymous=true user=""
}

type forgettingSource struct {
	registryauth.CredentialSource
	forgot []string
}

func (f *forgettingSource) Forget(host string) { f.forgot = append(f.forgot, host) }

func TestForget(t *testing.T) {
	t.Parallel()
	t.Run("When the source can forget, it should pass the host on", func(t *testing.T) {
		src := &forgettingSource{}
		ggcrauth.NewKeychain(src).Forget("123456789012.dkr.ecr.us-east-1.amazonaws.com")
		require.Equal(t, []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com"}, src.forgot)
	})
	t.Run("When the source cannot forget, it should do nothing", func(t *testing.T) {
		var kc ggcrauth.Keychain
		require.NotPanics(t, func() { kc.Forget("123456789012.dkr.ecr.us-east-1.amazonaws.com") })
	})
}
