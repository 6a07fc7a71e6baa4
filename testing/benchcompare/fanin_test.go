package benchcompare

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	ecrlogin "github.com/awslabs/amazon-ecr-credential-helper/ecr-login"
)

// The cold fan-in: a fleet of callers (HyperShift reconciling many hosted
// clusters at start-up) asks at once for registries of fanInAccounts accounts
// in len(fanInRegions) regions, with nothing cached.
const (
	fanInCallers  = 1000
	fanInAccounts = 50
)

var fanInRegions = []string{"us-east-1", "us-west-2", "eu-west-1"}

// fanInHost spreads the callers evenly over every (account, region) pair.
func fanInHost(i int) string {
	pair := i % (fanInAccounts * len(fanInRegions))
	account := fmt.Sprintf("2109876543%02d", pair%fanInAccounts)
	return registryHost(account, fanInRegions[pair/fanInAccounts])
}

// fanInContender starts one cold run: a fresh cache and the lookup that all
// callers share. done releases what the run held.
type fanInContender func(tb testing.TB) (lookup func(host string) error, done func())

var fanInContenders = []struct {
	name  string
	start fanInContender
}{
	{"ours", func(tb testing.TB) (func(string) error, func()) {
		kc := newKeychain(tb)
		ctx := context.Background()
		return func(host string) error {
			_, err := kc.Credential(ctx, host)
			return err
		}, func() { _ = kc.Close() }
	}},
	// ecr-login keeps nothing in memory: a fresh cache directory is a cold
	// start. Its callers share the directory, as processes on one node do.
	{"ecr-login", func(tb testing.TB) (func(string) error, func()) {
		if err := os.Setenv("AWS_ECR_CACHE_DIR", tb.TempDir()); err != nil {
			tb.Fatal(err)
		}
		h := ecrlogin.NewECRHelper(ecrlogin.WithLogger(io.Discard))
		return func(host string) error {
			_, _, err := h.Get(host)
			return err
		}, func() {}
	}},
}

// coldFanIn runs fanInCallers concurrent lookups, released together, and
// returns how many GetAuthorizationToken calls the fake ECR API received.
func coldFanIn(lookup func(host string) error) (calls int, err error) {
	before := fakeAPI.TotalCalls()
	start := make(chan struct{})
	errs := make(chan error, fanInCallers)
	var wg sync.WaitGroup
	for i := range fanInCallers {
		wg.Go(func() {
			<-start
			if err := lookup(fanInHost(i)); err != nil {
				errs <- fmt.Errorf("%s: %w", fanInHost(i), err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return fakeAPI.TotalCalls() - before, nil
}

// runFanIn does one cold run of c and cleans up after it.
func runFanIn(tb testing.TB, c fanInContender) int {
	lookup, done := c(tb)
	calls, err := coldFanIn(lookup)
	done()
	// Each of ecr-login's lookups builds its own HTTP client; drop their idle
	// connections so runs do not pile up sockets.
	fakeServer.CloseClientConnections()
	if err != nil {
		tb.Fatal(err)
	}
	return calls
}

// BenchmarkColdFanIn reports the API calls of one cold fan-in (apicalls/op)
// and how long it takes until every caller has a credential (ns/op).
func BenchmarkColdFanIn(b *testing.B) {
	b.Run(fmt.Sprintf("callers=%d/accounts=%d/regions=%d", fanInCallers, fanInAccounts, len(fanInRegions)), func(b *testing.B) {
		for _, c := range fanInContenders {
			b.Run("impl="+c.name, func(b *testing.B) {
				b.Setenv("AWS_ECR_CACHE_DIR", os.Getenv("AWS_ECR_CACHE_DIR")) // restored afterwards
				calls := 0
				for b.Loop() {
					calls += runFanIn(b, c.start)
				}
				b.ReportMetric(float64(calls)/float64(b.N), "apicalls/op")
			})
		}
	})
}
