package registryauth_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeimds"
	"github.com/openshift/hypershift-ecr/testing/secretcheck"
)

// TestFaultIMDS runs the real SDK's instance-role provider against a fake
// metadata service that is unreachable, too far (hop limit) or slow. The
// provider is wired in code rather than through the environment, so the
// cases run in parallel.
func TestFaultIMDS(t *testing.T) {
	t.Parallel()
	const fetchTimeout = time.Second
	tests := []struct {
		name    string
		opt     fakeimds.Option
		wantErr error // nil: a token
	}{
		{name: "When no metadata service answers, it should fail within the fetch timeout with ErrNoAWSCredentials naming IMDS", opt: fakeimds.WithUnavailable(), wantErr: registryauth.ErrNoAWSCredentials},
		{name: "When the pod is one hop too far for IMDSv2, it should fail within the fetch timeout with ErrNoAWSCredentials naming IMDS", opt: fakeimds.WithHopLimitExceeded(), wantErr: registryauth.ErrNoAWSCredentials},
		{name: "When IMDS is slower than the fetch timeout, it should give up at the timeout with ErrNoAWSCredentials naming IMDS", opt: fakeimds.WithLatency(10 * time.Second), wantErr: registryauth.ErrNoAWSCredentials},
		{name: "When IMDS is slow but within the fetch timeout, it should get the token", opt: fakeimds.WithLatency(50 * time.Millisecond)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := secretcheck.New(t)
			sc.Watch(fakeimds.SecretAccessKey(1), fakeimds.SessionToken(1))
			m := fakeimds.New(tc.opt)
			imdsSrv := httptest.NewServer(m.Handler())
			t.Cleanup(imdsSrv.Close)
			t.Cleanup(m.Close) // releases held requests first
			api := fakeecr.New(fakeecr.WithRequiredAccessKeyID(fakeimds.AccessKeyID(1)))
			sc.WatchFunc(func() []string { return issuedPasswords(api) })
			apiSrv := httptest.NewServer(api.Handler())
			t.Cleanup(apiSrv.Close)

			cfg := aws.Config{
				Region: "us-east-1",
				Credentials: aws.NewCredentialsCache(ec2rolecreds.New(func(o *ec2rolecreds.Options) {
					o.Client = imds.New(imds.Options{Endpoint: imdsSrv.URL, ClientEnableState: imds.ClientEnabled})
				})),
			}
			kc, err := registryauth.NewKeychain(
				registryauth.WithAWSConfig(cfg, registryauth.WithEndpoint(apiSrv.URL)),
				registryauth.WithFetchTimeout(fetchTimeout),
				registryauth.WithLogger(sc.Logger()),
			)
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })

			ctx, cancel := context.WithTimeout(t.Context(), 10*fetchTimeout)
			defer cancel()
			start := time.Now()
			c, err := kc.Credential(ctx, useast1+"/ocp4/openshift4:4.18.0-x86_64")
			waited := time.Since(start)
			sc.CheckError(err)

			require.Less(t, waited, fetchTimeout+time.Second, "the wait is bounded by WithFetchTimeout, not the caller's 10s")
			if tc.wantErr == nil {
				require.NoError(t, err)
				require.Equal(t, fakeecr.Password("us-east-1", 1), c.Password)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
			var te *registryauth.TokenError
			require.ErrorAs(t, err, &te)
			require.Contains(t, te.Hint, "IMDS", "the hint points at the metadata service")
			require.Zero(t, api.TotalCalls(), "an unsigned call must never reach ECR")
		})
	}
}

// issuedPasswords lists every password the fake ECR has handed out, for
// secretcheck.WatchFunc.
func issuedPasswords(api *fakeecr.ECR) []string {
	n := map[string]int{}
	for _, r := range api.Requests() {
		n[r.Region]++
	}
	var out []string
	for region, calls := range n {
		for i := 1; i <= calls; i++ {
			out = append(out, fakeecr.Password(region, i))
		}
	}
	return out
}
