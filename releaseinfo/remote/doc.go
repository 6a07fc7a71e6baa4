// Package remote reads the metadata of an OpenShift release image straight
// from its registry, the way HyperShift's RegistryClientProvider does, with
// go-containerregistry instead of docker/distribution.
//
// # What is read
//
// A release image carries two files that HyperShift needs before it can
// reconcile a hosted cluster:
//
//   - release-manifests/image-references (ImageReferencesPath): an
//     image.openshift.io/v1 ImageStream in JSON, one tag per component image;
//   - release-manifests/0000_50_installer_coreos-bootimages.yaml
//     (BootImagesPath): a ConfigMap whose data.stream holds the CoreOS stream
//     JSON of the boot images and, from OpenShift 5.0, whose data.streams
//     holds one stream per OS stream name ("rhel-9", "rhel-10").
//
// Reader.Lookup fetches the image's manifest (for a manifest list, the list,
// then the image of the Reader's platform, linux/amd64 by default), then
// streams its layers last to first through a decompressor (gzip, zstd or none)
// and a tar reader, keeping those two regular files. It returns them parsed
// in a Release, with the digest-pinned pullspec it read (the list's digest
// for a manifest list, as HyperShift pins releases), the component pullspecs
// and what the lookup cost (ReadStats).
//
// # Why last to first, and why stop early
//
// Layers stack: a file in an upper layer replaces a copy below, so the last
// layer holding a file has its current version. Release images put both files
// in their last layer, on top of an OS and a cluster-version-operator binary
// hundreds of MiB large. The reader stops as soon as both files are found:
// lower layers are never requested and the current layer's body is closed
// without reading the rest. A typical lookup therefore costs the /v2/ ping,
// the manifest(s) and one layer (ReadStats says exactly). A layer read to its
// end is verified against its digest; a layer abandoned half way is not (as in
// HyperShift), the manifest always is when the pullspec is a digest.
//
// Limits protect the reader from broken or hostile images: a release file
// larger than MaxFileSize is refused before it is read, and one lookup
// decompresses at most MaxScanSize bytes. Both fail with ErrLimitExceeded.
//
// # Redirects and Authorization
//
// Amazon ECR (and most registries in front of object storage) answers a blob
// GET with a redirect to a pre-signed URL on another host. That request must
// not carry the registry's Authorization header: S3 refuses a request with two
// authentication mechanisms (400 InvalidArgument), and forwarding the header
// would hand a registry token to another host. go-containerregistry's
// authenticating transport adds the header only for the registry's own host,
// so the redirected request goes out without it; a custom transport given with
// WithTransport must not add it back (when it does, the lookup fails with the
// blob host's 400 and an Error whose Hint says so). Errors never hold
// credentials, and the query of a pre-signed URL is redacted from them.
//
// # Credentials, mirrors and components
//
// Lookup authenticates with the keychain of WithKeychain (anonymous by
// default); put ggcrauth.NewKeychain first in an authn.NewMultiKeychain to get
// fresh, in-memory ECR tokens. A registry may reject a token the keychain
// still holds as valid (revoked early): with WithCredentialRefresher (the
// *registryauth.Keychain), Lookup then forgets it, fetches one new token and
// retries once; a second rejection fails with ErrCredentialsRejected. A
// layer download cut mid-stream is not resumed: the lookup fails with the
// cause (io.ErrUnexpectedEOF) and the caller retries it whole, which for a
// few MiB costs less than a resumed, re-verified stream.
//
// LookupWithPullSecret has the shape of HyperShift's Provider.Lookup(ctx,
// image, pullSecret) and takes credentials from dockerconfigjson bytes
// instead, matched like HyperShift's keyring (host, host:port, host/path
// prefix, "*" globs over one DNS label). It never retries a rejected
// credential: releaseinfo's Decorator refreshes the bytes it passes.
//
// WithResolver turns the requested image into the pullspec to read (an ECR
// mirror of a quay.io release, say); Release.Pullspec names what was read.
// WithComponentPolicy rewrites Release.ComponentImages to the first candidate
// of a mirrorpolicy.Policy, such as the rules mirrorpolicy.ECRReleaseMirror
// returns for an `oc adm release mirror` repository. The ImageStream is
// returned unmodified.
//
// # HyperShift parity
//
// Same files, same last-to-first order, same stop condition, regular files
// only (symbolic links and whiteouts are not followed), the first copy met
// wins, the same ConfigMap rules (data.stream optional only when data.streams
// is present, no fallback between them). Differences: a null entry in
// data.streams is an error here; a leading "./" in tar names is accepted;
// size limits; typed errors that do not append the file contents.
//
// Every failure is an *Error naming the step, the image and the pullspec;
// errors.Is matches ErrReleaseMetadataMissing, ErrInvalidReleaseMetadata,
// ErrLimitExceeded and ErrPlatformNotFound, and errors.As finds the registry's
// *transport.Error with its status code.
package remote
