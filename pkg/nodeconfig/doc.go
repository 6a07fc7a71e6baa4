// Package nodeconfig renders the worker-node configuration that lets nodes
// pull from Amazon ECR mirrors with their instance role alone: no ECR token
// in any pull secret, MachineConfig or ignition payload.
//
// # Why the kubelet is not enough
//
// OpenShift runs the kubelet with the ecr-credential-provider plugin, but
// the kubelet matches the image written in the pod spec. An image that
// reaches ECR through an ImageDigestMirrorSet is written "quay.io/...", so
// the kubelet never asks the plugin, and CRI-O (containers/image) looks
// mirror credentials up by the mirror's own host. containers/image does so
// in pkg/docker/config/config.go (getCredentialsWithHomeDir): for each
// registry host it contacts, mirrors included, it asks the
// "credential-helpers" of registries.conf in order and stops at the first
// credential. The pseudo-helper "containers-auth.json" reads the auth files
// (on a node, the pull secret at /var/lib/kubelet/config.json); inside a file
// a "credHelpers" entry for the host comes first, then "auths" entries for
// the repository, its namespaces and the host (findCredentialsInFile). A
// registries.conf drop-in may set the list (pkg/sysregistriesv2: a drop-in's
// list replaces the earlier one whole).
//
// # What Render writes
//
// Render produces three files and wraps them in a MachineConfig (role
// worker, Ignition 3.2.0, contents as base64 data URLs) inside a ConfigMap
// under the key "config", ready for NodePool.spec.config:
//
//   - /etc/containers/registries.conf.d/99-<helper>.conf sets
//     credential-helpers = ["containers-auth.json", "<helper>"]: the pull
//     secret still serves every registry it has an entry for, and the
//     helper is asked only about the others.
//   - /usr/local/bin/docker-credential-<helper>, a bash script. For "get"
//     it reads the server URL on stdin and, for an ECR host or a declared
//     alias only, sends a CredentialProviderRequest for that host to the
//     RHCOS plugin (/usr/libexec/kubelet-image-credential-provider-plugins/
//     ecr-credential-provider) with the arguments and environment the
//     kubelet gives it, reads the CredentialProviderResponse with awk (no
//     jq on RHCOS), and prints {"ServerURL","Username","Secret"}. Answers
//     are cached under /run/<helper> (0700, files 0600) for the response's
//     cacheDuration, at most Options.CacheDuration. Anything else (another
//     host, a plugin failure, a malformed answer) prints "credentials not
//     found in native keychain" and exits 1, with no credential anywhere;
//     "store" is refused, "erase" and "list" answer harmlessly.
//   - /etc/kubernetes/credential-providers/ecr-credential-provider.yaml, the
//     kubelet's CredentialProviderConfig with every glob of
//     ecrhost.MatchImages (the stock OpenShift list lacks dual-stack, EU
//     sovereign cloud and most ISO forms) and the alias hosts.
//
// The helper's host test is generated from ecrhost.MatchImages, each '*'
// narrowed (a 12-digit account, one DNS label for the region), and its
// alias table from ecrhost.Parser, so the helper, the kubelet config and
// the Go code cannot disagree on what is ECR. For an alias the plugin is
// asked about the ECR host behind it, since the plugin takes the region
// from the host.
//
// # Guards
//
// Render refuses, with *MirrorError values matching ErrNotECRMirror, a
// policy with a mirror host that is neither ECR nor a declared alias: nodes
// would pull from it without credentials. It warns (Rendered.Warnings) when
// the pull secret has an auths or credHelpers entry for an ECR host, since
// the auth file comes before the helper and a stale token there wins.
//
// A helper listed in credential-helpers that cannot be run is an error for
// containers/image, not a "not found": it collects the error, goes on with
// the next helper, and fails the lookup when no helper had credentials, so
// every registry without an auth-file entry would fail. The configuration
// avoids that by shipping the helper in the same MachineConfig as the
// drop-in, in a directory on systemd's default PATH, and by refusing a host
// that is not ECR with bash builtins alone (no awk, no coreutils needed).
//
// # Determinism and secrets
//
// The output depends on Options only, never on the order of policy rules,
// aliases or plugin environment, so a NodePool's config hash changes once,
// when the configuration is first added, and never when tokens rotate. The
// pull secret is read for the warnings only; no part of it is rendered, and
// a warning names hosts and keys, never a credential.
package nodeconfig
