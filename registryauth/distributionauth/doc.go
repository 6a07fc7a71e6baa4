// Package distributionauth plugs a registryauth.CredentialSource (the
// process's ECR keychain) into clients built on docker/distribution v2.8.3,
// such as HyperShift's release and image metadata lookups.
//
// Those clients take credentials from an auth.CredentialStore whose Basic
// method has neither a context nor an error result. CredentialStore wraps
// the store HyperShift already builds from the pull secret (the delegate):
// for an Amazon ECR host it answers with a fresh token from the source, so
// the pull secret needs no ECR entry; for every other host, and for ECR
// Public, it returns the delegate's answer unchanged. Refresh tokens (used
// by bearer-token registries, never by ECR) always go to the delegate.
//
// Each Basic lookup runs on its own context bounded by WithTimeout (10s by
// default). The keychain serves warm lookups from memory, so the bound
// matters only on a cold cache, when Basic waits for one GetAuthorizationToken
// call shared with every concurrent caller.
//
// When the source fails for an ECR host, Basic answers anonymously (""
// and ""): the registry then rejects the request with 401, the same outcome
// as a missing pull-secret entry, and never access with a stale token. The
// cause is not lost: it is logged through the logger given with WithLogger
// and Err returns it, so the caller can report "access denied to
// ecr:GetAuthorizationToken" instead of a bare 401. Neither the log nor the
// error holds a credential.
package distributionauth
