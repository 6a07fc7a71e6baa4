package registryauth_test

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// Fault injection against the fake ECR API and a fake clock: what the
// keychain does when ECR throttles, denies, hangs, or the clock jumps.

// callers runs n concurrent Credential calls for host and returns how many
// failed and the errors' kinds.
func (h *harness) callers(n int, host string) (failed int, kinds map[error]int) {
	h.t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	kinds = map[error]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.credential(host)
			if err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			failed++
			for _, k := range []error{registryauth.ErrThrottled, registryauth.ErrAccessDenied, registryauth.ErrEndpointUnreachable} {
				if errors.Is(err, k) {
					kinds[k]++
				}
			}
		}()
	}
	wg.Wait()
	return failed, kinds
}

func TestFaultThrottlingStorm(t *testing.T) {
	t.Parallel()

	t.Run("When ECR throttles for an hour, it should back off and keep the API calls bounded whatever the callers do", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, registryauth.WithBackoff(time.Second, time.Minute))
		h.ecr.SetError("us-east-1", fakeecr.ThrottlingError())
		// A storm: 200 callers at the same instant share one call.
		failed, kinds := h.callers(200, useast1)
		require.Equal(t, 200, failed)
		require.Equal(t, 200, kinds[registryauth.ErrThrottled])
		require.Equal(t, 1, h.ecr.Calls("us-east-1"))

		// Then an hour of 8 callers a second. Backoff doubles from 1s to the
		// 1-minute cap, waiting at least half of each: at most
		// 1+1+2+4+8+16 calls in the first ~31s, then one per 30s at worst.
		const hour = 3600
		for range hour {
			h.clock.Step(time.Second)
			failed, kinds := h.callers(8, useast1)
			require.Equal(t, 8, failed)
			require.Equal(t, 8, kinds[registryauth.ErrThrottled], "every failure is typed ErrThrottled")
		}
		calls := h.ecr.Calls("us-east-1")
		require.LessOrEqual(t, calls, 7+hour/30+1, "backoff must bound the calls: %d in an hour", calls)
		require.GreaterOrEqual(t, calls, hour/60, "the keychain must keep trying at the cap: %d in an hour", calls)

		h.ecr.SetError("us-east-1", nil)
		h.clock.Step(time.Minute)
		_, err := h.credential(useast1)
		require.NoError(t, err, "it should recover as soon as ECR does")
	})

	t.Run("When many keychains are throttled at once, it should spread their retries with jitter within [d/2, d]", func(t *testing.T) {
		t.Parallel()
		clk := clocktesting.NewFakeClock(epoch)
		f := fakeecr.New(fakeecr.WithClock(clk))
		f.SetError("us-east-1", fakeecr.ThrottlingError())
		const keychains, initial, step = 20, 10 * time.Second, 100 * time.Millisecond
		var kcs []*registryauth.Keychain
		for range keychains {
			kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(f.ClientFactory), registryauth.WithClock(clk),
				registryauth.WithBackoff(initial, time.Minute))
			require.NoError(t, err)
			t.Cleanup(func() { _ = kc.Close() })
			kcs = append(kcs, kc)
		}
		// All fail at the same instant, then every keychain is asked every 100ms.
		retries := make([]time.Duration, keychains)
		for _, kc := range kcs {
			_, err := kc.Credential(t.Context(), useast1)
			require.ErrorIs(t, err, registryauth.ErrThrottled)
		}
		require.Equal(t, keychains, f.Calls("us-east-1"))
		for elapsed := step; elapsed <= initial+step; elapsed += step {
			clk.Step(step)
			for i, kc := range kcs {
				before := f.Calls("us-east-1")
				_, _ = kc.Credential(t.Context(), useast1)
				if f.Calls("us-east-1") > before && retries[i] == 0 {
					retries[i] = elapsed
				}
			}
		}
		distinct := map[time.Duration]bool{}
		for i, d := range retries {
			require.GreaterOrEqual(t, d, initial/2, "keychain %d retried before half the backoff", i)
			require.LessOrEqual(t, d, initial+step, "keychain %d waited longer than the backoff", i)
			distinct[d] = true
		}
		require.Greater(t, len(distinct), keychains/4, "retries must be spread, not in step: %v", sorted(retries))
	})

	t.Run("When a refresh is throttled, it should keep serving warm callers the cached token without waiting", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, registryauth.WithBackoff(time.Second, 10*time.Minute))
		for range 2 { // fetched, then used: the refresher keeps it warm
			_, err := h.credential(useast1)
			require.NoError(t, err)
		}
		h.ecr.SetError("us-east-1", fakeecr.ThrottlingError())
		h.clock.Step(6*time.Hour + time.Minute) // past refresh-ahead
		h.waitForCalls("us-east-1", 2)

		// Until the margin before expiry, warm callers never see the storm.
		var slowest atomic.Int64
		for h.clock.Now().Before(epoch.Add(12*time.Hour - registryauth.DefaultExpiryMargin - 10*time.Minute)) {
			var wg sync.WaitGroup
			var bad atomic.Int64
			for range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					start := time.Now()
					c, err := h.kc.Credential(ctx, useast1)
					if d := time.Since(start); d > time.Duration(slowest.Load()) {
						slowest.Store(int64(d))
					}
					if err != nil || c.Password != fakeecr.Password("us-east-1", 1) {
						bad.Add(1)
					}
				}()
			}
			wg.Wait()
			require.Zero(t, bad.Load(), "a warm caller got an error or another token at %s", h.clock.Now())
			h.clock.Step(10 * time.Minute)
		}
		t.Logf("slowest warm call during the storm: %v; ECR calls: %d", time.Duration(slowest.Load()), h.ecr.Calls("us-east-1"))
		// 5h40m of retries with backoff capped at 10 minutes.
		require.LessOrEqual(t, h.ecr.Calls("us-east-1"), 1+11+34*2, "the refresher must back off too")

		// Past the margin the stale token is refused: a typed error, never the old token.
		h.clock.Step(30 * time.Minute)
		_, err := h.credential(useast1)
		require.ErrorIs(t, err, registryauth.ErrThrottled)
	})
}

func sorted(ds []time.Duration) []time.Duration {
	out := append([]time.Duration(nil), ds...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func TestFaultAccessDenied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		warm bool // a token was fetched before access was revoked
	}{
		{name: "When the identity may not call GetAuthorizationToken, it should answer ErrAccessDenied and not retry in a loop"},
		{name: "When access is revoked after a token was fetched, it should serve the token until the margin then answer ErrAccessDenied", warm: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.warm {
				for range 2 {
					_, err := h.credential(useast1)
					require.NoError(t, err)
				}
			}
			before := h.ecr.Calls("us-east-1")
			h.ecr.SetError("us-east-1", fakeecr.AccessDeniedError())
			if tc.warm {
				h.clock.Step(12*time.Hour - registryauth.DefaultExpiryMargin) // the refresher tried and failed meanwhile
			}
			failed, kinds := h.callers(100, useast1)
			require.Equal(t, 100, failed)
			require.Equal(t, 100, kinds[registryauth.ErrAccessDenied])
			_, err := h.credential(useast1)
			var te *registryauth.TokenError
			require.ErrorAs(t, err, &te)
			require.Contains(t, te.Hint, `"ecr:GetAuthorizationToken"`)
			require.NotErrorIs(t, err, registryauth.ErrThrottled)

			// Ten minutes of callers every second: with the default backoff
			// (1s doubling to 5 minutes, at least half of each) that is at
			// most 10 calls, against 600 without it.
			for range 600 {
				h.clock.Step(time.Second)
				failed, _ := h.callers(4, useast1)
				require.Equal(t, 4, failed)
			}
			calls := h.ecr.Calls("us-east-1") - before
			require.LessOrEqual(t, calls, 12, "AccessDenied must not be retried in a loop: %d calls", calls)
			require.GreaterOrEqual(t, calls, 3, "but it should be retried, slowly, in case access is granted")
		})
	}
}

func TestFaultEndpointTimeout(t *testing.T) {
	t.Parallel()
	const fetchTimeout = 300 * time.Millisecond
	// blackHole accepts requests and never answers, like a security group
	// dropping packets to a missing VPC endpoint.
	// The body is read first: only then does net/http notice the client
	// hanging up and end the request's context.
	stop := make(chan struct{})
	blackHole := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(blackHole.Close)
	t.Cleanup(func() { close(stop) }) // runs first
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close() // nothing listens there any more
	sdk := func(endpoint string) registryauth.Option {
		return registryauth.WithAWSConfig(aws.Config{
			Region:      "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("AKIAFAKESTATIC000000", "fake-static-secret-access-key-0000", ""),
		}, registryauth.WithEndpoint(endpoint))
	}
	tests := []struct {
		name string
		opt  func(h *harness) registryauth.Option // nil: the fake client with a minute of latency
	}{
		{name: "When the API never answers in time, it should give up after the fetch timeout with ErrEndpointUnreachable"},
		{name: "When the real SDK meets an endpoint that never answers, it should give up after the fetch timeout with ErrEndpointUnreachable",
			opt: func(*harness) registryauth.Option { return sdk(blackHole.URL) }},
		{name: "When the real SDK meets a refused connection, it should fail with ErrEndpointUnreachable",
			opt: func(*harness) registryauth.Option { return sdk(refused.URL) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := []registryauth.Option{registryauth.WithFetchTimeout(fetchTimeout)}
			h := newHarness(t, opts...)
			if tc.opt != nil {
				// A keychain on the real SDK; the harness's only checks the logs.
				kc, err := registryauth.NewKeychain(append(opts, tc.opt(h), registryauth.WithLogger(h.logs.logger()))...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = kc.Close() })
				h.kc = kc
			} else {
				h.ecr.SetLatency("us-east-1", time.Minute)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			_, err := h.kc.Credential(ctx, useast1)
			waited := time.Since(start)
			h.logs.recordError(err)

			require.Less(t, waited, fetchTimeout+2*time.Second, "the fetch timeout bounds the wait, not the caller's 10s")
			require.ErrorIs(t, err, registryauth.ErrEndpointUnreachable)
			var te *registryauth.TokenError
			require.ErrorAs(t, err, &te)
			require.Contains(t, te.Hint, "com.amazonaws.us-east-1.ecr.api", "the hint names the VPC endpoint to create")
			require.NotContains(t, err.Error(), "fake-static-secret-access-key-0000")
			if tc.opt == nil {
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.Equal(t, 1, h.ecr.Calls("us-east-1"))
			}
		})
	}
}

// TestFaultClockJumps walks four simulated days in 10-minute steps while
// the wall clock jumps forward and back by up to 30 hours. ECR shares the
// clock, as a host whose clock is set shares its view of time with every
// signature it checks.
func TestFaultClockJumps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	check := h.ecr.Authenticator()
	rng := rand.New(rand.NewPCG(1, 2))
	jumps := map[int]time.Duration{}
	forward := 4 * 24 * time.Hour
	for _, at := range []int{30, 90, 150, 200, 260, 330, 400, 470, 540} {
		d := time.Duration(rng.IntN(60)-30) * time.Hour
		jumps[at] = d
		forward += max(d, 0)
	}
	const steps = 576 // 4 days of 10 minutes
	refreshesDue := 0
	for step := range steps {
		if d, ok := jumps[step]; ok {
			h.clock.SetTime(h.clock.Now().Add(d))
		} else {
			h.clock.Step(10 * time.Minute)
		}
		now := h.clock.Now()
		c, err := h.credential(useast1)
		require.NoError(t, err, "When ECR is healthy, it should always serve a token (step %d, %s)", step, now)
		require.True(t, now.Before(c.ExpiresAt.Add(-registryauth.DefaultExpiryMargin)),
			"When the clock jumps, it should never serve a token past its margin: step %d, now %s, expires %s", step, now, c.ExpiresAt)
		require.True(t, check(c.Username, c.Password), "ECR must still accept what was served at step %d (%s)", step, now)
		if c.ExpiresAt.Sub(now) < 6*time.Hour {
			// Past half-life a refresh is due: it must happen, whatever the jumps did.
			refreshesDue++
			require.Eventually(t, func() bool {
				c, err := h.credential(useast1)
				return err == nil && c.ExpiresAt.Sub(h.clock.Now()) > 6*time.Hour
			}, 5*time.Second, time.Millisecond, "When a token is past half-life, it should be refreshed (step %d, %s)", step, now)
		}
	}
	// A refresh per 5.4 hours of forward time at most, plus one per jump.
	calls := h.ecr.Calls("us-east-1")
	require.LessOrEqual(t, calls, int(forward/(5*time.Hour))+len(jumps)+2)
	require.Positive(t, refreshesDue)
	t.Logf("%d clock jumps %v, %v of forward time, %d refreshes seen due, %d ECR calls", len(jumps), jumps, forward, refreshesDue, calls)
}

// TestFaultClockAheadOfECR: the local wall clock runs almost a token's
// life ahead of ECR's, so every token arrives with less life left than the
// expiry margin (a VM clock that jumped forward, an NTP step). The keychain
// must still cache it for a while instead of calling ECR on every lookup,
// and never serve it expired.
func TestFaultClockAheadOfECR(t *testing.T) {
	t.Parallel()
	ecrClock := clocktesting.NewFakeClock(epoch)
	local := clocktesting.NewFakeClock(epoch.Add(12*time.Hour - 2*time.Minute))
	api := fakeecr.New(fakeecr.WithClock(ecrClock))
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(api.ClientFactory), registryauth.WithClock(local))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })

	for range 100 { // a lookup every 600ms for a minute
		now := local.Now()
		c, err := kc.Credential(t.Context(), useast1)
		require.NoError(t, err)
		require.True(t, now.Before(c.ExpiresAt), "never an expired token: now %s, expires %s", now, c.ExpiresAt)
		local.Step(600 * time.Millisecond)
		ecrClock.Step(600 * time.Millisecond)
	}
	require.LessOrEqual(t, api.Calls("us-east-1"), 3,
		"When every token arrives inside the expiry margin, it should still be cached, not fetched per lookup")
}
