package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	credproviderv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"

	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

func kubeletRequest(image string) string {
	return `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"` + image + `"}`
}

func TestCredentialProvider(t *testing.T) {
	t.Parallel()
	const alias = "registry.example.com"
	tests := []struct {
		name       string
		stdin      string
		args       []string
		fail       error // injected on the fake ECR API
		wantCode   int
		wantAuth   string // auth key expected; "" means an empty answer
		wantStderr string
	}{
		{name: "When the kubelet asks for an ECR image, it should answer with a token for the registry",
			stdin: kubeletRequest(mirrorRepo + "@sha256:" + strings.Repeat("a", 64)), wantAuth: ecrHost},
		{name: "When the kubelet asks for an alias host, it should answer for that host",
			stdin: kubeletRequest(alias + "/ocp4/openshift4:4.10.3-x86_64"), args: []string{"--alias", alias + "=" + ecrHost}, wantAuth: alias},
		{name: "When the image is not on ECR, it should answer empty so the kubelet uses other credentials",
			stdin: kubeletRequest("quay.io/openshift-release-dev/ocp-release:4.10.3-x86_64")},
		{name: "When ECR denies the token, it should write nothing and exit 1 with one line",
			stdin: kubeletRequest(ecrHost + "/ocp4/openshift4:4.10.3"), fail: fakeecr.AccessDeniedError(),
			wantCode: exitFailure, wantStderr: "hypershift-ecr credential-provider: credentialprovider: credentials for image"},
		{name: "When the request is not a CredentialProviderRequest, it should exit 1 with one line",
			stdin: `{"apiVersion":"v1","kind":"Pod"}`, wantCode: exitFailure, wantStderr: "malformed credential provider request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, false)
			if tc.fail != nil {
				w.ecrAPI.SetError("us-east-1", tc.fail)
			}
			c, stdout, stderr := w.cli(tc.stdin)
			code := runCLI(t, c, append([]string{"credential-provider"}, tc.args...)...)
			require.Equal(t, tc.wantCode, code, stderr.String())
			requireNoSecret(t, stderr.String())
			if tc.wantCode != exitOK {
				require.Empty(t, stdout.String())
				require.Equal(t, 1, strings.Count(stderr.String(), "\n"))
				require.Contains(t, stderr.String(), tc.wantStderr)
				return
			}
			require.Empty(t, stderr.String())

			resp, err := credentialprovider.ParseResponse(stdout.Bytes())
			require.NoError(t, err)
			require.Equal(t, credproviderv1.RegistryPluginCacheKeyType, resp.CacheKeyType)
			require.NotNil(t, resp.CacheDuration)
			if tc.wantAuth == "" {
				require.Empty(t, resp.Auth)
				require.Zero(t, w.ecrAPI.TotalCalls(), "no token is fetched for another registry")
				return
			}
			require.Len(t, resp.Auth, 1)
			auth, ok := resp.Auth[tc.wantAuth]
			require.True(t, ok, "auth keys: %v", resp.Auth)
			require.Equal(t, "AWS", auth.Username)
			require.Equal(t, fakeecr.Password("us-east-1", 1), auth.Password)
			// Half the remaining life of a 12h token, as ecr-credential-provider answers.
			require.InDelta(t, (6 * time.Hour).Seconds(), resp.CacheDuration.Seconds(), 60)
			reqs := w.ecrAPI.Requests()
			require.Len(t, reqs, 1)
			require.Equal(t, "AKIAFAKESTATIC000000", reqs[0].AccessKeyID, "signed by the loaded AWS configuration")
		})
	}
}
