package benchcompare

import (
	"fmt"
	"slices"
	"testing"
)

// TestClaims checks the claims of docs/performance.md, so that they are
// asserted on every run of this module's tests, not only printed. The bars
// are the issue's; the measurements leave them wide margins (see the doc),
// and the timing claim takes the median of three side-by-side rounds.
func TestClaims(t *testing.T) {
	t.Run(fmt.Sprintf("When a credential is cached, our lookup should be at least %dx faster than ecr-login's with its file cache", warmRatioBar), func(t *testing.T) {
		setups := map[string]func(*testing.B) func() error{}
		for _, c := range warmContenders {
			setups[c.name] = c.setup
		}
		var ratios []float64
		for range 3 {
			ours := nsPerOp(t, "ours", setups["ours"])
			theirs := nsPerOp(t, "ecr-login", setups["ecr-login"])
			ratios = append(ratios, theirs/ours)
		}
		slices.Sort(ratios)
		t.Logf("ecr-login / ours, three rounds: %.0f", ratios)
		if ratios[1] < warmRatioBar {
			t.Errorf("median ratio %.0fx, want >= %dx", ratios[1], warmRatioBar)
		}
	})

	t.Run(fmt.Sprintf("When %d callers start cold over %d accounts in %d regions, it should call ECR once per region", fanInCallers, fanInAccounts, len(fanInRegions)), func(t *testing.T) {
		t.Setenv("AWS_ECR_CACHE_DIR", t.TempDir())
		contenders := map[string]fanInContender{}
		for _, c := range fanInContenders {
			contenders[c.name] = c.start
		}
		if calls := runFanIn(t, contenders["ours"]); calls != len(fanInRegions) {
			t.Errorf("ours made %d GetAuthorizationToken calls, want %d", calls, len(fanInRegions))
		}
		if !testing.Short() { // for the record: ecr-login has no singleflight
			t.Logf("ecr-login made %d calls", runFanIn(t, contenders["ecr-login"]))
		}
	})

	t.Run(fmt.Sprintf("When a release keeps its metadata in the last layer, our reader should read less than %g of a full read's bytes", bytesRatioBar), func(t *testing.T) {
		reg := newReleaseRegistry(t)
		cost := map[string]releaseCost{}
		for _, r := range releaseReaders(t, reg) {
			c, err := r.read(t.Context())
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			cost[r.name] = c
		}
		ours, naive := cost["ours"], cost["naive-full-read"]
		t.Logf("bytes read: ours %d, naive %d; S3 bytes served: ours %d, naive %d", ours.bytes, naive.bytes, ours.s3Bytes, naive.s3Bytes)
		// By the readers' own counts and by what the registry served.
		if float64(ours.bytes) >= bytesRatioBar*float64(naive.bytes) || float64(ours.s3Bytes) >= bytesRatioBar*float64(naive.s3Bytes) {
			t.Errorf("ours read %d bytes (S3 %d), naive %d (S3 %d): want less than %g of it", ours.bytes, ours.s3Bytes, naive.bytes, naive.s3Bytes, bytesRatioBar)
		}
	})
}

// nsPerOp measures one warm contender with testing.Benchmark.
func nsPerOp(t *testing.T, name string, setup func(*testing.B) func() error) float64 {
	t.Helper()
	r := testing.Benchmark(func(b *testing.B) { benchWarm(b, name, setup) })
	if r.N == 0 {
		t.Fatalf("benchmark of %s failed", name)
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}
