// Package registryauth gives HyperShift Amazon ECR registry credentials at
// the moment it talks to a registry, fetched with its own IAM identity and
// held in memory only, so that no 12-hour ECR token is ever written into a
// pull secret, a Kubernetes object or an ignition payload.
//
// # Keychain
//
// A Keychain calls ecr:GetAuthorizationToken through a small interface
// (ECRAPI, built per registry by a ClientFactory: real clients come from an
// aws.Config via WithAWSConfig, fakes from testing/fakeecr via
// WithClientFactory). A token is valid for every registry of its region
// that the principal may read, so the cache key is identity x partition x
// region x API endpoint variant: one call per region serves every account
// in it. The key never contains an access key id, which rotates with
// temporary credentials while the principal does not.
//
// A warm lookup parses the host and reads one map: no lock, no allocation,
// no network. At half a token's life (jittered, WithRefreshFraction) a
// background refresh starts; callers keep getting the cached token without
// waiting. Concurrent misses for a key share one fetch. Fetches run on the
// keychain's own context with their own timeout (WithFetchTimeout): a
// caller whose context ends returns at once while the fetch completes and
// fills the cache for the others. When a refresh fails, the old token is
// served only until WithExpiryMargin before its expiry; an expired token is
// never returned. After a failure ECR is not called again for that key
// before an exponential, jittered backoff (WithBackoff) has elapsed;
// callers in between get the last error at once.
//
// The API endpoint follows the registry host: FIPS for -fips hosts only,
// dual-stack for dkr-ecr hosts, and a custom endpoint (AWS_ENDPOINT_URL_ECR,
// an interface VPC endpoint, WithEndpoint) always wins. A registry may be
// served by an assumed role (WithRegistryRole).
//
// # Errors
//
// Every failure matches one sentinel with errors.Is: ErrNotECR (not mine:
// callers move on to other credentials), ErrPublicRegistry, ErrAccessDenied,
// ErrThrottled, ErrNoAWSCredentials, ErrEndpointUnreachable (its hint names
// the VPC endpoints needed), ErrInvalidToken, ErrTokenFetch, ErrClosed.
// *TokenError carries registry, region, endpoint and hint. No error, log
// line or metric label ever contains a token.
//
// # Pull secrets
//
// Augment turns a dockerconfigjson pull secret into a new one with fresh
// entries for the ECR hosts a call may contact. Use the result for registry
// access only. HyperShift's ignition server must keep hashing, and handing
// to the MCO bootstrap, the original bytes.
//
// Registry clients are adapted in subpackages, so that this package imports
// none: distributionauth (docker/distribution's CredentialStore, which
// HyperShift's registry client uses), ggcrauth (go-containerregistry's
// authn.Keychain) and prommetrics (Prometheus metrics).
package registryauth
