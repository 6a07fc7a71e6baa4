// Package releaseinfo resolves OpenShift release images to the registry that
// really holds them, under an image mirror policy, and gives HyperShift the
// seams to read them there with in-memory Amazon ECR credentials.
//
// A release such as quay.io/openshift-release-dev/ocp-release@sha256:… is
// mirrored into a regional ECR repository by `oc adm release mirror`, and
// mirrors lag: a release may be on quay.io before it is in ECR. This
// package asks the mirror before using it, falls back only where the policy
// allows, and says why when nothing qualifies. It does not depend on
// ROSA's zero-egress mode, and it never puts an ECR token in a pull secret
// object.
//
// # Resolver
//
// Resolver.Resolve takes the candidates of a mirrorpolicy.Policy for an
// image (mirrors in policy order, then the image's own reference unless the
// policy says NeverContactSource) and returns the first one whose manifest
// a Prober confirms, usually with an authenticated manifest HEAD
// (ggcrprobe). The Resolution's Pullspec is always digest-pinned: a tag
// resolved on a tag mirror comes back as <mirror repository>@sha256:…, so
// what is read later is what was checked. Skipped says why each earlier
// candidate was passed over; String and Explain render it for logs and
// CLIs. When no candidate qualifies, the error is a *NotMirroredError
// (errors.Is(err, ErrNotMirrored)) naming the mirrors, their answers, and
// the source's answer or the fact that the policy forbids contacting it.
//
// A Prober answers with a digest, ErrManifestUnknown (404, MANIFEST_UNKNOWN,
// NAME_UNKNOWN), ErrUnauthorized (401, 403; on ECR this also means "no such
// repository, or not readable by this identity") or any other error, which
// means the candidate could not be checked. Resolve skips a candidate in
// all three failure cases: it answers "where is the image provably
// available". A mirror that is down therefore lets the lookup proceed to
// the source when, and only when, the policy allows the source.
//
// # Caching
//
// Probe results are cached per candidate reference: a confirmed manifest
// for 5 minutes (WithPositiveTTL), a definite absence for 1 minute
// (WithNegativeTTL; how long a newly mirrored release can go unnoticed),
// and any other failure for 10 seconds only (WithTransientTTL), so that a
// blip neither hides a mirror for long nor costs a timeout on every lookup.
// A cache entry is keyed by reference only: a Resolver's prober carries one
// identity, so use one Resolver per identity. Concurrent probes of the same
// reference are collapsed into one; it runs on a context detached from the
// callers' (bounded by WithProbeTimeout, 30 seconds), so a caller that gives
// up does not fail the probe for the others. A prober that panics yields an
// error, not a crash.
//
// # HyperShift seams
//
// Decorator wraps any HyperShift lookup shaped like
// Lookup(ctx, image, pullSecret) (T, error): releaseinfo.Provider's Lookup,
// or an ImageMetadataProvider method as a method value. It resolves the
// image, adds ECR credentials for every ECR registry among the candidates
// to the pull secret in memory (one Augment call on a
// registryauth.Keychain), calls the delegate with the chosen pullspec, and
// moves on to the next allowed candidate when the delegate answers "not
// found" or "unauthorized" (DefaultRetryable recognises HyperShift's
// registry client errors from their text). Any other delegate error is
// returned as it is: the candidate was confirmed, so the failure is real,
// and retrying elsewhere would only hide it. An image no mirror rule
// applies to is passed straight through (with the augmented pull secret),
// so wrapping changes nothing for it. Without a Resolver the Decorator does
// not probe and lets the delegate try each candidate in turn.
//
// EffectivePullSecret is HyperShift's ignition rule as code: augmented
// bytes (Effective) for registry access only, the original bytes
// (Original) for the ignition server's hash gate and for MCO bootstrap, so
// that the pull-secret hash stays stable across 12-hour token rotations and
// no token reaches a payload or a node.
//
// # Differences from HyperShift
//
// HyperShift's ProviderWithOpenShiftImageRegistryOverridesDecorator matches
// sources by substring, walks a map in random order, tries every mirror
// with the same pull secret, falls back to the source on any error, always
// contacts the source, and serialises every lookup behind one mutex. The
// Decorator deliberately differs: candidates come from mirrorpolicy
// (path-boundary matching, most specific source, policy order, tag and
// digest mirrors kept apart, NeverContactSource honoured, mirror paths kept
// whole); each candidate is checked with a cheap HEAD before the expensive
// lookup; only "not found" and "unauthorized" move on to the next
// candidate, so a transient failure of a confirmed mirror is reported
// instead of silently pulling from quay.io; ECR credentials are added per
// call and never stored; lookups run concurrently. Unlike HyperShift's
// mirror-availability cache, the cache here is not keyed by the pull
// secret: probes use the Resolver's own prober credentials, not the
// caller's pull secret.
//
// This package imports neither go-containerregistry, docker/distribution
// nor HyperShift; ggcrprobe holds the go-containerregistry prober.
package releaseinfo
