package registryauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// sdkConfig is what config.LoadDefaultConfig would produce, with static
// test keys and retries off so that failures surface at once.
func sdkConfig(httpClient aws.HTTPClient, endpoint string) aws.Config {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
		HTTPClient:  httpClient,
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	return cfg
}

// hostRecorder answers every request with a transport error after
// recording its host: it shows which endpoint the SDK chose without any
// network.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
}

func (r *hostRecorder) Do(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = append(r.hosts, req.URL.Host)
	return nil, errors.New("recorded, not sent")
}

func TestAWSClientEndpoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		host     string
		wantHost string
	}{
		{name: "When the registry is commercial, it should call the regional API endpoint", host: "123456789012.dkr.ecr.eu-west-1.amazonaws.com", wantHost: "api.ecr.eu-west-1.amazonaws.com"},
		{name: "When the registry is FIPS, it should call the FIPS API endpoint", host: "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com", wantHost: "api.ecr-fips.us-east-1.amazonaws.com"},
		{name: "When the registry is GovCloud FIPS, it should call the GovCloud FIPS API endpoint", host: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", wantHost: "api.ecr-fips.us-gov-west-1.amazonaws.com"},
		{name: "When the registry is dual-stack, it should call the dual-stack API endpoint", host: "123456789012.dkr-ecr.us-east-1.on.aws", wantHost: "ecr.us-east-1.api.aws"},
		{name: "When the registry is in China, it should call the China API endpoint", host: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", wantHost: "api.ecr.cn-north-1.amazonaws.com.cn"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &hostRecorder{}
			kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(sdkConfig(rec, "")))
			require.NoError(t, err)
			defer kc.Close()
			_, err = kc.Credential(context.Background(), tc.host)
			require.ErrorIs(t, err, registryauth.ErrEndpointUnreachable)
			require.Equal(t, []string{tc.wantHost}, rec.hosts)
		})
	}
}

func TestAWSClientOverTheWire(t *testing.T) {
	t.Parallel()
	fake := fakeecr.New(fakeecr.WithRequiredAccessKeyID("AKIDEXAMPLE"))
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()

	t.Run("When a custom endpoint is set, it should sign for the registry's region and use it even for FIPS hosts", func(t *testing.T) {
		kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(sdkConfig(srv.Client(), srv.URL)))
		require.NoError(t, err)
		defer kc.Close()
		c, err := kc.Credential(context.Background(), "123456789012.dkr.ecr.eu-west-1.amazonaws.com")
		require.NoError(t, err)
		require.Equal(t, "AWS", c.Username)
		require.Equal(t, 1, fake.Calls("eu-west-1"), "the client region comes from the host, not from the config")
		_, err = kc.Credential(context.Background(), "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com")
		require.NoError(t, err, "FIPS must not be combined with a custom endpoint")
	})

	t.Run("When WithEndpoint names a VPC endpoint, it should win over the config", func(t *testing.T) {
		kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(sdkConfig(srv.Client(), "http://127.0.0.1:1"), registryauth.WithEndpoint(srv.URL)))
		require.NoError(t, err)
		defer kc.Close()
		_, err = kc.Credential(context.Background(), "123456789012.dkr.ecr.ap-south-1.amazonaws.com")
		require.NoError(t, err)
		require.Equal(t, 1, fake.Calls("ap-south-1"))
	})

	t.Run("When the endpoint does not answer, it should say which endpoint and which VPC endpoint is needed", func(t *testing.T) {
		kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(sdkConfig(nil, "http://127.0.0.1:1")))
		require.NoError(t, err)
		defer kc.Close()
		_, err = kc.Credential(context.Background(), "123456789012.dkr.ecr.us-east-2.amazonaws.com")
		require.ErrorIs(t, err, registryauth.ErrEndpointUnreachable)
		require.Contains(t, err.Error(), "http://127.0.0.1:1")
		require.Contains(t, err.Error(), "com.amazonaws.us-east-2.ecr.api")
	})

	t.Run("When the chain has no credentials, it should answer ErrNoAWSCredentials", func(t *testing.T) {
		cfg := sdkConfig(srv.Client(), srv.URL)
		cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no EC2 IMDS role found")
		})
		kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg))
		require.NoError(t, err)
		defer kc.Close()
		_, err = kc.Credential(context.Background(), "123456789012.dkr.ecr.us-east-1.amazonaws.com")
		require.ErrorIs(t, err, registryauth.ErrNoAWSCredentials)
		require.Contains(t, err.Error(), "IRSA")
	})

	t.Run("When the keys are rejected by ECR, it should answer ErrNoAWSCredentials", func(t *testing.T) {
		cfg := sdkConfig(srv.Client(), srv.URL)
		cfg.Credentials = credentials.NewStaticCredentialsProvider("AKIDWRONG", "secret", "")
		kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg))
		require.NoError(t, err)
		defer kc.Close()
		_, err = kc.Credential(context.Background(), "123456789012.dkr.ecr.sa-east-1.amazonaws.com")
		require.ErrorIs(t, err, registryauth.ErrNoAWSCredentials)
	})
}

// fakeSTS answers AssumeRole with role credentials and counts calls.
type fakeSTS struct {
	mu    sync.Mutex
	calls []sts.AssumeRoleInput
}

func (f *fakeSTS) AssumeRole(_ context.Context, in *sts.AssumeRoleInput, _ ...func(*sts.Options)) (*sts.AssumeRoleOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, *in)
	return &sts.AssumeRoleOutput{Credentials: &ststypes.Credentials{
		AccessKeyId:     aws.String("ASIAROLEEXAMPLE"),
		SecretAccessKey: aws.String("role-secret"),
		SessionToken:    aws.String("role-session"),
		Expiration:      aws.Time(time.Now().Add(time.Hour)),
	}}, nil
}

func TestRegistryRole(t *testing.T) {
	t.Parallel()
	fake := fakeecr.New()
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	stsFake := &fakeSTS{}
	kc, err := registryauth.NewKeychain(
		registryauth.WithAWSConfig(sdkConfig(srv.Client(), srv.URL), registryauth.WithSTSClient(stsFake)),
		registryauth.WithRegistryRole(registryauth.RegistryRole{
			Match:      "210987654321.dkr.ecr.us-east-1.amazonaws.com/team-a",
			RoleARN:    "arn:aws:iam::210987654321:role/ecr-pull",
			ExternalID: "hypershift",
		}),
	)
	require.NoError(t, err)
	defer kc.Close()
	ctx := context.Background()

	_, err = kc.Credential(ctx, "210987654321.dkr.ecr.us-east-1.amazonaws.com/team-a/app:1")
	require.NoError(t, err)
	_, err = kc.Credential(ctx, "210987654321.dkr.ecr.us-east-1.amazonaws.com/team-a-evil/app:1")
	require.NoError(t, err)
	_, err = kc.Credential(ctx, "210987654321.dkr.ecr.us-east-1.amazonaws.com/team-a/other:2")
	require.NoError(t, err)

	reqs := fake.Requests()
	require.Len(t, reqs, 2, "one token for the role, one for the default identity")
	require.ElementsMatch(t, []string{"ASIAROLEEXAMPLE", "AKIDEXAMPLE"}, []string{reqs[0].AccessKeyID, reqs[1].AccessKeyID})
	require.Len(t, stsFake.calls, 1)
	require.Equal(t, "hypershift", aws.ToString(stsFake.calls[0].ExternalId))

	out, err := kc.Augment(ctx, nil, "210987654321.dkr.ecr.us-east-1.amazonaws.com/team-a/app:1")
	require.NoError(t, err)
	require.Contains(t, decodeAuths(t, out), "210987654321.dkr.ecr.us-east-1.amazonaws.com/team-a",
		"a role scoped to a repository prefix gets a path-scoped entry")
}

// TestAWSClientEnvironmentEndpoint cannot run in parallel: it sets the
// process environment the SDK's default chain reads.
func TestAWSClientEnvironmentEndpoint(t *testing.T) {
	fake := fakeecr.New(fakeecr.WithRequiredAccessKeyID("AKIDFROMENV"))
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	empty := t.TempDir() + "/none"
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDFROMENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret-from-env")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ENDPOINT_URL_ECR", srv.URL)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRetryMaxAttempts(1))
	require.NoError(t, err)
	kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg))
	require.NoError(t, err)
	defer kc.Close()

	_, err = kc.Credential(context.Background(), "123456789012.dkr.ecr-fips.us-west-2.amazonaws.com")
	require.NoError(t, err, "AWS_ENDPOINT_URL_ECR must be honoured, and FIPS must not be combined with it")
	require.Equal(t, 1, fake.Calls("us-west-2"))
	require.Equal(t, "AKIDFROMENV", fake.Requests()[0].AccessKeyID)
}
