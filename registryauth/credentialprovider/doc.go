// Package credentialprovider speaks the kubelet's image credential provider
// protocol (KEP-2133, credentialprovider.kubelet.k8s.io/v1) both ways: as
// the kubelet, to take credentials from any plugin binary, and as a plugin,
// to hand the kubelet tokens from a registryauth.Keychain.
//
// # Running a plugin
//
// A PluginSource is a registryauth.CredentialSource backed by a plugin
// binary such as ecr-credential-provider. It behaves like the kubelet: it
// runs the plugin only for images matching its matchImages globs (by
// default ecrhost.MatchImages(), every ECR host form; each '*' is one DNS
// label, a path is a prefix), writes the CredentialProviderRequest on the
// plugin's stdin with the configured args and env on top of the inherited
// environment, kills it after a timeout (one minute by default, as the
// kubelet), and decodes the response strictly with ParseResponse. Images
// that match no glob, and answers without an auth key matching the image,
// give errors matching registryauth.ErrNotECR: "not mine", so callers move
// on to other credentials.
//
// Answers are cached in memory under the key their cacheKeyType names:
// the image, its registry, or one global entry, looked up in that order.
// A response's cacheDuration sets the entry's life; a response without one
// gets the default (WithDefaultCacheDuration, five minutes), and an
// explicit zero is not cached, as in the kubelet. Concurrent calls for one
// image share one run, which completes and fills the cache even when every
// caller has given up. Failures are never cached.
//
// A plugin's stdout is its answer, and the answer holds passwords: it never
// reaches an error or a log line. Failures are *PluginError values, whose
// Kind is ErrPluginFailed (with the exit code), ErrPluginTimeout or
// ErrMalformedResponse, and whose Stderr is the plugin's stderr after every
// known password and anything shaped like a secret has been redacted,
// truncated to 1 KiB.
//
// # Being a plugin
//
// Serve answers one request read from stdin with a credential from any
// registryauth.CredentialSource, normally a Keychain, so a plugin binary's
// main is a few lines. Its answer is what ecr-credential-provider answers:
// cacheKeyType Registry, the registry host as the auth key, and a
// cacheDuration of half the token's remaining life, so the kubelet never
// holds a token near its expiry. An image that is not ECR gets a valid,
// empty answer, and the kubelet falls back to its other credentials; any
// other failure is returned for the binary to print on stderr before it
// exits non-zero, which the kubelet logs.
//
// Service account tokens (tokenAttributes) are not supported either way.
package credentialprovider
