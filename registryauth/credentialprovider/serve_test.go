package credentialprovider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	clocktesting "k8s.io/utils/clock/testing"
	sigsjson "sigs.k8s.io/json"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// kubeletEncodeRequest encodes a request as the kubelet's execPlugin does:
// the v1 object with its TypeMeta through encoding/json's Encoder, which is
// what apimachinery's JSON serializer runs (hence the trailing newline).
// The apimachinery codec itself needs sigs.k8s.io/yaml, outside this
// module's dependencies.
func kubeletEncodeRequest(t *testing.T, image string) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.NewEncoder(&b).Encode(&v1.CredentialProviderRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: v1.SchemeGroupVersion.String(), Kind: "CredentialProviderRequest"},
		Image:    image,
	}))
	return b.Bytes()
}

// kubeletDecodeResponse decodes a response as the kubelet's strict codec
// does (sigs.k8s.io/json, case-sensitive, no unknown or duplicate field),
// failing the test where the kubelet would refuse it.
func kubeletDecodeResponse(t *testing.T, data []byte) *v1.CredentialProviderResponse {
	t.Helper()
	var resp v1.CredentialProviderResponse
	strict, err := sigsjson.UnmarshalStrict(data, &resp)
	require.NoError(t, err)
	require.Empty(t, strict)
	require.Equal(t, "CredentialProviderResponse", resp.Kind)
	require.Equal(t, v1.SchemeGroupVersion.String(), resp.APIVersion)
	switch resp.CacheKeyType {
	case v1.ImagePluginCacheKeyType, v1.RegistryPluginCacheKeyType, v1.GlobalPluginCacheKeyType:
	default:
		t.Fatalf("the kubelet refuses cacheKeyType %q", resp.CacheKeyType)
	}
	return &resp
}

// newKeychain is a real Keychain over the in-process fake ECR, all on one
// fake clock.
func newKeychain(t *testing.T, clk *clocktesting.FakeClock, opts ...fakeecr.Option) (*registryauth.Keychain, *fakeecr.ECR) {
	t.Helper()
	ecr := fakeecr.New(append([]fakeecr.Option{fakeecr.WithClock(clk)}, opts...)...)
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(ecr.ClientFactory), registryauth.WithClock(clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })
	return kc, ecr
}

func TestServeKubeletRequest(t *testing.T) {
	t.Parallel()
	const image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release"
	tests := []struct {
		name    string
		request []byte
	}{
		{
			name:    "When the kubelet's own encoder wrote the request, it should answer what the kubelet accepts",
			request: kubeletEncodeRequest(t, image),
		},
		{
			name: "When the request carries an empty serviceAccountToken, it should answer what the kubelet accepts",
			// The shape of pkg/credentialprovider/plugin's request, service
			// account fields as a kubelet with tokenAttributes unset sends them.
			request: []byte(`{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + image + `","serviceAccountToken":""}` + "\n"),
		},
		{
			name:    "When a newer kubelet adds a request field, it should still answer",
			request: []byte(`{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + image + `","podNamespace":"openshift-etcd"}`),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
			kc, ecr := newKeychain(t, clk)
			var stdout bytes.Buffer
			err := credentialprovider.Serve(t.Context(), kc, bytes.NewReader(tc.request), &stdout, credentialprovider.WithServeClock(clk))
			require.NoError(t, err)

			resp := kubeletDecodeResponse(t, stdout.Bytes())
			require.Equal(t, v1.RegistryPluginCacheKeyType, resp.CacheKeyType)
			require.Equal(t, &metav1.Duration{Duration: 6 * time.Hour}, resp.CacheDuration, "half of a 12h token")
			require.Equal(t, map[string]v1.AuthConfig{
				"123456789012.dkr.ecr.us-east-1.amazonaws.com": {Username: "AWS", Password: fakeecr.Password("us-east-1", 1)},
			}, resp.Auth)
			require.Equal(t, 1, ecr.TotalCalls())

			// ParseResponse accepts what Serve writes.
			parsed, err := credentialprovider.ParseResponse(stdout.Bytes())
			require.NoError(t, err)
			require.Equal(t, v1.RegistryPluginCacheKeyType, parsed.CacheKeyType)
		})
	}
}

func TestServeNotECR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		image        string
		opts         []credentialprovider.ServeOption
		wantDuration time.Duration
	}{
		{name: "When the image is not ECR, it should answer without auth for the default duration", image: "quay.io/openshift-release-dev/ocp-release", wantDuration: credentialprovider.DefaultNotECRCacheDuration},
		{name: "When the image is on ECR Public, it should answer without auth", image: "public.ecr.aws/docker/library/busybox", wantDuration: credentialprovider.DefaultNotECRCacheDuration},
		{name: "When the not-ECR duration is 0, it should tell the kubelet not to cache", image: "quay.io/openshift-release-dev/ocp-release", opts: []credentialprovider.ServeOption{credentialprovider.WithNotECRCacheDuration(0)}, wantDuration: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
			kc, ecr := newKeychain(t, clk)
			var stdout bytes.Buffer
			err := credentialprovider.Serve(t.Context(), kc, bytes.NewReader(kubeletEncodeRequest(t, tc.image)), &stdout, tc.opts...)
			require.NoError(t, err)
			resp := kubeletDecodeResponse(t, stdout.Bytes())
			require.Empty(t, resp.Auth)
			require.Equal(t, &metav1.Duration{Duration: tc.wantDuration}, resp.CacheDuration)
			require.Zero(t, ecr.TotalCalls())
		})
	}
}

// sourceFunc adapts a function to registryauth.CredentialSource.
type sourceFunc func(ctx context.Context, image string) (registryauth.Credential, error)

func (f sourceFunc) Credential(ctx context.Context, image string) (registryauth.Credential, error) {
	return f(ctx, image)
}

func TestServeAnswer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		image        string
		expiresAt    time.Time
		wantKey      string
		wantDuration time.Duration
	}{
		{name: "When the token has 12h left, it should cache for 6h", image: imageA, expiresAt: now.Add(12 * time.Hour), wantKey: registryA, wantDuration: 6 * time.Hour},
		{name: "When the half life has a fraction, it should round down to whole seconds", image: imageA, expiresAt: now.Add(3*time.Second + 999*time.Millisecond), wantKey: registryA, wantDuration: time.Second},
		{name: "When less than two seconds are left, it should tell the kubelet not to cache", image: imageA, expiresAt: now.Add(time.Second), wantKey: registryA, wantDuration: 0},
		{name: "When the expiry is unknown, it should tell the kubelet not to cache", image: imageA, wantKey: registryA, wantDuration: 0},
		{name: "When the image spells its registry with capitals and a port, it should key the answer as the kubelet will match it", image: "123456789012.DKR.ECR.us-east-1.amazonaws.com:443/team-a/app", expiresAt: now.Add(time.Hour), wantKey: "123456789012.DKR.ECR.us-east-1.amazonaws.com:443", wantDuration: 30 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked string
			src := sourceFunc(func(_ context.Context, image string) (registryauth.Credential, error) {
				asked = image
				return registryauth.Credential{Registry: registryA, Username: "AWS", Password: "pw-serve", ExpiresAt: tc.expiresAt}, nil
			})
			var stdout bytes.Buffer
			err := credentialprovider.Serve(t.Context(), src, bytes.NewReader(kubeletEncodeRequest(t, tc.image)), &stdout,
				credentialprovider.WithServeClock(clocktesting.NewFakePassiveClock(now)))
			require.NoError(t, err)
			require.Equal(t, tc.image, asked)
			resp := kubeletDecodeResponse(t, stdout.Bytes())
			require.Equal(t, &metav1.Duration{Duration: tc.wantDuration}, resp.CacheDuration)
			require.Equal(t, map[string]v1.AuthConfig{tc.wantKey: {Username: "AWS", Password: "pw-serve"}}, resp.Auth)
		})
	}
}

func TestServeErrors(t *testing.T) {
	t.Parallel()
	const saToken = "eyJhbGciOiJSUzI1NiJ9.sa-token-secret"
	tests := []struct {
		name    string
		request string
		setup   func(*fakeecr.ECR)
		wantErr error
	}{
		{name: "When stdin is empty, it should refuse", request: "", wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When stdin is not JSON, it should refuse", request: "image=" + imageA, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When the JSON is cut short, it should refuse", request: `{"kind":"CredentialProviderRequest","serviceAccountToken":"` + saToken + `"`, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When the request is v1beta1, it should refuse naming the version", request: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","image":"` + imageA + `","serviceAccountToken":"` + saToken + `"}`, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When the kind is wrong, it should refuse", request: `{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + imageA + `"}`, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When the image is missing, it should refuse", request: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","serviceAccountToken":"` + saToken + `"}`, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When a field is duplicated, it should refuse", request: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + imageA + `","image":"quay.io/x"}`, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When a field has the wrong type, it should refuse", request: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":42,"serviceAccountToken":"` + saToken + `"}`, wantErr: credentialprovider.ErrMalformedRequest},
		{name: "When a field name has other case, it should not take it for the image", request: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","Image":"` + imageA + `"}`, wantErr: credentialprovider.ErrMalformedRequest},
		{
			name:    "When ECR denies access, it should return the keychain's error and write nothing",
			request: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + imageA + `","serviceAccountToken":"` + saToken + `"}`,
			setup:   func(e *fakeecr.ECR) { e.SetError("us-east-1", fakeecr.AccessDeniedError()) },
			wantErr: registryauth.ErrAccessDenied,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
			kc, ecr := newKeychain(t, clk)
			if tc.setup != nil {
				tc.setup(ecr)
			}
			var stdout bytes.Buffer
			err := credentialprovider.Serve(t.Context(), kc, strings.NewReader(tc.request), &stdout)
			require.ErrorIs(t, err, tc.wantErr)
			require.Zero(t, stdout.Len(), "a failure must write no response")
			require.NotContains(t, err.Error(), saToken)
			require.NotContains(t, err.Error(), "sa-token-secret")
		})
	}
}

func TestServeOptions(t *testing.T) {
	t.Parallel()
	src := sourceFunc(func(context.Context, string) (registryauth.Credential, error) { return registryauth.Credential{}, nil })
	req := kubeletEncodeRequest(t, imageA)
	require.Error(t, credentialprovider.Serve(t.Context(), src, bytes.NewReader(req), &bytes.Buffer{}, credentialprovider.WithNotECRCacheDuration(-time.Second)))
	require.Error(t, credentialprovider.Serve(t.Context(), src, bytes.NewReader(req), &bytes.Buffer{}, credentialprovider.WithServeClock(nil)))
	require.Error(t, credentialprovider.Serve(t.Context(), nil, bytes.NewReader(req), &bytes.Buffer{}))
}

// FuzzServeRequest checks that no request panics Serve, that every answer
// is one the kubelet accepts, and that no error quotes a service account
// token.
func FuzzServeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"` + imageA + `"}`,
		`{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"quay.io/x","serviceAccountToken":"satokensecret1"}`,
		`{"kind":"CredentialProviderRequest","apiVersion":"satokensecret1","serviceAccountToken":"satokensecret1"}`,
		`{"kind":"CredentialProviderRequest","serviceAccountToken":"satokensecret1","serviceAccountToken":"satokensecret2"`,
		``, `[]`, `null`,
	} {
		f.Add([]byte(seed))
	}
	src := sourceFunc(func(_ context.Context, image string) (registryauth.Credential, error) {
		if !strings.Contains(image, ".dkr.ecr.") {
			return registryauth.Credential{}, registryauth.ErrNotECR
		}
		return registryauth.Credential{Registry: registryA, Username: "AWS", Password: "pw-fuzz", ExpiresAt: time.Now().Add(time.Hour)}, nil
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		var stdout bytes.Buffer
		err := credentialprovider.Serve(context.Background(), src, bytes.NewReader(data), &stdout)
		if err == nil {
			_, perr := credentialprovider.ParseResponse(stdout.Bytes())
			require.NoError(t, perr)
			return
		}
		require.Zero(t, stdout.Len())
		var req struct {
			Token string `json:"serviceAccountToken"`
		}
		if json.Unmarshal(data, &req) == nil && len(req.Token) >= 8 && strings.Trim(req.Token, "0123456789") != "" {
			require.NotContains(t, err.Error(), req.Token)
		}
	})
}
