// Package dockerconfig reads, edits and writes pull secrets: the JSON that
// HyperShift passes as pullSecret []byte to every registry call, and that
// Kubernetes stores in secrets of type kubernetes.io/dockerconfigjson.
//
// # Formats
//
// Parse accepts the dockerconfigjson form,
//
//	{"auths": {"quay.io": {"auth": "<base64 of user:password>", "email": "..."}}, "credHelpers": {...}}
//
// and the legacy .dockercfg form of kubernetes.io/dockercfg secrets, a map
// of registry to entry without the "auths" wrapper. A document without
// "auths" is read as legacy when it is not empty and every top-level key
// looks like a registry (contains '.', ':' or '/', or is "localhost");
// otherwise it is a config.json that simply has no credentials, such as
// {"credsStore": "desktop"}. Empty input, or only whitespace, is an empty
// pull secret. Marshal always writes the dockerconfigjson form, legacy
// input included, because that is the only form HyperShift's keyring reads.
//
// An entry's credential comes from "auth" when it is a non-empty string,
// and from "username"/"password" otherwise, as in the kubelet and the
// docker CLI. "auth" is decoded with base64.StdEncoding and split at the
// first colon.
//
// # Keys
//
// Entries are keyed by registry host, optionally with a repository path
// ("quay.io/openshift-release-dev"), and sometimes in legacy forms such as
// "https://index.docker.io/v1/". NormalizeKey maps all of these to one
// form; Lookup, Set, SetAuth and Delete match every key that normalises
// like the host they are given, so that a fresh token replaces a stale
// "https://<account>.dkr.ecr.<region>.amazonaws.com" entry instead of
// sitting beside it. There is no prefix or wildcard matching: that is the
// keyring's job.
//
// # What is kept
//
// Everything this package does not edit is written back as it was read,
// compacted: top-level fields other than "auths" (credHelpers, credsStore,
// HttpHeaders, unknown ones) and whole entries, including their unknown
// fields and the order of their fields. Set and SetAuth replace an entry
// whole with {"auth": ...}: a stale identitytoken or registrytoken left
// beside a new token could be preferred by a client.
//
// # Determinism
//
// Marshal writes compact JSON with the top-level keys and the auths keys
// sorted and each key encoded as encoding/json encodes it, so a pull
// secret gives the same bytes however its keys were ordered or spaced,
// and Parse followed by Marshal is a fixed point. Values are not
// re-encoded: two spellings of one JSON string stay two spellings. As with
// encoding/json, the last of repeated keys wins.
//
// # Errors and secrets
//
// Every error is a *ParseError matching ErrMalformed with errors.Is. It
// names the registry key of the entry at fault (hosts are not secret), one
// of a fixed set of reasons, and the byte offset of the problem; it never
// quotes the input, so no token, password or JSON snippet can reach a log.
// Parse checks JSON syntax exactly as encoding/json does, nesting limit
// included, and rejects an entry whose auth is not base64 or lacks the
// colon, whose auth, username or password is not a string, or whose key
// names no host.
//
// # Speed and ownership
//
// Parse is a purpose-built scanner, not encoding/json, which is tens of
// times slower on a 50-entry pull secret (see the benchmarks). The scanner
// accepts and rejects exactly what encoding/json does and hands the rare
// strings it does not handle itself (escapes, non-ASCII, non-canonical
// base64) to encoding/json and encoding/base64. Parse copies its input
// once and never modifies it; nothing a Config returns shares memory a
// caller could modify. A Config may be read from several goroutines; Set,
// SetAuth and Delete need exclusive access.
package dockerconfig
