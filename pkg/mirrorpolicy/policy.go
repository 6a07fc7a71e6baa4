package mirrorpolicy

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/distribution/reference"
)

// Kind says which references a rule's mirrors serve, like the
// "pull-from-mirror" setting of a registries.conf mirror.
type Kind int

const (
	// DigestMirrors serve digest references only ("digest-only"): what
	// ImageDigestMirrorSet, ImageContentSourcePolicy and
	// HostedCluster.spec.imageContentSources configure. It is the zero
	// Kind, because redirecting a digest can never change the content.
	DigestMirrors Kind = iota
	// TagMirrors serve tag references only ("tag-only"): what
	// ImageTagMirrorSet configures.
	TagMirrors
	// AllMirrors serve both ("all"), as a pull-through cache does. A rule
	// of this Kind behaves exactly like a DigestMirrors rule plus a
	// TagMirrors rule with the same mirrors.
	AllMirrors
)

// String returns the registries.conf spelling: "digest-only", "tag-only"
// or "all".
func (k Kind) String() string {
	switch k {
	case DigestMirrors:
		return "digest-only"
	case TagMirrors:
		return "tag-only"
	case AllMirrors:
		return "all"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Rule maps images under Source to Mirrors.
type Rule struct {
	// Source is a registry host[:port], a namespace or a repository
	// ("quay.io", "quay.io/openshift-release-dev",
	// "quay.io/openshift-release-dev/ocp-release"), or a wildcard host
	// "*.example.com" that matches subdomains only. No tag or digest.
	Source string
	// Mirrors are tried in order. A mirror is host[:port][/path]; the part
	// of an image reference after Source is appended to it. At least one
	// mirror must differ from Source.
	Mirrors []string
	// Kind says which references the mirrors serve. The zero value is
	// DigestMirrors.
	Kind Kind
	// NeverContactSource forbids pulling from the source itself
	// (mirrorSourcePolicy: NeverContactSource). One rule setting it blocks
	// the source for every rule with the same Source, digest or tag.
	NeverContactSource bool
	// Origin names where the rule came from, for explanations
	// ("ImageDigestMirrorSet/cluster"). Optional; not matched on.
	Origin string
}

// Candidate is one place to pull an image from.
type Candidate struct {
	// Ref is the full pullspec to try, normalised
	// ("docker.io/library/busybox:latest" for "busybox").
	Ref string
	// Mirror is true when Ref is not the image's own reference.
	Mirror bool
	// Source is the rule source that matched the image, "" when none did.
	Source string
	// Origin is where the mirror (or, for the source, every rule for
	// Source) came from; several origins are joined with ", ".
	Origin string
}

// ErrInvalidReference is returned (wrapped) by Candidates for an image
// reference that does not parse.
var ErrInvalidReference = errors.New("mirrorpolicy: invalid image reference")

// ErrBlocked is returned (wrapped) by Candidates when the image's source
// has NeverContactSource and no mirror applies to the reference, for
// example a tag reference under a source with only digest mirrors. A node
// fails such a pull the same way ("registry ... is blocked").
var ErrBlocked = errors.New("mirrorpolicy: no allowed pull source")

// RuleError describes an invalid rule. New and the From* builders return
// it before any lookup; Candidates returns it when a mirror cannot hold a
// particular image (a node fails that pull too, see doc.go).
type RuleError struct {
	// Origin is the rule's Origin, or "rules[i]" for a rule without one.
	Origin string
	// Source is the rule's Source.
	Source string
	// Reason says what is wrong, quoting the offending mirror if any.
	Reason string
}

// Error returns "mirrorpolicy: <origin>: source "<source>": <reason>".
func (e *RuleError) Error() string {
	if e.Origin == "" {
		return fmt.Sprintf("mirrorpolicy: source %q: %s", e.Source, e.Reason)
	}
	return fmt.Sprintf("mirrorpolicy: %s: source %q: %s", e.Origin, e.Source, e.Reason)
}

// Policy answers where to pull an image from. It is immutable after New
// and safe for concurrent use. The zero Policy has no rules.
type Policy struct {
	hosts     map[string]*hostIndex // exact sources by registry host[:port]
	wildcards map[string]*entry     // "*.example.com" sources by ".example.com"
	entries   []*entry              // sorted by source, for Rules
	anyBlock  bool
}

type hostIndex struct {
	bySource map[string]*entry // keyed by the whole source string
}

// entry is one source after merging, the equivalent of one
// [[registry]] table in a node's registries.conf.
type entry struct {
	source   string
	wildcard bool
	blocked  bool
	origin   string
	digest   []mirror // merged DigestMirrors and AllMirrors rules
	tag      []mirror // merged TagMirrors and AllMirrors rules
}

type mirror struct {
	location string
	origin   string
	hostLen  int // len of the host[:port] part of location
}

// New validates rules and merges those with the same Source the way a
// node does (see mergeMirrors and doc.go). The result does not depend on
// the order of rules. The error is a *RuleError.
func New(rules ...Rule) (*Policy, error) {
	type group struct {
		wildcard bool
		blocked  bool
		origins  []string
		digest   [][]string
		tag      [][]string
		dOrigins map[string][]string // mirror -> origins, digest side
		tOrigins map[string][]string
	}
	groups := map[string]*group{}
	for i, r := range rules {
		origin := r.Origin
		if origin == "" {
			origin = fmt.Sprintf("rules[%d]", i)
		}
		wildcard, err := validateRule(r, origin)
		if err != nil {
			return nil, err
		}
		g := groups[r.Source]
		if g == nil {
			g = &group{wildcard: wildcard, dOrigins: map[string][]string{}, tOrigins: map[string][]string{}}
			groups[r.Source] = g
		}
		g.blocked = g.blocked || r.NeverContactSource
		g.origins = appendUnique(g.origins, r.Origin)
		mirrors := slices.Clone(r.Mirrors)
		if r.Kind == DigestMirrors || r.Kind == AllMirrors {
			g.digest = append(g.digest, mirrors)
			for _, m := range mirrors {
				g.dOrigins[m] = appendUnique(g.dOrigins[m], r.Origin)
			}
		}
		if r.Kind == TagMirrors || r.Kind == AllMirrors {
			g.tag = append(g.tag, mirrors)
			for _, m := range mirrors {
				g.tOrigins[m] = appendUnique(g.tOrigins[m], r.Origin)
			}
		}
	}

	p := &Policy{hosts: map[string]*hostIndex{}, wildcards: map[string]*entry{}}
	build := func(source string, lists [][]string, origins map[string][]string) []mirror {
		if len(lists) == 0 {
			return nil
		}
		merged := mergeMirrors(source, lists)
		out := make([]mirror, len(merged))
		for i, loc := range merged {
			out[i] = mirror{location: loc, origin: strings.Join(origins[loc], ", "), hostLen: len(hostOf(loc))}
		}
		return out
	}
	for source, g := range groups {
		e := &entry{
			source:   source,
			wildcard: g.wildcard,
			blocked:  g.blocked,
			origin:   strings.Join(g.origins, ", "),
			digest:   build(source, g.digest, g.dOrigins),
			tag:      build(source, g.tag, g.tOrigins),
		}
		p.entries = append(p.entries, e)
		p.anyBlock = p.anyBlock || e.blocked
		if e.wildcard {
			p.wildcards[source[1:]] = e
			continue
		}
		h := hostOf(source)
		hi := p.hosts[h]
		if hi == nil {
			hi = &hostIndex{bySource: map[string]*entry{}}
			p.hosts[h] = hi
		}
		hi.bySource[source] = e
	}
	// Sorted by source like runtime-utils' mergedMirrorSets output.
	sort.Slice(p.entries, func(i, j int) bool { return p.entries[i].source < p.entries[j].source })
	return p, nil
}

func appendUnique(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// validateRule reports whether r.Source is a wildcard, or a *RuleError.
func validateRule(r Rule, origin string) (wildcard bool, err error) {
	fail := func(format string, args ...any) (bool, error) {
		return false, &RuleError{Origin: origin, Source: r.Source, Reason: fmt.Sprintf(format, args...)}
	}
	if r.Kind < DigestMirrors || r.Kind > AllMirrors {
		return fail("unknown kind %v", r.Kind)
	}
	if strings.HasPrefix(r.Source, "*") {
		if reason := checkWildcard(r.Source); reason != "" {
			return fail("source %s", reason)
		}
		wildcard = true
	} else if reason := checkLocation(r.Source); reason != "" {
		return fail("source %s", reason)
	}
	if len(r.Mirrors) == 0 {
		return fail("no mirrors")
	}
	real := false
	for i, m := range r.Mirrors {
		if reason := checkLocation(m); reason != "" {
			return fail("mirror %q %s", m, reason)
		}
		if slices.Contains(r.Mirrors[:i], m) {
			return fail("mirror %q is listed twice", m)
		}
		real = real || m != r.Source
	}
	if !real {
		// runtime-utils ignores such a set (and its mirrorSourcePolicy);
		// the builders skip it, an explicit Rule is a mistake.
		return fail("mirrors only repeat the source")
	}
	return wildcard, nil
}

// find returns the entry whose source is the most specific match for the
// repository name (full[:nameLen]) and the length of the matched prefix
// (the host without port for a wildcard, as in sysregistriesv2's
// refMatchingSubdomainPrefix).
func (p *Policy) find(name string, hostLen int) (*entry, int) {
	if hi := p.hosts[name[:hostLen]]; hi != nil {
		// Longest first, one map lookup per path boundary.
		for n := name; ; {
			if e := hi.bySource[n]; e != nil {
				return e, len(n)
			}
			i := strings.LastIndexByte(n, '/')
			if i < hostLen {
				break
			}
			n = n[:i]
		}
	}
	if len(p.wildcards) == 0 {
		return nil, 0
	}
	h := stripPort(name[:hostLen])
	// Longest suffix first. Like sysregistriesv2, the suffix must be the
	// first occurrence of its text in the host.
	for k := strings.IndexByte(h, '.'); k >= 0; {
		if e := p.wildcards[h[k:]]; e != nil && strings.Index(h, h[k:]) == k {
			return e, len(h)
		}
		next := strings.IndexByte(h[k+1:], '.')
		if next < 0 {
			break
		}
		k += 1 + next
	}
	return nil, 0
}

// Candidates returns where to pull image from, in order: the applicable
// mirrors of the most specific matching source, each rewritten as mirror +
// the rest of the reference after the source, then the image itself unless
// its source is blocked. An image no rule matches yields just itself.
//
// Digest references (including "name:tag@digest", whose tag is dropped as
// CRI-O does) use digest and all-kind mirrors, tag references (a bare
// name means ":latest") tag and all-kind mirrors. A mirror whose rewritten
// reference falls under a blocked source is left out, as a node refuses to
// contact it. A reference that does not parse yields an error wrapping
// ErrInvalidReference; no allowed candidate at all, ErrBlocked.
func (p *Policy) Candidates(image string) ([]Candidate, error) {
	ref, err := parseImage(image)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidReference, image, err)
	}
	if p == nil {
		return []Candidate{{Ref: ref.full}}, nil
	}
	e, prefixLen := p.find(ref.name(), ref.hostLen)
	if e == nil {
		return []Candidate{{Ref: ref.full}}, nil
	}
	mirrors := e.tag
	if ref.digested {
		mirrors = e.digest
	}
	out := make([]Candidate, 0, len(mirrors)+1)
	rest := ref.full[prefixLen:]
	restName := ref.nameLen - prefixLen
	for _, m := range mirrors {
		newRef, newNameLen, newHostLen, err := rewrite(m, rest, restName)
		if err != nil {
			return nil, &RuleError{Origin: m.origin, Source: e.source, Reason: err.Error()}
		}
		if p.anyBlock {
			if b, _ := p.find(newRef[:newNameLen], newHostLen); b != nil && b.blocked {
				continue
			}
		}
		out = appendCandidate(out, Candidate{Ref: newRef, Mirror: newRef != ref.full, Source: e.source, Origin: m.origin})
	}
	if !e.blocked {
		out = appendCandidate(out, Candidate{Ref: ref.full, Source: e.source, Origin: e.origin})
	}
	if len(out) == 0 {
		kind := "tag"
		if ref.digested {
			kind = "digest"
		}
		return nil, fmt.Errorf("%w for %q: source %q (%s) has mirrorSourcePolicy NeverContactSource and no allowed mirror serves %s references",
			ErrBlocked, ref.full, e.source, e.origin, kind)
	}
	return out, nil
}

// appendCandidate drops a repeat of an earlier Ref: a source listed among
// its own mirrors would otherwise be tried twice (a node does try it twice).
func appendCandidate(out []Candidate, c Candidate) []Candidate {
	for _, o := range out {
		if o.Ref == c.Ref {
			return out
		}
	}
	return append(out, c)
}

// rewrite returns m.location + rest and the name and host lengths of the
// result, or why the result is not a valid reference (sysregistriesv2's
// rewriteReference fails the whole pull in that case).
func rewrite(m mirror, rest string, restName int) (ref string, nameLen, hostLen int, err error) {
	ref = m.location + rest
	nameLen = len(m.location) + restName
	hostLen = m.hostLen
	switch {
	case rest != "" && rest[0] == '/':
		// The common case: the source matched at a path boundary; mirror
		// and rest are both valid, so only the length can go wrong.
	case rest != "" && rest[0] == ':' && restName > 0:
		// A wildcard source matched a host with a port: the port lands on
		// the mirror, as on a node. Let the parser judge the result.
		named, perr := reference.ParseNamed(ref)
		if perr != nil {
			return "", 0, 0, fmt.Errorf("mirror %q gives invalid reference %q: %v", m.location, ref, perr)
		}
		return ref, len(named.Name()), len(reference.Domain(named)), nil
	default:
		// The image is the source repository itself: the mirror must be a
		// repository too, not a bare host.
		if len(m.location) == m.hostLen {
			return "", 0, 0, fmt.Errorf("mirror %q is a bare registry host and cannot hold repository-level reference %q", m.location, ref)
		}
	}
	if ref[:hostLen] == "docker.io" && strings.IndexByte(ref[hostLen+1:nameLen], '/') < 0 {
		// Not canonical: Docker Hub would read it as docker.io/library/...
		return "", 0, 0, fmt.Errorf("mirror %q gives %q, which Docker Hub normalises to a library/ repository", m.location, ref)
	}
	if nameLen-hostLen-1 > reference.RepositoryNameTotalLengthMax {
		return "", 0, 0, fmt.Errorf("mirror %q gives a repository name longer than %d characters: %q", m.location, reference.RepositoryNameTotalLengthMax, ref)
	}
	return ref, nameLen, hostLen, nil
}

// SourceAllowed reports whether the image's own reference may be
// contacted: false when its most specific source has NeverContactSource,
// or when image does not parse.
func (p *Policy) SourceAllowed(image string) bool {
	ref, err := parseImage(image)
	if err != nil {
		return false
	}
	if p == nil {
		return true
	}
	e, _ := p.find(ref.name(), ref.hostLen)
	return e == nil || !e.blocked
}

// Rules returns the merged rules, sorted by Source: per source one
// AllMirrors rule when digest and tag references get the same mirrors,
// otherwise a DigestMirrors and/or a TagMirrors rule, with mirrors in
// merged order and the Origins of every contributing rule. New(p.Rules()...)
// behaves like p. The result is a copy.
func (p *Policy) Rules() []Rule {
	if p == nil {
		return nil
	}
	var out []Rule
	for _, e := range p.entries {
		d, t := locations(e.digest), locations(e.tag)
		base := Rule{Source: e.source, NeverContactSource: e.blocked, Origin: e.origin}
		if len(d) > 0 && slices.Equal(d, t) {
			base.Mirrors, base.Kind = d, AllMirrors
			out = append(out, base)
			continue
		}
		if len(d) > 0 {
			r := base
			r.Mirrors, r.Kind = d, DigestMirrors
			out = append(out, r)
		}
		if len(t) > 0 {
			r := base
			r.Mirrors, r.Kind = t, TagMirrors
			out = append(out, r)
		}
	}
	return out
}

func locations(ms []mirror) []string {
	if len(ms) == 0 {
		return nil
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.location
	}
	return out
}
