//go:build conformance

package conformance

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeimds"
)

// isolateAWSEnv leaves the SDK nothing but the metadata service at endpoint:
// every AWS_* variable of the caller is removed (and restored after the
// test) and the shared files are empty, so the credential chain falls
// through to the instance role.
func isolateAWSEnv(t *testing.T, endpoint string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "") // registers the restore
			harness.must(t, "unset "+k, os.Unsetenv(k))
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"config", "credentials"} {
		harness.must(t, "write empty shared "+f+" file", os.WriteFile(filepath.Join(dir, f), nil, 0o600))
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint)
}

// TestSDKInstanceRole proves the EC2 instance-role path end to end with the
// real AWS SDK: config.LoadDefaultConfig, with no keys in the environment,
// takes the region from IMDSv2's identity document and the role's keys from
// IMDSv2; our Keychain signs GetAuthorizationToken with exactly those keys
// (the fake ECR refuses any other) at the endpoint named the way operators
// name it; and the token it gets opens the real docker-registry.
func TestSDKInstanceRole(t *testing.T) {
	tests := []struct {
		name string
		// viaEnv sets AWS_ENDPOINT_URL_ECR; otherwise WithEndpoint is used.
		viaEnv bool
	}{
		{name: "When the ECR endpoint comes from AWS_ENDPOINT_URL_ECR, it should sign with the IMDS role and open the registry", viaEnv: true},
		{name: "When the ECR endpoint is set with WithEndpoint, it should sign with the IMDS role and open the registry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			reg := startRegistry(t)
			imds := fakeimds.New(fakeimds.WithRegion(region))
			imdsSrv := httptest.NewServer(imds.Handler())
			t.Cleanup(imdsSrv.Close)
			t.Cleanup(imds.Close)
			ecr := startECR(t, reg, fakeecr.WithRequiredAccessKeyID(fakeimds.AccessKeyID(1)))
			isolateAWSEnv(t, imdsSrv.URL)

			cfg, err := config.LoadDefaultConfig(ctx, config.WithEC2IMDSRegion())
			awsSDK.must(t, "LoadDefaultConfig with WithEC2IMDSRegion over IMDSv2", err)
			awsSDK.check(t, "region from the instance identity document", cfg.Region == region,
				"region %q, want %q", cfg.Region, region)

			var clientOpts []registryauth.ClientOption
			if tc.viaEnv {
				t.Setenv("AWS_ENDPOINT_URL_ECR", ecr.URL)
			} else {
				clientOpts = append(clientOpts, registryauth.WithEndpoint(ecr.URL))
			}
			kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg, clientOpts...))
			keychain.must(t, "NewKeychain with the IMDS config", err)
			t.Cleanup(func() { _ = kc.Close() })

			cred, err := kc.Credential(ctx, releaseTag)
			keychain.with(awsSDK).must(t, "GetAuthorizationToken signed with the instance role", err)
			keychain.check(t, "credential for the registry", cred.Registry == registryHost && cred.Username == "AWS",
				"registry %q user %q, want %q and AWS", cred.Registry, cred.Username, registryHost)
			keychain.check(t, "token from the fake ECR", cred.Password == fakeecr.Password(region, 1),
				"password is not the fake ECR's first token for %s", region)

			reqs := ecr.Requests()
			awsSDK.check(t, "one GetAuthorizationToken call reached the fake ECR", len(reqs) == 1, "%d calls", len(reqs))
			awsSDK.check(t, "call signed with the IMDS role's access key id", reqs[0].AccessKeyID == fakeimds.AccessKeyID(1),
				"access key id %q, want %q", reqs[0].AccessKeyID, fakeimds.AccessKeyID(1))
			awsSDK.check(t, "call scoped to the IMDS region", reqs[0].Region == region, "region %q", reqs[0].Region)
			fakeIMDS.check(t, "role credentials fetched with an IMDSv2 session", imds.Calls(fakeimds.TokenPath) > 0 &&
				imds.Calls(fakeimds.SecurityCredentialsPath+fakeimds.DefaultRoleName) > 0,
				"token PUTs %d, role GETs %d", imds.Calls(fakeimds.TokenPath), imds.Calls(fakeimds.SecurityCredentialsPath+fakeimds.DefaultRoleName))

			status, err := reg.Ping(ctx, cred.Username, cred.Password)
			dockerRegistry.must(t, "/v2/ with the instance-role token", err)
			dockerRegistry.check(t, "/v2/ with the instance-role token", status == http.StatusOK, "status %d, want 200", status)
		})
	}
}
