package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

func ecrRegistry(t *testing.T, host string) ecrhost.Registry {
	t.Helper()
	reg, ok := ecrhost.Parse(host)
	require.True(t, ok, host)
	return reg
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		host     string
		args     []string
		stsErr   error
		ecrErr   error
		noCfgEP  bool // the AWS configuration names no endpoint
		wantCode int
		want     []string // lines of the text output
		wantJSON func(t *testing.T, r credentialsReport)
	}{
		{
			name: "When the identity and ECR answer, it should show identity, endpoint and expiry, never the token",
			host: ecrHost + "/ocp4/openshift4:4.10.3-x86_64",
			want: []string{"registry:      " + ecrHost, "account:       123456789012", "region:        us-east-1",
				"partition:     aws", "credentials:   StaticCredentials", "identity:      " + roleARN, "token:         expires "},
			wantJSON: func(t *testing.T, r credentialsReport) {
				require.Equal(t, "custom", r.EndpointVariant, "the configuration's endpoint wins")
				require.True(t, strings.HasPrefix(r.APIEndpoint, "http://127.0.0.1:"), r.APIEndpoint)
				require.NotNil(t, r.TokenExpiresAt)
				require.WithinDuration(t, time.Now().Add(12*time.Hour), *r.TokenExpiresAt, time.Minute)
			},
		},
		{
			name: "When STS is unreachable, it should say the identity is unknown and why, and still get the token",
			host: ecrHost, stsErr: errors.New("dial tcp: lookup sts.us-east-1.amazonaws.com: no such host"),
			want: []string{"identity:      unknown (sts:GetCallerIdentity failed: dial tcp: lookup sts.us-east-1.amazonaws.com: no such host)"},
			wantJSON: func(t *testing.T, r credentialsReport) {
				require.Equal(t, "unknown", r.Identity)
				require.Contains(t, r.IdentityError, "no such host")
				require.NotNil(t, r.TokenExpiresAt)
			},
		},
		{
			name: "When ECR denies the token, it should print the report and exit 1 with the IAM error",
			host: ecrHost, ecrErr: fakeecr.AccessDeniedError(), wantCode: exitFailure,
			want: []string{"identity:      " + roleARN, "token:         ecr: "},
			wantJSON: func(t *testing.T, r credentialsReport) {
				require.Nil(t, r.TokenExpiresAt)
				require.Contains(t, r.TokenError, "access denied")
			},
		},
		{
			name: "When the host is a FIPS host and no endpoint is configured, it should name the FIPS API endpoint",
			host: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", noCfgEP: true,
			args: []string{"--api-endpoint", "PLACEHOLDER"}, // replaced by the fake's URL: the token still comes from the fake
			want: []string{"partition:     aws-us-gov"},
			wantJSON: func(t *testing.T, r credentialsReport) {
				require.Equal(t, "aws-us-gov", r.Partition)
				require.Equal(t, "custom", r.EndpointVariant, "--api-endpoint wins over the FIPS variant")
			},
		},
		{
			name: "When the host is an alias, it should describe the registry behind it",
			host: "registry.example.com", args: []string{"--alias", "registry.example.com=123456789012.dkr-ecr.eu-west-1.on.aws"},
			want: []string{"registry:      registry.example.com", "region:        eu-west-1"},
			wantJSON: func(t *testing.T, r credentialsReport) {
				require.Equal(t, "eu-west-1", r.Region)
				require.NotNil(t, r.TokenExpiresAt)
			},
		},
		{
			name: "When the host is ECR Public, it should say no token is needed",
			host: "public.ecr.aws",
			want: []string{"api endpoint:  none (ECR Public)", "token:         none needed: ECR Public serves pulls anonymously"},
			wantJSON: func(t *testing.T, r credentialsReport) {
				require.True(t, r.Public)
				require.Empty(t, r.APIEndpoint)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, false)
			w.sts.err = tc.stsErr
			if tc.ecrErr != nil {
				w.ecrAPI.SetError("us-east-1", tc.ecrErr)
			}
			args := append([]string(nil), tc.args...)
			for i := range args {
				if args[i] == "PLACEHOLDER" {
					args[i] = w.ecrAPISrv.URL
				}
			}
			for _, format := range []string{"text", "json"} {
				c, stdout, stderr := w.cli("")
				if tc.noCfgEP {
					base := c.loadAWSConfig
					c.loadAWSConfig = func(ctx context.Context, o ...func(*config.LoadOptions) error) (aws.Config, error) {
						cfg, err := base(ctx, o...)
						cfg.BaseEndpoint = nil
						return cfg, err
					}
				}
				code := runCLI(t, c, append(append([]string{"credentials", "-o", format}, args...), tc.host)...)
				require.Equal(t, tc.wantCode, code, stderr.String())
				requireNoSecret(t, stdout.String()+stderr.String())
				if tc.wantCode == exitOK {
					require.Empty(t, stderr.String())
				} else {
					require.Equal(t, 1, strings.Count(stderr.String(), "\n"), stderr.String())
					require.Contains(t, stderr.String(), "hypershift-ecr credentials: no ECR token for ")
				}
				if format == "text" {
					for _, line := range tc.want {
						require.Contains(t, stdout.String(), line)
					}
					continue
				}
				var rep credentialsReport
				require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
				tc.wantJSON(t, rep)
			}
		})
	}

	t.Run("When no endpoint is configured, it should name the SDK's endpoint for each host form", func(t *testing.T) {
		t.Parallel()
		cfg := aws.Config{Region: "us-east-1"}
		for host, want := range map[string]string{
			ecrHost: "https://api.ecr.us-east-1.amazonaws.com",
			"123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com": "https://api.ecr-fips.us-gov-west-1.amazonaws.com",
			"123456789012.dkr-ecr.eu-west-1.on.aws":                 "https://ecr.eu-west-1.api.aws",
			"123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn":      "https://api.ecr.cn-north-1.amazonaws.com.cn",
		} {
			reg, ok := ecrhost.Parse(host)
			require.True(t, ok, host)
			ep, _, err := apiEndpoint(t.Context(), cfg, reg, "")
			require.NoError(t, err)
			require.Equal(t, want, ep, host)
		}
		ep, variant, err := apiEndpoint(t.Context(), cfg, ecrRegistry(t, ecrHost), "https://user:pw@vpce-0abc.api.ecr.us-east-1.vpce.amazonaws.com/?X-Amz-Security-Token=secret")
		require.NoError(t, err)
		require.Equal(t, "custom", variant)
		require.Equal(t, "https://vpce-0abc.api.ecr.us-east-1.vpce.amazonaws.com/", ep, "user info and query are never printed")
	})
}
