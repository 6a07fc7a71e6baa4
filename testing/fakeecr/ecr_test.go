package fakeecr_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/pkg/awsapi"
	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var useast1 = ecrhost.Registry{
	Host:      "123456789012.dkr.ecr.us-east-1.amazonaws.com",
	AccountID: "123456789012",
	Region:    "us-east-1",
	Partition: "aws",
}

// decoded is one token as a caller sees it.
type decoded struct {
	user, password, proxyEndpoint string
	expiresAt                     time.Time
}

func getToken(ctx context.Context, t *testing.T, c awsapi.ECRAPI) (decoded, error) {
	t.Helper()
	out, err := c.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return decoded{}, err
	}
	require.Len(t, out.AuthorizationData, 1)
	d := out.AuthorizationData[0]
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(d.AuthorizationToken))
	require.NoError(t, err)
	user, pass, ok := cutColon(string(raw))
	require.True(t, ok, "token must be base64(user:password)")
	return decoded{user: user, password: pass, proxyEndpoint: aws.ToString(d.ProxyEndpoint), expiresAt: aws.ToTime(d.ExpiresAt)}, nil
}

func cutColon(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

func TestGetAuthorizationToken(t *testing.T) {
	t.Parallel()
	pinnedExpiry := epoch.Add(time.Hour)
	tests := []struct {
		name  string
		opts  []fakeecr.Option
		setup func(*fakeecr.ECR)
		// client picks the client under test.
		client func(*fakeecr.ECR) awsapi.ECRAPI
		calls  int
		want   []decoded
	}{
		{
			name:   "When no token is pinned, it should return a new password on every call",
			client: func(f *fakeecr.ECR) awsapi.ECRAPI { return f.Client("us-east-1") },
			calls:  3,
			want: []decoded{
				{user: "AWS", password: "fake-ecr-password-us-east-1-0001", proxyEndpoint: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com", expiresAt: epoch.Add(12 * time.Hour)},
				{user: "AWS", password: "fake-ecr-password-us-east-1-0002", proxyEndpoint: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com", expiresAt: epoch.Add(12 * time.Hour)},
				{user: "AWS", password: "fake-ecr-password-us-east-1-0003", proxyEndpoint: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com", expiresAt: epoch.Add(12 * time.Hour)},
			},
		},
		{
			name:   "When a token is pinned, it should return it on every call",
			setup:  func(f *fakeecr.ECR) { f.SetToken("us-east-1", "pinned-password", pinnedExpiry) },
			client: func(f *fakeecr.ECR) awsapi.ECRAPI { return f.Client("us-east-1") },
			calls:  2,
			want: []decoded{
				{user: "AWS", password: "pinned-password", proxyEndpoint: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com", expiresAt: pinnedExpiry},
				{user: "AWS", password: "pinned-password", proxyEndpoint: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com", expiresAt: pinnedExpiry},
			},
		},
		{
			name: "When a pinned token is cleared, it should rotate again",
			setup: func(f *fakeecr.ECR) {
				f.SetToken("us-east-1", "pinned-password", pinnedExpiry)
				f.SetToken("us-east-1", "", time.Time{})
			},
			client: func(f *fakeecr.ECR) awsapi.ECRAPI { return f.Client("us-east-1") },
			calls:  1,
			want:   []decoded{{user: "AWS", password: fakeecr.Password("us-east-1", 1), proxyEndpoint: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com", expiresAt: epoch.Add(12 * time.Hour)}},
		},
		{
			name:   "When the lifetime is set, it should stamp expiresAt with it",
			opts:   []fakeecr.Option{fakeecr.WithTokenLifetime(time.Hour)},
			client: func(f *fakeecr.ECR) awsapi.ECRAPI { return f.Client("eu-west-1") },
			calls:  1,
			want:   []decoded{{user: "AWS", password: "fake-ecr-password-eu-west-1-0001", proxyEndpoint: "https://123456789012.dkr.ecr.eu-west-1.amazonaws.com", expiresAt: epoch.Add(time.Hour)}},
		},
		{
			name: "When the client comes from ClientFactory, it should name the registry's account in proxyEndpoint",
			client: func(f *fakeecr.ECR) awsapi.ECRAPI {
				c, err := f.ClientFactory(t.Context(), ecrhost.Registry{Host: "210987654321.dkr.ecr.cn-north-1.amazonaws.com.cn", AccountID: "210987654321", Region: "cn-north-1", Partition: "aws-cn"})
				require.NoError(t, err)
				return c
			},
			calls: 1,
			want:  []decoded{{user: "AWS", password: "fake-ecr-password-cn-north-1-0001", proxyEndpoint: "https://210987654321.dkr.ecr.cn-north-1.amazonaws.com.cn", expiresAt: epoch.Add(12 * time.Hour)}},
		},
		{
			name:   "When an account is configured, it should name it in proxyEndpoint",
			opts:   []fakeecr.Option{fakeecr.WithAccountID("999988887777")},
			client: func(f *fakeecr.ECR) awsapi.ECRAPI { return f.Client("us-gov-west-1") },
			calls:  1,
			want:   []decoded{{user: "AWS", password: "fake-ecr-password-us-gov-west-1-0001", proxyEndpoint: "https://999988887777.dkr.ecr.us-gov-west-1.amazonaws.com", expiresAt: epoch.Add(12 * time.Hour)}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New(append([]fakeecr.Option{fakeecr.WithClock(clocktesting.NewFakePassiveClock(epoch))}, tc.opts...)...)
			if tc.setup != nil {
				tc.setup(f)
			}
			c := tc.client(f)
			var got []decoded
			for range tc.calls {
				d, err := getToken(t.Context(), t, c)
				require.NoError(t, err)
				got = append(got, d)
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.calls, f.TotalCalls())
		})
	}
}

func TestInjectedErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(*fakeecr.ECR)
		// wantCodes is the smithy error code of each call, "" for success.
		wantCodes []string
	}{
		{
			name:      "When FailNext is set for two calls, it should fail two calls then succeed",
			setup:     func(f *fakeecr.ECR) { f.FailNext("us-east-1", 2, fakeecr.ThrottlingError()) },
			wantCodes: []string{"ThrottlingException", "ThrottlingException", ""},
		},
		{
			name: "When an error is set, it should fail until it is cleared",
			setup: func(f *fakeecr.ECR) {
				f.SetError("us-east-1", fakeecr.AccessDeniedError())
			},
			wantCodes: []string{"AccessDeniedException", "AccessDeniedException", "AccessDeniedException"},
		},
		{
			name: "When FailNext and SetError are both set, it should use FailNext first",
			setup: func(f *fakeecr.ECR) {
				f.SetError("us-east-1", fakeecr.AccessDeniedError())
				f.FailNext("us-east-1", 1, fakeecr.InvalidParameterError())
			},
			wantCodes: []string{"InvalidParameterException", "AccessDeniedException"},
		},
		{
			name: "When another region fails, it should not affect this one",
			setup: func(f *fakeecr.ECR) {
				f.SetError("eu-west-1", fakeecr.AccessDeniedError())
			},
			wantCodes: []string{""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New()
			tc.setup(f)
			c := f.Client("us-east-1")
			for i, want := range tc.wantCodes {
				_, err := getToken(t.Context(), t, c)
				if want == "" {
					require.NoError(t, err, "call %d", i+1)
					continue
				}
				var apiErr smithy.APIError
				require.ErrorAs(t, err, &apiErr, "call %d", i+1)
				require.Equal(t, want, apiErr.ErrorCode())
				var opErr *smithy.OperationError
				require.ErrorAs(t, err, &opErr)
				require.Equal(t, "ECR", opErr.Service())
				require.Equal(t, "GetAuthorizationToken", opErr.Operation())
				var respErr *awshttp.ResponseError
				require.ErrorAs(t, err, &respErr)
				require.Equal(t, 400, respErr.HTTPStatusCode())
			}
			require.Equal(t, len(tc.wantCodes), f.Calls("us-east-1"), "failed calls must be counted")
		})
	}

	t.Run("When an error is cleared with nil, it should succeed again", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		f.SetError("us-east-1", fakeecr.ThrottlingError())
		_, err := getToken(t.Context(), t, f.Client("us-east-1"))
		require.Error(t, err)
		f.SetError("us-east-1", nil)
		d, err := getToken(t.Context(), t, f.Client("us-east-1"))
		require.NoError(t, err)
		require.Equal(t, fakeecr.Password("us-east-1", 2), d.password)
	})

	t.Run("When the endpoint error is injected, it should look like a network failure", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		f.FailNext("us-east-1", 1, fakeecr.EndpointError())
		_, err := getToken(t.Context(), t, f.Client("us-east-1"))
		var sendErr *smithyhttp.RequestSendError
		require.ErrorAs(t, err, &sendErr)
		var netErr *net.OpError
		require.ErrorAs(t, err, &netErr)
		var apiErr smithy.APIError
		require.False(t, errors.As(err, &apiErr), "a network failure is not an API error")
	})

	t.Run("When a plain error is injected, it should be reachable with errors.Is", func(t *testing.T) {
		t.Parallel()
		sentinel := errors.New("no EC2 IMDS role found")
		f := fakeecr.New()
		f.FailNext("us-east-1", 1, sentinel)
		_, err := getToken(t.Context(), t, f.Client("us-east-1"))
		require.ErrorIs(t, err, sentinel)
	})
}

func TestLatencyAndBlock(t *testing.T) {
	t.Parallel()

	t.Run("When the caller's context ends during latency, it should return a cancellation", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		f.SetLatency("us-east-1", time.Hour)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err := getToken(ctx, t, f.Client("us-east-1"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var canceled *smithy.CanceledError
		require.ErrorAs(t, err, &canceled)
		require.Equal(t, 1, f.Calls("us-east-1"))
	})

	t.Run("When latency is set, it should delay the answer", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		f.SetLatency("us-east-1", 30*time.Millisecond)
		start := time.Now()
		_, err := getToken(t.Context(), t, f.Client("us-east-1"))
		require.NoError(t, err)
		require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	})

	t.Run("When a region is blocked, it should hold calls until release", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		release := f.Block("us-east-1")
		done := make(chan error, 1)
		go func() {
			_, err := f.Client("us-east-1").GetAuthorizationToken(t.Context(), &ecr.GetAuthorizationTokenInput{})
			done <- err
		}()
		require.Eventually(t, func() bool { return f.Calls("us-east-1") == 1 }, 5*time.Second, time.Millisecond)
		// Other regions are not held.
		_, err := getToken(t.Context(), t, f.Client("eu-west-1"))
		require.NoError(t, err)
		select {
		case err := <-done:
			t.Fatalf("blocked call returned early: %v", err)
		default:
		}
		release()
		require.NoError(t, <-done)
		release() // idempotent
		_, err = getToken(t.Context(), t, f.Client("us-east-1"))
		require.NoError(t, err, "calls after release must pass")
	})

	t.Run("When a blocked caller's context is cancelled, it should return", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		defer f.Block("us-east-1")()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := f.Client("us-east-1").GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
			done <- err
		}()
		require.Eventually(t, func() bool { return f.Calls("us-east-1") == 1 }, 5*time.Second, time.Millisecond)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

func TestRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		reg  ecrhost.Registry
		want fakeecr.Request
	}{
		{
			name: "When the registry is a FIPS host, it should record FIPS",
			reg:  ecrhost.Registry{Host: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", AccountID: "123456789012", Region: "us-gov-west-1", Partition: "aws-us-gov", FIPS: true},
			want: fakeecr.Request{Region: "us-gov-west-1", Registry: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", FIPS: true, Time: epoch},
		},
		{
			name: "When the registry is a dual-stack host, it should record DualStack",
			reg:  ecrhost.Registry{Host: "123456789012.dkr-ecr.eu-west-1.on.aws", AccountID: "123456789012", Region: "eu-west-1", Partition: "aws", DualStack: true},
			want: fakeecr.Request{Region: "eu-west-1", Registry: "123456789012.dkr-ecr.eu-west-1.on.aws", DualStack: true, Time: epoch},
		},
		{
			name: "When the registry is a plain host, it should record no variant",
			reg:  useast1,
			want: fakeecr.Request{Region: "us-east-1", Registry: useast1.Host, Time: epoch},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := fakeecr.New(fakeecr.WithClock(clocktesting.NewFakePassiveClock(epoch)))
			c, err := f.ClientFactory(t.Context(), tc.reg)
			require.NoError(t, err)
			_, err = getToken(t.Context(), t, c)
			require.NoError(t, err)
			require.Equal(t, []fakeecr.Request{tc.want}, f.Requests())
		})
	}

	t.Run("When the caller mutates the returned requests, it should not change the fake", func(t *testing.T) {
		t.Parallel()
		f := fakeecr.New()
		_, err := f.Client("us-east-1").GetAuthorizationToken(t.Context(), &ecr.GetAuthorizationTokenInput{RegistryIds: []string{"123456789012"}})
		require.NoError(t, err)
		got := f.Requests()
		got[0].Region = "mutated"
		got[0].RegistryIDs[0] = "mutated"
		require.Equal(t, "us-east-1", f.Requests()[0].Region)
		require.Equal(t, []string{"123456789012"}, f.Requests()[0].RegistryIDs)
	})
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	f := fakeecr.New()
	regions := []string{"us-east-1", "eu-west-1", "ap-southeast-2", "us-gov-west-1"}
	f.FailNext("eu-west-1", 10, fakeecr.ThrottlingError())
	const perRegion = 50
	var (
		mu        sync.Mutex
		passwords = map[string]bool{}
		failures  int
		wg        sync.WaitGroup
	)
	for _, region := range regions {
		for range perRegion {
			wg.Go(func() {
				out, err := f.Client(region).GetAuthorizationToken(t.Context(), &ecr.GetAuthorizationTokenInput{})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures++
					return
				}
				passwords[aws.ToString(out.AuthorizationData[0].AuthorizationToken)] = true
			})
			wg.Go(func() { _ = f.Requests(); _ = f.Calls(region) })
		}
	}
	wg.Wait()
	require.Equal(t, 10, failures)
	require.Len(t, passwords, len(regions)*perRegion-10, "every successful call must get a distinct token")
	for _, region := range regions {
		require.Equal(t, perRegion, f.Calls(region))
	}
	require.Equal(t, len(regions)*perRegion, f.TotalCalls())
}

func TestNew(t *testing.T) {
	t.Parallel()
	t.Run("When the lifetime is not positive, it should panic", func(t *testing.T) {
		t.Parallel()
		require.Panics(t, func() { fakeecr.New(fakeecr.WithTokenLifetime(0)) })
	})
}

func Example() {
	f := fakeecr.New()
	f.FailNext("us-east-1", 1, fakeecr.ThrottlingError())

	// In a keychain test this is registryauth's ClientFactory.
	factory := f.ClientFactory
	client, _ := factory(context.Background(), ecrhost.Registry{
		Host: "123456789012.dkr.ecr.us-east-1.amazonaws.com", AccountID: "123456789012",
		Region: "us-east-1", Partition: "aws",
	})
	for range 2 {
		out, err := client.GetAuthorizationToken(context.Background(), &ecr.GetAuthorizationTokenInput{})
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) {
			fmt.Println("error:", apiErr.ErrorCode())
			continue
		}
		raw, _ := base64.StdEncoding.DecodeString(*out.AuthorizationData[0].AuthorizationToken)
		fmt.Println("token for", *out.AuthorizationData[0].ProxyEndpoint, "is", string(raw) == "AWS:"+fakeecr.Password("us-east-1", 2))
	}
	fmt.Println("calls:", f.Calls("us-east-1"))
	// Output:
	// error: ThrottlingException
	// token for https://123456789012.dkr.ecr.us-east-1.amazonaws.com is true
	// calls: 2
}
