package registryauth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
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

// Stress knobs, from the environment so that make targets can set them:
// STRESS_DURATION (default 5s: the CI form; make stress sets 60s, make
// stress-long 10m) and STRESS_CALLERS (default 10000).
func stressConfig(t *testing.T) (time.Duration, int) {
	t.Helper()
	d, callers := 5*time.Second, 10000
	if s := os.Getenv("STRESS_DURATION"); s != "" {
		var err error
		d, err = time.ParseDuration(s)
		require.NoError(t, err, "STRESS_DURATION")
	}
	if s := os.Getenv("STRESS_CALLERS"); s != "" {
		var err error
		callers, err = strconv.Atoi(s)
		require.NoError(t, err, "STRESS_CALLERS")
	}
	return d, callers
}

// TestStress runs 10,000 goroutines against one keychain for the
// configured duration while tokens rotate every second of simulated time
// and ECR randomly throttles or becomes unreachable. It proves: no
// caller ever receives a token with less than the expiry margin left at
// the moment it asked; every failure is a typed, expected one; goroutines
// and heap stay bounded; nothing is left running after Close. It is not
// parallel, so that the goroutine counts are its own.
func TestStress(t *testing.T) {
	if testing.Short() {
		t.Skip("stress test: skipped with -short")
	}
	duration, callers := stressConfig(t)

	const (
		lifetime = 2 * time.Second // refreshed at half-life: a new token every second
		margin   = 200 * time.Millisecond
		tick     = 5 * time.Millisecond // the driver steps simulated time by tick per tick of real time
	)
	regions := []string{"us-east-1", "eu-west-1", "ap-southeast-2"}
	hosts := make([]string, 0, 3*4)
	for _, r := range regions {
		for a := range 4 {
			hosts = append(hosts, fmt.Sprintf("%012d.dkr.ecr.%s.amazonaws.com", 123456789012+a, r))
		}
	}

	baseGoroutines := runtime.NumGoroutine()
	clk := clocktesting.NewFakeClock(epoch)
	api := fakeecr.New(fakeecr.WithClock(clk), fakeecr.WithTokenLifetime(lifetime))
	logs := &logSink{}
	kc, err := registryauth.NewKeychain(
		registryauth.WithClientFactory(api.ClientFactory),
		registryauth.WithClock(clk),
		registryauth.WithExpiryMargin(margin),
		registryauth.WithBackoff(20*time.Millisecond, 300*time.Millisecond),
		registryauth.WithFetchTimeout(5*time.Second),
		registryauth.WithLogger(logs.logger()),
	)
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = kc.Close()
		}
	})

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var bg sync.WaitGroup
	// The driver: simulated time runs at the speed of real time while the
	// machine keeps up, and slows down with it when it does not. Every 50ms
	// of simulated time a region gets a burst of throttling or
	// unreachable-endpoint errors, or a token is revoked (Forget): faults
	// follow simulated time, so a loaded machine does not get more of them.
	var injected, revoked atomic.Int64
	bg.Add(1)
	go func() {
		defer bg.Done()
		rng := rand.New(rand.NewPCG(7, 11))
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				clk.Step(tick)
			}
			if n%10 != 0 {
				continue
			}
			region := regions[rng.IntN(len(regions))]
			switch rng.IntN(4) {
			case 0:
				api.FailNext(region, 1+rng.IntN(3), fakeecr.ThrottlingError())
				injected.Add(1)
			case 1:
				api.FailNext(region, 1+rng.IntN(3), fakeecr.EndpointError())
				injected.Add(1)
			case 2:
				kc.Forget(hosts[rng.IntN(len(hosts))])
				revoked.Add(1)
			}
		}
	}()
	// The sampler: goroutines and heap, every 100ms.
	var peakGoroutines, peakHeap atomic.Uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if g := uint64(runtime.NumGoroutine()); g > peakGoroutines.Load() {
			peakGoroutines.Store(g)
		}
		if ms.HeapAlloc > peakHeap.Load() {
			peakHeap.Store(ms.HeapAlloc)
		}
	}
	bg.Add(1)
	go func() {
		defer bg.Done()
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
				sample()
			}
		}
	}()

	var served, stale, throttled, unreachable atomic.Int64
	var unexpected atomic.Pointer[error]
	var wg sync.WaitGroup
	deadline := time.Now().Add(duration)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 3))
			host := hosts[i%len(hosts)]
			for time.Now().Before(deadline) {
				// Read the clock before asking: whatever happens during the
				// call, a served token must have had the margin left then.
				asked := clk.Now()
				c, err := kc.Credential(ctx, host)
				switch {
				case err == nil:
					served.Add(1)
					if !asked.Before(c.ExpiresAt.Add(-margin)) {
						stale.Add(1)
					}
				case errors.Is(err, registryauth.ErrThrottled):
					throttled.Add(1)
				case errors.Is(err, registryauth.ErrEndpointUnreachable):
					unreachable.Add(1)
				case errors.Is(err, context.Canceled):
				default:
					unexpected.CompareAndSwap(nil, &err)
				}
				// Callers do other work between registry calls.
				time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	sample()
	stop()
	bg.Wait()

	require.NoError(t, kc.Close())
	closed = true
	t.Logf("%d callers for %v: %d tokens served, %d throttled, %d unreachable; %d ECR calls (%d fault bursts, %d revocations); "+
		"simulated %v; peak %d goroutines, peak heap %.1f MiB",
		callers, duration, served.Load(), throttled.Load(), unreachable.Load(), api.TotalCalls(), injected.Load(), revoked.Load(),
		clk.Since(epoch).Round(time.Millisecond), peakGoroutines.Load(), float64(peakHeap.Load())/(1<<20))

	if p := unexpected.Load(); p != nil {
		t.Fatalf("an unexpected error: %v", *p)
	}
	require.Zero(t, stale.Load(), "a token with less than the expiry margin left was served")
	require.Positive(t, served.Load())
	// At least one rotation per simulated second and region.
	require.GreaterOrEqual(t, api.TotalCalls(), len(regions)*int(clk.Since(epoch)/time.Second))
	// The keychain adds a refresher and at most one fetch per region.
	require.LessOrEqual(t, peakGoroutines.Load(), uint64(baseGoroutines+callers+64))
	require.Less(t, peakHeap.Load(), uint64(512<<20), "heap must stay bounded")
	require.Zero(t, goroutinesIn("registryauth.(*Keychain)"), "Close must stop every goroutine the keychain started")
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= baseGoroutines+2 }, 5*time.Second, 10*time.Millisecond,
		"goroutines left after Close: %d, %d before", runtime.NumGoroutine(), baseGoroutines)
	// Every generated password shares a prefix: checking for it (raw and
	// inside "AWS:<password>" base64) covers them all in one pass.
	logs.mu.Lock()
	defer logs.mu.Unlock()
	text := strings.Join(logs.lines, "\n")
	require.NotContains(t, text, "fake-ecr-password-")
	require.NotContains(t, text, base64.StdEncoding.EncodeToString([]byte("AWS:fake-ecr-password-"))[:28])
}
