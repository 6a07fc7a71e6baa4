package fakeimds_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeimds"
)

// isolateAWSEnv leaves the SDK nothing but the metadata service at
// endpoint: every AWS_* variable is removed (and restored after the test),
// the shared files are empty, so the credential chain falls through to the
// instance role. Tests using it cannot run in parallel (t.Setenv).
func isolateAWSEnv(t *testing.T, endpoint string, extra map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "") // registers the restore
			require.NoError(t, os.Unsetenv(k))
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"config", "credentials"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o600))
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint)
	for k, v := range extra {
		t.Setenv(k, v)
	}
}

func TestSDKMetadataClient(t *testing.T) {
	t.Parallel()
	m := fakeimds.New(fakeimds.WithRegion("eu-central-1"))
	srv := serve(t, m)
	client := imds.New(imds.Options{Endpoint: srv.URL})

	region, err := client.GetRegion(t.Context(), &imds.GetRegionInput{})
	require.NoError(t, err)
	require.Equal(t, "eu-central-1", region.Region)

	doc, err := client.GetInstanceIdentityDocument(t.Context(), &imds.GetInstanceIdentityDocumentInput{})
	require.NoError(t, err)
	require.Equal(t, fakeimds.DefaultAccountID, doc.AccountID)
	require.Equal(t, fakeimds.DefaultInstanceID, doc.InstanceID)

	// The SDK fetched one session token and reused it for both reads.
	require.Equal(t, 1, m.Calls(fakeimds.TokenPath))
	require.Equal(t, 2, m.Calls(fakeimds.IdentityDocumentPath))
}

// TestInstanceRoleEndToEnd proves the instance-role path with the real
// SDK: the region comes from the identity document, the credentials from
// the role, and a Keychain signs GetAuthorizationToken with the role's key
// (the fake ECR refuses any other key).
func TestInstanceRoleEndToEnd(t *testing.T) {
	m := fakeimds.New(fakeimds.WithRegion("eu-west-1"))
	imdsSrv := serve(t, m)
	ecr := fakeecr.New(fakeecr.WithRequiredAccessKeyID(fakeimds.AccessKeyID(1)))
	ecrSrv := httptest.NewServer(ecr.Handler())
	t.Cleanup(ecrSrv.Close)
	isolateAWSEnv(t, imdsSrv.URL, nil)

	cfg, err := config.LoadDefaultConfig(t.Context(), config.WithEC2IMDSRegion())
	require.NoError(t, err)
	require.Equal(t, "eu-west-1", cfg.Region, "the region should come from the instance identity document")

	creds, err := cfg.Credentials.Retrieve(t.Context())
	require.NoError(t, err)
	require.Equal(t, fakeimds.AccessKeyID(1), creds.AccessKeyID)
	require.Equal(t, fakeimds.SessionToken(1), creds.SessionToken)

	kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg, registryauth.WithEndpoint(ecrSrv.URL)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })

	registry := "123456789012.dkr.ecr." + cfg.Region + ".amazonaws.com"
	cred, err := kc.Credential(t.Context(), registry+"/openshift/release:4.18.0-x86_64")
	require.NoError(t, err)
	require.Equal(t, registry, cred.Registry)
	require.Equal(t, "AWS", cred.Username)
	require.Equal(t, fakeecr.Password("eu-west-1", 1), cred.Password)

	reqs := ecr.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, fakeimds.AccessKeyID(1), reqs[0].AccessKeyID)
	require.Equal(t, "eu-west-1", reqs[0].Region)
	require.Equal(t, 1, m.Calls(fakeimds.SecurityCredentialsPath+fakeimds.DefaultRoleName), "the SDK should cache the role's credentials")
}

func TestInstanceRoleFaults(t *testing.T) {
	tests := []struct {
		name string
		opt  fakeimds.Option
	}{
		{name: "When the pod is one hop too far for IMDSv2, it should fail with ErrNoAWSCredentials naming IMDS", opt: fakeimds.WithHopLimitExceeded()},
		{name: "When no metadata service answers, it should fail with ErrNoAWSCredentials naming IMDS", opt: fakeimds.WithUnavailable()},
		{name: "When the instance has no instance profile, it should fail with ErrNoAWSCredentials naming IMDS", opt: fakeimds.WithRoleName("")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := fakeimds.New(tc.opt)
			imdsSrv := serve(t, m)
			ecr := fakeecr.New()
			ecrSrv := httptest.NewServer(ecr.Handler())
			t.Cleanup(ecrSrv.Close)
			// The region is known, as it would be from the HostedCluster.
			isolateAWSEnv(t, imdsSrv.URL, map[string]string{"AWS_REGION": "us-east-1"})

			cfg, err := config.LoadDefaultConfig(t.Context())
			require.NoError(t, err)
			const fetchTimeout = 1500 * time.Millisecond
			kc, err := registryauth.NewKeychain(
				registryauth.WithAWSConfig(cfg, registryauth.WithEndpoint(ecrSrv.URL)),
				registryauth.WithFetchTimeout(fetchTimeout),
			)
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })

			ctx, cancel := context.WithTimeout(t.Context(), 2*fetchTimeout)
			defer cancel()
			begin := time.Now()
			_, err = kc.Credential(ctx, "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release")
			require.Less(t, time.Since(begin), 2*fetchTimeout, "the wait should be bounded by the fetch timeout")
			require.ErrorIs(t, err, registryauth.ErrNoAWSCredentials)
			var tokErr *registryauth.TokenError
			require.ErrorAs(t, err, &tokErr)
			require.Contains(t, tokErr.Hint, "IMDS")
			require.NotContains(t, err.Error(), fakeimds.SecretAccessKey(1))
			require.Zero(t, ecr.TotalCalls(), "an unsigned call must never reach ECR")
			require.Positive(t, m.Calls(fakeimds.TokenPath))
		})
	}
}
