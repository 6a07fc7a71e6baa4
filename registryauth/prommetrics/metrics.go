package prommetrics

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openshift/hypershift-ecr/registryauth"
)

// DefaultBuckets are the token fetch duration buckets in seconds: a
// regional call takes tens of milliseconds, a cold credential chain (IMDS,
// web identity) or a slow VPC endpoint seconds, and fetches time out at 10s
// to 30s.
var DefaultBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Option configures New.
type Option func(*options) error

type options struct {
	buckets     []float64
	constLabels prometheus.Labels
}

// WithBuckets sets the buckets of the fetch duration histogram, in
// seconds, strictly increasing. The default is DefaultBuckets.
func WithBuckets(buckets ...float64) Option {
	return func(o *options) error {
		if len(buckets) == 0 {
			return errors.New("WithBuckets: no buckets")
		}
		for i := 1; i < len(buckets); i++ {
			if buckets[i] <= buckets[i-1] {
				return fmt.Errorf("WithBuckets: buckets must be strictly increasing, got %v", buckets)
			}
		}
		o.buckets = append([]float64(nil), buckets...)
		return nil
	}
}

// WithConstLabels adds labels with fixed values to every metric, e.g. the
// component name when several keychains share a registry. The default is
// none.
func WithConstLabels(labels prometheus.Labels) Option {
	return func(o *options) error {
		o.constLabels = maps.Clone(labels)
		return nil
	}
}

// Metrics is a registryauth.Metrics that records to Prometheus. It is safe
// for concurrent use. Make one with New.
type Metrics struct {
	hits, misses    counterCache
	fetches         *prometheus.CounterVec
	duration        *prometheus.HistogramVec
	refreshFailures *prometheus.CounterVec
	expiry          *prometheus.GaugeVec
}

var _ registryauth.Metrics = (*Metrics)(nil)

// New creates the keychain's metrics and registers them with reg:
//
//	hypershift_ecr_cache_hits_total{partition,region}
//	hypershift_ecr_cache_misses_total{partition,region}
//	hypershift_ecr_token_fetches_total{partition,region,outcome}
//	hypershift_ecr_token_fetch_duration_seconds{partition,region} (histogram)
//	hypershift_ecr_refresh_failures_total{partition,region,outcome}
//	hypershift_ecr_token_expiry_timestamp_seconds{partition,region} (gauge)
//
// A collector that reg already holds with the same description is reused,
// so calling New twice with one registry works and shares the series. If a
// registration fails otherwise, the collectors New registered are removed
// again and the error is returned.
func New(reg prometheus.Registerer, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("prommetrics: nil Registerer")
	}
	o := options{buckets: DefaultBuckets}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("prommetrics: %w", err)
		}
	}

	pr := []string{"partition", "region"}
	pro := []string{"partition", "region", "outcome"}
	m := &Metrics{}
	r := registrar{reg: reg}
	m.hits.vec = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "hypershift_ecr_cache_hits_total",
		Help:        "ECR credential lookups served from the in-memory token cache.",
		ConstLabels: o.constLabels,
	}, pr))
	m.misses.vec = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "hypershift_ecr_cache_misses_total",
		Help:        "ECR credential lookups that had to wait for a GetAuthorizationToken call.",
		ConstLabels: o.constLabels,
	}, pr))
	m.fetches = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "hypershift_ecr_token_fetches_total",
		Help:        "ecr:GetAuthorizationToken calls by outcome (ok, access_denied, throttled, no_credentials, endpoint_unreachable, invalid_token, error).",
		ConstLabels: o.constLabels,
	}, pro))
	m.duration = register(&r, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "hypershift_ecr_token_fetch_duration_seconds",
		Help:        "Duration of ecr:GetAuthorizationToken calls, whatever their outcome.",
		Buckets:     o.buckets,
		ConstLabels: o.constLabels,
	}, pr))
	m.refreshFailures = register(&r, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "hypershift_ecr_refresh_failures_total",
		Help:        "Background token refreshes that failed while the previous token was still served, by outcome.",
		ConstLabels: o.constLabels,
	}, pro))
	m.expiry = register(&r, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hypershift_ecr_token_expiry_timestamp_seconds",
		Help: "Unix time in seconds at which the cached ECR token of the region expires. " +
			"Time to expiry is hypershift_ecr_token_expiry_timestamp_seconds - time().",
		ConstLabels: o.constLabels,
	}, pr))
	if r.err != nil {
		r.undo()
		return nil, fmt.Errorf("prommetrics: %w", r.err)
	}
	return m, nil
}

// CacheHit counts a lookup served from memory. It does not allocate once
// the (partition, region) pair has been seen.
func (m *Metrics) CacheHit(partition, region string) { m.hits.get(partition, region).Inc() }

// CacheMiss counts a lookup that waited for a fetch.
func (m *Metrics) CacheMiss(partition, region string) { m.misses.get(partition, region).Inc() }

// TokenFetch records one GetAuthorizationToken call.
func (m *Metrics) TokenFetch(partition, region, outcome string, d time.Duration) {
	m.fetches.WithLabelValues(partition, region, outcome).Inc()
	m.duration.WithLabelValues(partition, region).Observe(d.Seconds())
}

// RefreshFailure counts a failed background refresh.
func (m *Metrics) RefreshFailure(partition, region, outcome string) {
	m.refreshFailures.WithLabelValues(partition, region, outcome).Inc()
}

// TokenExpiry sets the region's expiry timestamp.
func (m *Metrics) TokenExpiry(partition, region string, expiresAt time.Time) {
	m.expiry.WithLabelValues(partition, region).Set(float64(expiresAt.UnixMilli()) / 1e3)
}

// labelPair keys the child counters. A struct of strings is a map key that
// needs no allocation to look up, unlike a concatenated string or an any.
type labelPair struct{ partition, region string }

// counterCache memoises a CounterVec's children for the warm path. Reads
// load an immutable map through an atomic pointer: no lock, no allocation.
// A new pair (a handful per process: one per region in use) copies the map
// under mu.
type counterCache struct {
	vec *prometheus.CounterVec
	m   atomic.Pointer[map[labelPair]prometheus.Counter]
	mu  sync.Mutex
}

func (c *counterCache) get(partition, region string) prometheus.Counter {
	if m := c.m.Load(); m != nil {
		if ctr, ok := (*m)[labelPair{partition, region}]; ok {
			return ctr
		}
	}
	return c.add(partition, region)
}

func (c *counterCache) add(partition, region string) prometheus.Counter {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := labelPair{partition, region}
	old := c.m.Load()
	if old != nil {
		if ctr, ok := (*old)[key]; ok {
			return ctr
		}
	}
	ctr := c.vec.WithLabelValues(partition, region)
	next := make(map[labelPair]prometheus.Counter, 1)
	if old != nil {
		next = maps.Clone(*old)
	}
	next[key] = ctr
	c.m.Store(&next)
	return ctr
}

// registrar registers collectors, remembering the first error and what it
// registered so that a failed New leaves reg as it found it.
type registrar struct {
	reg   prometheus.Registerer
	added []prometheus.Collector
	err   error
}

func register[C prometheus.Collector](r *registrar, c C) C {
	if r.err != nil {
		return c
	}
	err := r.reg.Register(c)
	if err == nil {
		r.added = append(r.added, c)
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	r.err = err
	return c
}

func (r *registrar) undo() {
	for _, c := range r.added {
		r.reg.Unregister(c)
	}
}
