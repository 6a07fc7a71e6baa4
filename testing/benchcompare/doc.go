// Package benchcompare measures hypershift-ecr side by side with the tools it
// replaces, in one process and against the same in-process fakes, so that the
// numbers in docs/performance.md are ratios taken under the same load.
//
// It is a nested module so that its anchors (amazon-ecr-credential-helper's
// ecr-login, with its own AWS SDK modules) never enter the main go.mod.
// Everything is in its tests:
//
//   - BenchmarkWarmLookup: Keychain.Credential against ecr-login's
//     ECRHelper.Get with its file cache, ecr-login's API client reused,
//     and one SDK GetAuthorizationToken call per lookup (no cache);
//   - BenchmarkColdFanIn: 1,000 concurrent callers over 50 accounts in 3
//     regions, fresh caches, counting GetAuthorizationToken calls;
//   - BenchmarkReleaseLookup: releaseinfo/remote's reader against a naive
//     read of every layer, on an ECR-like registry;
//   - BenchmarkMirrorCandidates: mirrorpolicy over 10 to 10,000 rules.
//
// TestClaims asserts the claims of docs/performance.md with margins robust
// to a noisy machine. `make bench-compare` runs the benchmarks and then
// `go test -args -summary=FILE`, which turns their output into the table of
// medians kept in docs/performance.md.
package benchcompare
