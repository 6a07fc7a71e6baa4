package registryauth_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

const (
	useast1 = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	uswest2 = "123456789012.dkr.ecr.us-west-2.amazonaws.com"
)

var epoch = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// harness is a keychain over a fake ECR and a fake clock, with every log
// line and error it produced kept for the secret-hygiene assertions.
type harness struct {
	t     *testing.T
	clock *clocktesting.FakeClock
	ecr   *fakeecr.ECR
	kc    *registryauth.Keychain
	logs  *logSink
}

func newHarness(t *testing.T, opts ...registryauth.Option) *harness {
	t.Helper()
	h := &harness{t: t, clock: clocktesting.NewFakeClock(epoch), logs: &logSink{}}
	h.ecr = fakeecr.New(fakeecr.WithClock(h.clock))
	all := append([]registryauth.Option{
		registryauth.WithClientFactory(h.ecr.ClientFactory),
		registryauth.WithClock(h.clock),
		registryauth.WithLogger(h.logs.logger()),
	}, opts...)
	kc, err := registryauth.NewKeychain(all...)
	require.NoError(t, err)
	h.kc = kc
	t.Cleanup(func() {
		require.NoError(t, kc.Close())
		h.logs.assertNoSecrets(t, h.ecr)
	})
	return h
}

func (h *harness) credential(host string) (registryauth.Credential, error) {
	c, err := h.kc.Credential(context.Background(), host)
	if err != nil {
		h.logs.recordError(err)
	}
	return c, err
}

// waitForCalls waits until region has seen n calls: refreshes run in the
// background, so a test observes them through the fake's counter.
func (h *harness) waitForCalls(region string, n int) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return h.ecr.Calls(region) >= n }, 5*time.Second, time.Millisecond,
		"want %d calls for %s, have %d", n, region, h.ecr.Calls(region))
}

// waitForPassword waits until the keychain serves want for host.
func (h *harness) waitForPassword(host, want string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		c, err := h.credential(host)
		return err == nil && c.Password == want
	}, 5*time.Second, time.Millisecond)
}

func TestCredential(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		input     string
		wantHost  string
		wantErr   error
		wantCalls map[string]int
	}{
		{
			name:      "When the input is a commercial registry host, it should return an AWS login for it",
			input:     useast1,
			wantHost:  useast1,
			wantCalls: map[string]int{"us-east-1": 1},
		},
		{
			name:      "When the input is an image reference, it should return a login for its registry",
			input:     uswest2 + "/ocp4/openshift4@sha256:" + strings.Repeat("a", 64),
			wantHost:  uswest2,
			wantCalls: map[string]int{"us-west-2": 1},
		},
		{
			name:      "When the input is an https URL with upper case, it should normalise it",
			input:     "https://123456789012.DKR.ECR.us-east-1.amazonaws.com/v2/",
			wantHost:  useast1,
			wantCalls: map[string]int{"us-east-1": 1},
		},
		{
			name:    "When the input is quay.io, it should answer ErrNotECR without calling ECR",
			input:   "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
			wantErr: registryauth.ErrNotECR,
		},
		{
			name:    "When the input is a look-alike host, it should answer ErrNotECR",
			input:   useast1 + ".attacker.example",
			wantErr: registryauth.ErrNotECR,
		},
		{
			name:    "When the input is ECR Public, it should answer ErrPublicRegistry",
			input:   "public.ecr.aws/docker/library/busybox:latest",
			wantErr: registryauth.ErrPublicRegistry,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			c, err := h.credential(tc.input)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Zero(t, h.ecr.TotalCalls())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantHost, c.Registry)
			require.Equal(t, "AWS", c.Username)
			require.NotEmpty(t, c.Password)
			require.Equal(t, epoch.Add(12*time.Hour), c.ExpiresAt)
			for region, n := range tc.wantCalls {
				require.Equal(t, n, h.ecr.Calls(region))
			}
			require.NotContains(t, fmt.Sprint(c), c.Password, "String must redact the password")
			require.NotContains(t, fmt.Sprintf("%#v", c), c.Password, "GoString must redact the password")
		})
	}
}

func TestCredentialEndpointVariant(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		host                string
		wantFIPS, wantDual  bool
		wantSharedWithPlain bool
	}{
		{name: "When the host is FIPS, it should ask for a FIPS client", host: "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com", wantFIPS: true},
		{name: "When the host is dual-stack, it should ask for a dual-stack client", host: "123456789012.dkr-ecr.us-east-1.on.aws", wantDual: true},
		{name: "When the host is dual-stack FIPS, it should ask for both", host: "123456789012.dkr-ecr-fips.us-east-1.on.aws", wantFIPS: true, wantDual: true},
		{name: "When the host is a plain host of another account, it should share the plain token", host: "210987654321.dkr.ecr.us-east-1.amazonaws.com", wantSharedWithPlain: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			_, err := h.credential(useast1)
			require.NoError(t, err)
			_, err = h.credential(tc.host)
			require.NoError(t, err)
			reqs := h.ecr.Requests()
			if tc.wantSharedWithPlain {
				require.Len(t, reqs, 1, "one token per region serves every account")
				return
			}
			require.Len(t, reqs, 2, "a different API endpoint is a different cache key")
			require.Equal(t, tc.wantFIPS, reqs[1].FIPS)
			require.Equal(t, tc.wantDual, reqs[1].DualStack)
		})
	}
}

// TestColdFanIn is the keychain's central promise: 10,000 cold callers for
// 50 accounts in 3 regions cost exactly 3 GetAuthorizationToken calls.
func TestColdFanIn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	regions := []string{"us-east-1", "eu-west-1", "ap-southeast-2"}
	var releases []func()
	for _, r := range regions {
		releases = append(releases, h.ecr.Block(r))
	}
	const callers, accounts = 10000, 50
	var wg sync.WaitGroup
	var failures atomic.Int64
	start := make(chan struct{})
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			host := fmt.Sprintf("%012d.dkr.ecr.%s.amazonaws.com", 100000000000+i%accounts, regions[i%len(regions)])
			c, err := h.kc.Credential(context.Background(), host)
			if err != nil || c.Registry != host || c.Password == "" {
				failures.Add(1)
			}
		}()
	}
	close(start)
	for _, r := range regions {
		h.waitForCalls(r, 1)
	}
	for _, release := range releases {
		release()
	}
	wg.Wait()
	require.Zero(t, failures.Load())
	require.Equal(t, len(regions), h.ecr.TotalCalls())
	for _, r := range regions {
		require.Equal(t, 1, h.ecr.Calls(r), "region %s", r)
	}
}

func TestRefreshAhead(t *testing.T) {
	t.Parallel()
	t.Run("When a used token reaches half its life, it should be refreshed in the background with no caller", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		for range 2 { // the second lookup is a warm use
			_, err := h.credential(useast1)
			require.NoError(t, err)
		}
		h.clock.Step(6*time.Hour + time.Minute)
		h.waitForCalls("us-east-1", 2)
		h.waitForPassword(useast1, fakeecr.Password("us-east-1", 2))
		require.Equal(t, 2, h.ecr.Calls("us-east-1"))
	})

	t.Run("When a caller arrives while the refresh is on the network, it should get the cached token at once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		first, err := h.credential(useast1)
		require.NoError(t, err)
		require.Equal(t, fakeecr.Password("us-east-1", 1), first.Password)

		release := h.ecr.Block("us-east-1")
		defer release()
		h.clock.Step(6*time.Hour + time.Minute)
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			during, err := h.kc.Credential(ctx, useast1)
			cancel()
			require.NoError(t, err, "a caller during a refresh must not wait")
			require.Equal(t, first.Password, during.Password)
		}
		h.waitForCalls("us-east-1", 2)
		release()
		h.waitForPassword(useast1, fakeecr.Password("us-east-1", 2))
		require.Equal(t, 2, h.ecr.Calls("us-east-1"), "concurrent triggers must share one refresh")
	})
}

func TestRefreshAheadIdle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.credential(useast1)
	require.NoError(t, err)
	// Nobody uses the token again: the keychain must let it lapse rather
	// than keep calling AWS for an idle region.
	for range 30 {
		h.clock.Step(time.Hour)
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 1, h.ecr.Calls("us-east-1"))
}

// TestNeverExpired walks a day in 5-minute steps while every refresh
// fails: no caller may ever hold a token past its expiry (minus the margin).
func TestNeverExpired(t *testing.T) {
	t.Parallel()
	for _, failure := range []error{fakeecr.ThrottlingError(), fakeecr.AccessDeniedError(), fakeecr.EndpointError()} {
		t.Run(fmt.Sprintf("When every refresh fails with %T, it should never serve an expired token", failure), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, registryauth.WithBackoff(time.Second, 30*time.Minute))
			_, err := h.credential(useast1)
			require.NoError(t, err)
			h.ecr.SetError("us-east-1", failure)
			served, refused := 0, 0
			for step := 0; step < 24*12; step++ {
				h.clock.Step(5 * time.Minute)
				c, err := h.credential(useast1)
				now := h.clock.Now()
				if err == nil {
					served++
					require.True(t, now.Before(c.ExpiresAt.Add(-registryauth.DefaultExpiryMargin)),
						"served a token expiring at %s at %s", c.ExpiresAt, now)
					continue
				}
				refused++
				var te *registryauth.TokenError
				require.ErrorAs(t, err, &te)
				require.Equal(t, useast1, te.Registry)
			}
			require.Positive(t, served, "the old token must be served while valid")
			require.Positive(t, refused)
			// Backoff bounds the calls: at most one per 15 minutes once it
			// has grown, against one per 5-minute step without it.
			require.Less(t, h.ecr.Calls("us-east-1"), 24*4+12)
		})
	}
}

func TestThrottlingBacksOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, registryauth.WithBackoff(time.Second, time.Minute))
	h.ecr.SetError("us-east-1", fakeecr.ThrottlingError())

	for range 100 {
		_, err := h.credential(useast1)
		require.ErrorIs(t, err, registryauth.ErrThrottled)
	}
	require.Equal(t, 1, h.ecr.Calls("us-east-1"), "callers inside the backoff window must not call ECR")

	// Each further failure at least doubles the wait, up to the cap.
	h.clock.Step(time.Second)
	_, err := h.credential(useast1)
	require.ErrorIs(t, err, registryauth.ErrThrottled)
	require.Equal(t, 2, h.ecr.Calls("us-east-1"))
	h.clock.Step(900 * time.Millisecond)
	_, err = h.credential(useast1)
	require.ErrorIs(t, err, registryauth.ErrThrottled)
	require.Equal(t, 2, h.ecr.Calls("us-east-1"), "the second backoff is at least 1s")

	h.ecr.SetError("us-east-1", nil)
	h.clock.Step(time.Minute)
	c, err := h.credential(useast1)
	require.NoError(t, err)
	require.Equal(t, fakeecr.Password("us-east-1", 3), c.Password)
}

func TestCancelledCaller(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := h.ecr.Block("us-east-1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.kc.Credential(ctx, useast1)
		done <- err
	}()
	h.waitForCalls("us-east-1", 1)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, registryauth.ErrNotECR)
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled caller must return at once")
	}
	release()
	h.waitForPassword(useast1, fakeecr.Password("us-east-1", 1))
	require.Equal(t, 1, h.ecr.Calls("us-east-1"), "the load the cancelled caller started must be cached")
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantKind error
		wantHint string
	}{
		{name: "When ECR denies access, it should answer ErrAccessDenied with the IAM action to grant", err: fakeecr.AccessDeniedError(), wantKind: registryauth.ErrAccessDenied, wantHint: "ecr:GetAuthorizationToken"},
		{name: "When ECR throttles, it should answer ErrThrottled", err: fakeecr.ThrottlingError(), wantKind: registryauth.ErrThrottled, wantHint: "500 requests/s"},
		{name: "When the endpoint is unreachable, it should answer ErrEndpointUnreachable naming the VPC endpoint", err: fakeecr.EndpointError(), wantKind: registryauth.ErrEndpointUnreachable, wantHint: "com.amazonaws.us-east-1.ecr.api"},
		{name: "When ECR rejects a parameter, it should answer ErrTokenFetch", err: fakeecr.InvalidParameterError(), wantKind: registryauth.ErrTokenFetch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.ecr.FailNext("us-east-1", 1, tc.err)
			_, err := h.credential(useast1)
			require.ErrorIs(t, err, tc.wantKind)
			var te *registryauth.TokenError
			require.ErrorAs(t, err, &te)
			require.Equal(t, "us-east-1", te.Region)
			require.Equal(t, "aws", te.Partition)
			require.Contains(t, err.Error(), useast1)
			require.Contains(t, err.Error(), tc.wantHint)
			require.ErrorIs(t, err, tc.err, "the SDK error must stay reachable with errors.As/Is")
		})
	}
}

func TestForget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, err := h.credential(useast1)
	require.NoError(t, err)
	h.kc.Forget("210987654321.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4:latest")
	c, err := h.credential(useast1)
	require.NoError(t, err)
	require.Equal(t, fakeecr.Password("us-east-1", 2), c.Password, "a forgotten token must be fetched again")
	h.kc.Forget("quay.io") // not ECR: nothing happens
	require.Equal(t, 2, h.ecr.Calls("us-east-1"))
}

func TestClose(t *testing.T) {
	before := goroutinesIn("registryauth.(*Keychain)")
	h := newHarness(t)
	release := h.ecr.Block("us-east-1")
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := h.kc.Credential(ctx, useast1) // leaves a fetch parked in the fake
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Positive(t, goroutinesIn("registryauth.(*Keychain)"))

	require.NoError(t, h.kc.Close())
	require.Equal(t, before, goroutinesIn("registryauth.(*Keychain)"), "Close must stop every goroutine it started")
	_, err = h.credential(useast1)
	require.ErrorIs(t, err, registryauth.ErrClosed)
	require.NoError(t, h.kc.Close(), "Close must be idempotent")
}

func TestNewKeychainValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []registryauth.Option
	}{
		{name: "When no way to reach ECR is given, it should refuse"},
		{name: "When the refresh fraction is 1, it should refuse", opts: []registryauth.Option{registryauth.WithClientFactory(fakeecr.New().ClientFactory), registryauth.WithRefreshFraction(1)}},
		{name: "When the backoff cap is below its start, it should refuse", opts: []registryauth.Option{registryauth.WithClientFactory(fakeecr.New().ClientFactory), registryauth.WithBackoff(time.Minute, time.Second)}},
		{name: "When a registry role has no AWS config, it should refuse", opts: []registryauth.Option{registryauth.WithClientFactory(fakeecr.New().ClientFactory), registryauth.WithRegistryRole(registryauth.RegistryRole{Match: useast1, RoleARN: "arn:aws:iam::123456789012:role/pull"})}},
		{name: "When the expiry margin eats the token, it should refuse", opts: []registryauth.Option{registryauth.WithClientFactory(fakeecr.New().ClientFactory), registryauth.WithExpiryMargin(7 * time.Hour)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kc, err := registryauth.NewKeychain(tc.opts...)
			require.Error(t, err)
			require.Nil(t, kc)
		})
	}
}

// goroutinesIn counts goroutines whose stack mentions fn.
func goroutinesIn(fn string) int {
	deadline := time.Now().Add(2 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		n := 0
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, fn) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = errors.New
