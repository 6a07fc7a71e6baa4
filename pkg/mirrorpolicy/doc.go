// Package mirrorpolicy decides where to pull an image from under OpenShift
// image mirror configuration, with the semantics of an OpenShift node.
//
// On a node the machine-config operator turns ImageDigestMirrorSets,
// ImageTagMirrorSets and ImageContentSourcePolicies into registries.conf
// with openshift/runtime-utils pkg/registries (EditRegistriesConfig,
// mergedMirrorSets, topo.go), and CRI-O picks pull sources with
// containers/image pkg/sysregistriesv2 (FindRegistry, refMatchingPrefix,
// PullSourcesFromReference, rewriteReference) and docker/docker_client.go
// (the "blocked" check). This package reproduces that pipeline without
// files: build Rules (from API objects with the From* builders, from
// HyperShift's override map, or for ECR with ECRPullThroughCache and
// ECRReleaseMirror), call New, then ask Candidates for each image.
//
// # Matching
//
// Image references are normalised like CRI-O: "busybox" is
// docker.io/library/busybox:latest, a bare name gets ":latest", and
// "name:tag@digest" is a digest reference whose tag is dropped
// (reference.ParseDockerRef, cri-o/cri-o#3060). Sources are matched as
// written against the normalised name, case-sensitively, at a registry,
// namespace or repository boundary: quay.io/openshift-release-dev matches
// quay.io/openshift-release-dev/ocp-release but not
// quay.io/openshift-release-dev-evil/x. So docker.io, docker.io/library
// and docker.io/library/busybox match "busybox", while a source written
// docker.io/busybox, index.docker.io or registry-1.docker.io matches
// nothing, exactly as on a node.
//
// The most specific (longest) source wins and shadows broader ones
// entirely: an image under quay.io/org/repo gets only that source's
// mirrors, never those configured for quay.io/org, even when the specific
// source has no mirror for this kind of reference. A wildcard source
// "*.example.com" matches hosts under example.com (with any port), not
// example.com itself, and loses to any exact source on the same host; the
// longest wildcard wins among wildcards.
//
// # Mirrors
//
// A mirror's pullspec is the mirror location plus the rest of the
// reference after the matched source: source quay.io/openshift-release-dev
// with mirror 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4 turns
// quay.io/openshift-release-dev/ocp-release@sha256:… into
// 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/ocp-release@sha256:….
// For a wildcard the rest starts after the host, so its subdomain is
// dropped and any port is carried over, as on a node. Tags and digests are
// kept. DigestMirrors rules serve digest references only, TagMirrors tag
// references only, AllMirrors both.
//
// Rules with the same source merge like runtime-utils' mergedMirrorSets:
// a topological merge that keeps each rule's relative order ("b, c" and
// "a, b" give "a, b, c"), breaking ties and cycles lexically, so the
// result does not depend on rule order. Digest and tag sides merge
// separately; an AllMirrors rule joins both. NeverContactSource on any
// rule for a source blocks that source for digest and tag references
// alike (it is the registry entry that is blocked). A node checks
// "blocked" for every pull source, so a mirror whose rewritten pullspec
// falls under a blocked source is left out too.
//
// # Validation
//
// New rejects, as a *RuleError naming origin, source and reason: sources
// or mirrors with a tag, digest, URL scheme or trailing "/"; wildcards
// other than a leading "*." on a source host (never in mirrors, never with
// a port or path); locations that are not canonical host[:port][/path]
// names (a bare first component such as "registry/ns" is a Docker Hub
// namespace, never a host); rules with no mirrors, with a mirror listed
// twice, or whose mirrors only repeat the source; unknown Kinds. The API
// builders instead skip entries with no real mirror, as runtime-utils
// does. A mirror that cannot hold a particular image (a bare host mirror
// for an image that is the source repository itself, or a name over 255
// characters) fails that image's Candidates with a *RuleError: on a node
// sysregistriesv2's rewriteReference fails that pull too.
//
// # Differences from the node
//
// Deliberate, and small: candidates are de-duplicated (a source listed
// among its own mirrors is tried once, where a node tries it again last);
// a source host without a port does not match the same host with a port
// (sysregistriesv2 matches "example.com" against "example.com:5000" and
// documents that as unintended); an exact source beats a wildcard even
// when the wildcard string is as long (a node compares string lengths, so
// "*.example.com" can beat "a.example.com").
//
// # Differences from HyperShift
//
// HyperShift's ProviderWithOpenShiftImageRegistryOverridesDecorator and
// its per-image override resolve mirrors differently from the nodes; this
// package does not copy them: it matches at path boundaries, not by
// substring; picks the most specific source instead of iterating a map in
// random order; keeps each set's mirror order instead of sorting mirrors
// alphabetically; keeps the whole mirror path (HyperShift drops the
// mirror's first path segment, so an ECR pull-through prefix
// ".../quay/openshift-release-dev" loses "quay/"); reads ImageTagMirrorSet
// and mirrorSourcePolicy; and does not apply digest mirrors to tag pulls
// (see FromOverrides).
package mirrorpolicy
