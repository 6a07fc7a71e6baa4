// Package prommetrics records the ECR keychain's metrics to Prometheus: New
// returns a registryauth.Metrics to pass to registryauth.WithMetrics.
//
// Every series is labelled with the registry's partition and region only,
// never with an account id, a host or anything secret, so cardinality stays
// at the number of regions in use. Counters count cache hits and misses,
// GetAuthorizationToken calls by outcome ("ok" or an error kind such as
// "access_denied", "throttled", "endpoint_unreachable") and failed
// background refreshes; a histogram times the calls; a gauge holds each
// region's token expiry as a Unix timestamp, so that time to expiry is
// hypershift_ecr_token_expiry_timestamp_seconds - time() in PromQL and an
// alert can fire before a region runs out of valid tokens.
//
// CacheHit runs on every warm credential lookup. Its child counters are
// memoised per (partition, region) in a copy-on-write map read through an
// atomic pointer, so after the first hit for a region it takes no lock and
// allocates nothing; the other methods are rare and use WithLabelValues.
//
// New registers with the given Registerer (for HyperShift, controller-
// runtime's metrics.Registry). Calling it again with the same registry
// reuses the registered collectors instead of failing, so several keychains
// in one process share the series; WithConstLabels tells them apart when
// needed.
package prommetrics
