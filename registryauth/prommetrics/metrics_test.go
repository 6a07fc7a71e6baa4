package prommetrics_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/prommetrics"
)

var expiry = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC) // 1767268800

func TestMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		record  func(m registryauth.Metrics)
		metrics []string
		want    string
	}{
		{
			name: "When lookups hit and miss, it should count them per partition and region",
			record: func(m registryauth.Metrics) {
				m.CacheHit("aws", "us-east-1")
				m.CacheHit("aws", "us-east-1")
				m.CacheHit("aws-us-gov", "us-gov-west-1")
				m.CacheMiss("aws", "us-east-1")
			},
			metrics: []string{"hypershift_ecr_cache_hits_total", "hypershift_ecr_cache_misses_total"},
			want: `
# HELP hypershift_ecr_cache_hits_total ECR credential lookups served from the in-memory token cache.
# TYPE hypershift_ecr_cache_hits_total counter
hypershift_ecr_cache_hits_total{partition="aws",region="us-east-1"} 2
hypershift_ecr_cache_hits_total{partition="aws-us-gov",region="us-gov-west-1"} 1
# HELP hypershift_ecr_cache_misses_total ECR credential lookups that had to wait for a GetAuthorizationToken call.
# TYPE hypershift_ecr_cache_misses_total counter
hypershift_ecr_cache_misses_total{partition="aws",region="us-east-1"} 1
`,
		},
		{
			name: "When tokens are fetched, it should count outcomes and observe durations",
			record: func(m registryauth.Metrics) {
				m.TokenFetch("aws", "us-east-1", "ok", 40*time.Millisecond)
				m.TokenFetch("aws", "us-east-1", "throttled", 2*time.Second)
			},
			metrics: []string{"hypershift_ecr_token_fetches_total", "hypershift_ecr_token_fetch_duration_seconds"},
			want: `
# HELP hypershift_ecr_token_fetch_duration_seconds Duration of ecr:GetAuthorizationToken calls, whatever their outcome.
# TYPE hypershift_ecr_token_fetch_duration_seconds histogram
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="0.01"} 0
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="0.025"} 0
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="0.05"} 1
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="0.1"} 1
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="0.25"} 1
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="0.5"} 1
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="1"} 1
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="2.5"} 2
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="5"} 2
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="10"} 2
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="30"} 2
hypershift_ecr_token_fetch_duration_seconds_bucket{partition="aws",region="us-east-1",le="+Inf"} 2
hypershift_ecr_token_fetch_duration_seconds_sum{partition="aws",region="us-east-1"} 2.04
hypershift_ecr_token_fetch_duration_seconds_count{partition="aws",region="us-east-1"} 2
# HELP hypershift_ecr_token_fetches_total ecr:GetAuthorizationToken calls by outcome (ok, access_denied, throttled, no_credentials, endpoint_unreachable, invalid_token, error).
# TYPE hypershift_ecr_token_fetches_total counter
hypershift_ecr_token_fetches_total{outcome="ok",partition="aws",region="us-east-1"} 1
hypershift_ecr_token_fetches_total{outcome="throttled",partition="aws",region="us-east-1"} 1
`,
		},
		{
			name: "When a refresh fails, it should count it by outcome",
			record: func(m registryauth.Metrics) {
				m.RefreshFailure("aws-cn", "cn-north-1", "endpoint_unreachable")
			},
			metrics: []string{"hypershift_ecr_refresh_failures_total"},
			want: `
# HELP hypershift_ecr_refresh_failures_total Background token refreshes that failed while the previous token was still served, by outcome.
# TYPE hypershift_ecr_refresh_failures_total counter
hypershift_ecr_refresh_failures_total{outcome="endpoint_unreachable",partition="aws-cn",region="cn-north-1"} 1
`,
		},
		{
			name: "When a token is cached, it should expose its expiry as a Unix timestamp",
			record: func(m registryauth.Metrics) {
				m.TokenExpiry("aws", "us-east-1", expiry.Add(-time.Hour))
				m.TokenExpiry("aws", "us-east-1", expiry)
			},
			metrics: []string{"hypershift_ecr_token_expiry_timestamp_seconds"},
			want: `
# HELP hypershift_ecr_token_expiry_timestamp_seconds Unix time in seconds at which the cached ECR token of the region expires. Time to expiry is hypershift_ecr_token_expiry_timestamp_seconds - time().
# TYPE hypershift_ecr_token_expiry_timestamp_seconds gauge
hypershift_ecr_token_expiry_timestamp_seconds{partition="aws",region="us-east-1"} 1.7672688e+09
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewPedanticRegistry()
			m, err := prommetrics.New(reg)
			require.NoError(t, err)
			tc.record(m)
			require.Equal(t, strings.TrimPrefix(tc.want, "\n"), gatherText(t, reg, tc.metrics...))
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reg     func() prometheus.Registerer
		opts    []prommetrics.Option
		wantErr string
	}{
		{
			name:    "When the registerer is nil, it should fail",
			reg:     func() prometheus.Registerer { return nil },
			wantErr: "nil Registerer",
		},
		{
			name:    "When buckets are not increasing, it should fail",
			reg:     func() prometheus.Registerer { return prometheus.NewRegistry() },
			opts:    []prommetrics.Option{prommetrics.WithBuckets(1, 0.5)},
			wantErr: "strictly increasing",
		},
		{
			name:    "When no buckets are given, it should fail",
			reg:     func() prometheus.Registerer { return prometheus.NewRegistry() },
			opts:    []prommetrics.Option{prommetrics.WithBuckets()},
			wantErr: "no buckets",
		},
		{
			name: "When a metric name is taken by another kind of collector, it should fail and unregister the rest",
			reg: func() prometheus.Registerer {
				reg := prometheus.NewRegistry()
				reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "hypershift_ecr_refresh_failures_total", Help: "squatter"}))
				return reg
			},
			wantErr: "hypershift_ecr_refresh_failures_total",
		},
		{
			name: "When options are valid, it should register every metric",
			reg:  func() prometheus.Registerer { return prometheus.NewRegistry() },
			opts: []prommetrics.Option{prommetrics.WithBuckets(0.1, 1, 10), prommetrics.WithConstLabels(prometheus.Labels{"component": "ignition-server"})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := tc.reg()
			m, err := prommetrics.New(reg, tc.opts...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Nil(t, m)
				if g, ok := reg.(prometheus.Gatherer); ok {
					// Only the squatter may remain: New undid its registrations.
					require.LessOrEqual(t, countSeries(t, g), 1)
					m2, err := prommetrics.New(prometheus.NewRegistry())
					require.NoError(t, err)
					require.NotNil(t, m2)
				}
				return
			}
			require.NoError(t, err)
			m.CacheHit("aws", "us-east-1")
			m.CacheMiss("aws", "us-east-1")
			m.TokenFetch("aws", "us-east-1", "ok", time.Second)
			m.RefreshFailure("aws", "us-east-1", "throttled")
			m.TokenExpiry("aws", "us-east-1", expiry)
			require.Equal(t, 6, countSeries(t, reg.(prometheus.Gatherer)))
		})
	}

	t.Run("When New is called twice with one registry, it should share the series", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		a, err := prommetrics.New(reg)
		require.NoError(t, err)
		b, err := prommetrics.New(reg)
		require.NoError(t, err)
		a.CacheHit("aws", "us-east-1")
		b.CacheHit("aws", "us-east-1")
		require.Equal(t, `# HELP hypershift_ecr_cache_hits_total ECR credential lookups served from the in-memory token cache.
# TYPE hypershift_ecr_cache_hits_total counter
hypershift_ecr_cache_hits_total{partition="aws",region="us-east-1"} 2
`, gatherText(t, reg, "hypershift_ecr_cache_hits_total"))
	})
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	t.Run("When many goroutines record for many regions, it should count every call", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		m, err := prommetrics.New(reg)
		require.NoError(t, err)
		regions := []string{"us-east-1", "us-east-2", "eu-west-1", "ap-southeast-2", "ca-central-1"}
		const perRegion = 200
		var wg sync.WaitGroup
		for _, r := range regions {
			for range 4 {
				wg.Go(func() {
					for range perRegion / 4 {
						m.CacheHit("aws", r)
						m.CacheMiss("aws", r)
						m.TokenFetch("aws", r, "ok", time.Millisecond)
					}
				})
			}
		}
		wg.Wait()
		want := &strings.Builder{}
		want.WriteString("# HELP hypershift_ecr_cache_hits_total ECR credential lookups served from the in-memory token cache.\n# TYPE hypershift_ecr_cache_hits_total counter\n")
		for _, r := range []string{"ap-southeast-2", "ca-central-1", "eu-west-1", "us-east-1", "us-east-2"} {
			fmt.Fprintf(want, "hypershift_ecr_cache_hits_total{partition=\"aws\",region=%q} %d\n", r, perRegion)
		}
		require.Equal(t, want.String(), gatherText(t, reg, "hypershift_ecr_cache_hits_total"))
	})
}

func TestCacheHitAllocations(t *testing.T) {
	// Not parallel: AllocsPerRun needs a quiet heap.
	t.Run("When the label pair has been seen, it should not allocate", func(t *testing.T) {
		m, err := prommetrics.New(prometheus.NewRegistry())
		require.NoError(t, err)
		m.CacheHit("aws", "us-east-1")
		require.Zero(t, testing.AllocsPerRun(1000, func() { m.CacheHit("aws", "us-east-1") }))
	})
}

// BenchmarkCacheHit measures the warm path. "WithLabelValues" is the
// straightforward implementation, kept as the baseline.
func BenchmarkCacheHit(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		m, err := prommetrics.New(prometheus.NewRegistry())
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			m.CacheHit("aws", "us-east-1")
		}
	})
	b.Run("cached-parallel", func(b *testing.B) {
		m, err := prommetrics.New(prometheus.NewRegistry())
		require.NoError(b, err)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.CacheHit("aws", "us-east-1")
			}
		})
	})
	b.Run("WithLabelValues", func(b *testing.B) {
		vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "baseline_total", Help: "baseline"}, []string{"partition", "region"})
		b.ReportAllocs()
		for b.Loop() {
			vec.WithLabelValues("aws", "us-east-1").Inc()
		}
	})
}

// gatherText renders the named metric families of g in the text
// exposition format. (prometheus/testutil would need a module that go.mod
// does not list; Gather plus expfmt is all its comparison does.)
func gatherText(t testing.TB, g prometheus.Gatherer, names ...string) string {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if len(names) == 0 || slices.Contains(names, mf.GetName()) {
			require.NoError(t, enc.Encode(mf))
		}
	}
	return buf.String()
}

// countSeries counts the series g exposes.
func countSeries(t testing.TB, g prometheus.Gatherer) int {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	n := 0
	for _, mf := range mfs {
		n += len(mf.GetMetric())
	}
	return n
}

func Example() {
	reg := prometheus.NewRegistry()
	m, err := prommetrics.New(reg)
	if err != nil {
		panic(err)
	}
	// Then: registryauth.NewKeychain(..., registryauth.WithMetrics(m)).
	m.CacheHit("aws", "us-east-1")
	m.TokenExpiry("aws", "us-east-1", time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))

	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			v := s.GetCounter().GetValue() + s.GetGauge().GetValue()
			fmt.Printf("%s %.0f\n", mf.GetName(), v)
		}
	}
	// Output:
	// hypershift_ecr_cache_hits_total 1
	// hypershift_ecr_token_expiry_timestamp_seconds 1767268800
}
