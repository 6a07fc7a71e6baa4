package credentialprovider_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// TestRoundTrip runs the protocol end to end: a PluginSource runs the test
// binary as a plugin whose main is Serve over a Keychain, whose real SDK
// client calls the fake ECR over HTTP.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ecr := fakeecr.New(fakeecr.WithRequiredAccessKeyID("AKIDEXAMPLE"))
	srv := httptest.NewServer(ecr.Handler())
	t.Cleanup(srv.Close)

	plugin := func(t *testing.T, opts ...credentialprovider.Option) (*testPlugin, *credentialprovider.PluginSource) {
		p := newTestPlugin(t)
		return p, p.source(modeServe, map[string]string{envECREndpoint: srv.URL}, opts...)
	}

	t.Run("When an ECR image is asked for, it should get the keychain's token, cached per registry for half its life", func(t *testing.T) {
		p, src := plugin(t)
		begin := time.Now()
		cred, err := src.Credential(t.Context(), imageA+":4.18.0")
		require.NoError(t, err)
		require.Equal(t, registryA, cred.Registry)
		require.Equal(t, "AWS", cred.Username)
		require.Equal(t, fakeecr.Password("us-east-1", 1), cred.Password)
		require.WithinRange(t, cred.ExpiresAt, begin.Add(6*time.Hour-time.Minute), time.Now().Add(6*time.Hour))

		// Same registry, another repository: the Registry answer is cached.
		again, err := src.Credential(t.Context(), imageB)
		require.NoError(t, err)
		require.Equal(t, cred, again)
		require.Len(t, p.runs(), 1)
		require.Equal(t, 1, ecr.Calls("us-east-1"))
	})

	t.Run("When the image is outside ECR but inside matchImages, it should get no credentials and cache that", func(t *testing.T) {
		p, src := plugin(t, credentialprovider.WithMatchImages("quay.io", "*.dkr.ecr.*.amazonaws.com"))
		for range 2 {
			_, err := src.Credential(t.Context(), "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64")
			require.ErrorIs(t, err, registryauth.ErrNotECR)
		}
		require.Len(t, p.runs(), 1)
	})

	t.Run("When ECR denies access, it should fail with the plugin's exit code and the keychain's error on stderr", func(t *testing.T) {
		ecr.SetError("eu-west-1", fakeecr.AccessDeniedError())
		_, src := plugin(t)
		_, err := src.Credential(t.Context(), imageC)
		require.ErrorIs(t, err, credentialprovider.ErrPluginFailed)
		var perr *credentialprovider.PluginError
		require.ErrorAs(t, err, &perr)
		require.Equal(t, 1, perr.ExitCode)
		require.Contains(t, perr.Stderr, "access denied")
		require.Contains(t, perr.Stderr, "ecr:GetAuthorizationToken")
	})
}
