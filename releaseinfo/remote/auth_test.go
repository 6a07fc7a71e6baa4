package remote_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
)

// TestLookupECRTokens reads a release from an ECR-like registry whose passwords rotate, with
// the process keychain (registryauth + fakeecr) plugged in through ggcrauth.
func TestLookupECRTokens(t *testing.T) {
	t.Parallel()
	const region = "us-east-1"
	tests := []struct {
		name string
		// between runs after a first successful lookup; the second lookup's outcome is checked.
		between   func(f *fakeecr.ECR, reg *fakeregistry.Registry, kc *registryauth.Keychain)
		wantErrIs error
		wantCode  int
		wantCalls int
	}{
		{
			name:      "When the token is warm, it should read again without calling ECR",
			between:   func(*fakeecr.ECR, *fakeregistry.Registry, *registryauth.Keychain) {},
			wantCalls: 1,
		},
		{
			name: "When ECR rotates the password, it should read with the new token",
			between: func(_ *fakeecr.ECR, reg *fakeregistry.Registry, kc *registryauth.Keychain) {
				reg.RevokeAll()
				kc.Forget(ecrHost)
			},
			wantCalls: 2,
		},
		{
			name: "When the registry revoked the token the keychain holds, it should fail with 401 and no token in the error",
			between: func(_ *fakeecr.ECR, reg *fakeregistry.Registry, _ *registryauth.Keychain) {
				reg.RevokeAll()
			},
			wantCode:  http.StatusUnauthorized,
			wantCalls: 1,
		},
		{
			name: "When ECR denies the identity, it should fail with registryauth.ErrAccessDenied, not anonymously",
			between: func(f *fakeecr.ECR, _ *fakeregistry.Registry, kc *registryauth.Keychain) {
				f.SetError(region, fakeecr.AccessDeniedError())
				kc.Forget(ecrHost)
			},
			wantErrIs: registryauth.ErrAccessDenied,
			wantCalls: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New()
			// Only the newest password ECR handed out opens the registry.
			reg := fakeregistry.New(t, fakeregistry.WithAuthenticator(func(user, pass string) bool {
				return user == "AWS" && pass == fakeecr.Password(region, f.Calls(region))
			}))
			push(t, reg, releaseTag, build(t))
			kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(f.ClientFactory))
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })
			r, err := remote.NewReader(
				remote.WithTransport(reg.Transport()),
				remote.WithKeychain(authn.NewMultiKeychain(ggcrauth.NewKeychain(kc))),
			)
			require.NoError(t, err)

			_, err = r.Lookup(t.Context(), releaseTag)
			require.NoError(t, err)
			tc.between(f, reg, kc)
			rel, err := r.Lookup(t.Context(), releaseTag)

			require.Equal(t, tc.wantCalls, f.Calls(region))
			require.Zero(t, reg.Stats().S3WithAuthorization)
			if tc.wantErrIs == nil && tc.wantCode == 0 {
				require.NoError(t, err)
				require.Equal(t, 1, rel.Stats.LayersRead)
				return
			}
			require.Error(t, err)
			if tc.wantErrIs != nil {
				require.ErrorIs(t, err, tc.wantErrIs)
			}
			if tc.wantCode != 0 {
				var terr *transport.Error
				require.ErrorAs(t, err, &terr)
				require.Equal(t, tc.wantCode, terr.StatusCode)
			}
			for i := 1; i <= f.Calls(region); i++ {
				require.NotContains(t, err.Error(), fakeecr.Password(region, i))
			}
		})
	}
}

func TestLookupWithPullSecret(t *testing.T) {
	t.Parallel()
	const password = "pull-secret-password"
	auth := func(pass string) string { return base64.StdEncoding.EncodeToString([]byte("AWS:" + pass)) }
	secret := func(entries ...string) []byte { // key, password pairs
		out := `{"auths":{`
		for i := 0; i < len(entries); i += 2 {
			if i > 0 {
				out += ","
			}
			out += fmt.Sprintf("%q:{%q:%q}", entries[i], "auth", auth(entries[i+1]))
		}
		return []byte(out + "}}")
	}
	tests := []struct {
		name       string
		pullSecret []byte
		anonymous  bool // read from an anonymous quay.io instead of the ECR registry
		wantCode   int
		wantErrIs  error
	}{
		{
			name:       "When the pull secret has an entry for the registry host, it should read with it",
			pullSecret: secret(ecrHost, password, "quay.io", "other"),
		},
		{
			name:       "When the entry is written as a URL with a legacy API path, it should still match the host",
			pullSecret: secret("https://"+ecrHost+"/v2/", password),
		},
		{
			name:       "When the entry is a glob over one DNS label, it should match the ECR host",
			pullSecret: secret("*.dkr.ecr.us-east-1.amazonaws.com", password),
		},
		{
			name:       "When a repository entry is more specific than the host entry, it should win",
			pullSecret: secret(ecrHost, "stale", ecrHost+"/ocp4/openshift4", password),
		},
		{
			name:       "When a literal host and a glob both match, it should use the literal host",
			pullSecret: secret("*.dkr.ecr.us-east-1.amazonaws.com", "stale", ecrHost, password),
		},
		{
			name:       "When a repository entry ends inside a path segment, it should not match",
			pullSecret: secret(ecrHost+"/ocp", password),
			wantCode:   http.StatusUnauthorized,
		},
		{
			name:       "When the pull secret has no entry for the registry, it should read anonymously and get the 401",
			pullSecret: secret("quay.io", password),
			wantCode:   http.StatusUnauthorized,
		},
		{
			name:       "When the pull secret is empty and the registry is public, it should read anonymously",
			pullSecret: nil,
			anonymous:  true,
		},
		{
			name:       "When the pull secret is malformed, it should fail with dockerconfig.ErrMalformed before any request",
			pullSecret: []byte(`{"auths":{"` + ecrHost + `":{"auth":"` + password + `!"}}}`),
			wantErrIs:  dockerconfig.ErrMalformed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var reg *fakeregistry.Registry
			image := releaseTag
			if tc.anonymous {
				reg = fakeregistry.New(t, fakeregistry.WithHost("quay.io"), fakeregistry.WithAnonymous())
				image = quayRepo + ":4.10.3-x86_64"
			} else {
				reg = fakeregistry.New(t, fakeregistry.WithBasicAuth("AWS", password))
			}
			push(t, reg, image, build(t))
			// The reader's own keychain holds a wrong credential: the pull secret must replace it.
			r, err := remote.NewReader(
				remote.WithTransport(reg.Transport()),
				remote.WithKeychain(hostKeychain{ecrHost: authn.FromConfig(authn.AuthConfig{Username: "AWS", Password: "keychain"})}),
			)
			require.NoError(t, err)
			reg.Reset()

			rel, err := r.LookupWithPullSecret(t.Context(), image, tc.pullSecret)
			if tc.wantCode == 0 && tc.wantErrIs == nil {
				require.NoError(t, err)
				require.Equal(t, 1, rel.Stats.LayersRead)
				require.Zero(t, reg.Stats().S3WithAuthorization)
				return
			}
			require.Error(t, err)
			require.Nil(t, rel)
			require.NotContains(t, err.Error(), password)
			require.NotContains(t, err.Error(), auth(password))
			if tc.wantErrIs != nil {
				require.ErrorIs(t, err, tc.wantErrIs)
				require.Empty(t, reg.Requests())
			}
			if tc.wantCode != 0 {
				var terr *transport.Error
				require.ErrorAs(t, err, &terr)
				require.Equal(t, tc.wantCode, terr.StatusCode)
			}
		})
	}
}
