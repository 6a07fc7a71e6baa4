// Package ggcrprobe is the default releaseinfo.Prober: a manifest HEAD with
// go-containerregistry's remote.Head, authenticated through an
// authn.Keychain.
//
// For Amazon ECR mirrors pass a keychain built from the process's
// registryauth.Keychain with ggcrauth.NewKeychain, alone or first in an
// authn.NewMultiKeychain: a token is fetched in memory when the registry
// asks for credentials, and a failure to get one is returned (wrapped, so
// errors.Is with registryauth's sentinels works) rather than turned into an
// anonymous request. quay.io's release repositories are public, so an
// anonymous answer for them is enough.
//
// Registry answers are mapped to releaseinfo's sentinels: 404 and the
// MANIFEST_UNKNOWN and NAME_UNKNOWN codes to releaseinfo.ErrManifestUnknown;
// 401, 403, UNAUTHORIZED and DENIED to releaseinfo.ErrUnauthorized (ECR
// answers 403 for a repository that does not exist or that the identity
// may not read). Every other failure (network, 5xx after ggcr's retries,
// 429, credentials) is returned as it is and counts as "could not check".
// A HEAD response has no body, so the status code usually decides.
//
// By default the probe checks the reference's own manifest. WithPlatform
// adds, for a manifest list, a check that the list has an image for that
// platform and that the registry holds it, for mirrors filtered by
// architecture. WithTransport sets the HTTP transport (tests pass
// testing/fakeregistry.Transport); WithRemoteOptions passes anything else
// to ggcr, such as a shorter retry backoff.
package ggcrprobe
