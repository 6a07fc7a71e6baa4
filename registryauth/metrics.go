package registryauth

import "time"

// Metrics receives the keychain's counters. Implementations must be safe
// for concurrent use and cheap: CacheHit is on the warm path. Labels are the
// partition and region only, never an account id or a secret. The
// registryauth/prommetrics package adapts it to Prometheus.
type Metrics interface {
	// CacheHit counts a lookup served from memory.
	CacheHit(partition, region string)
	// CacheMiss counts a lookup that had to wait for a token fetch.
	CacheMiss(partition, region string)
	// TokenFetch records one GetAuthorizationToken call, its duration and
	// its outcome: "ok" or the error kind ("access_denied", "throttled",
	// "no_credentials", "endpoint_unreachable", "invalid_token", "error").
	TokenFetch(partition, region, outcome string, d time.Duration)
	// RefreshFailure counts a background refresh that failed while an older
	// token was still served.
	RefreshFailure(partition, region, outcome string)
	// TokenExpiry reports the expiry of the token now cached for the region.
	TokenExpiry(partition, region string, expiresAt time.Time)
}

type noopMetrics struct{}

func (noopMetrics) CacheHit(string, string)                          {}
func (noopMetrics) CacheMiss(string, string)                         {}
func (noopMetrics) TokenFetch(string, string, string, time.Duration) {}
func (noopMetrics) RefreshFailure(string, string, string)            {}
func (noopMetrics) TokenExpiry(string, string, time.Time)            {}
