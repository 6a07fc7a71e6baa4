package mirrorpolicy

import (
	"fmt"
	"sort"
	"strings"
)

// OverrideError reports a malformed pair in an OPENSHIFT_IMG_OVERRIDES
// value. Pairs hold registry locations only, never credentials, so the
// pair is quoted as is.
type OverrideError struct {
	// Index is the 0-based position of the pair in the comma-separated list.
	Index int
	// Pair is the offending "source=mirror" text.
	Pair string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns "mirrorpolicy: overrides pair <i> "<pair>": <reason>".
func (e *OverrideError) Error() string {
	return fmt.Sprintf("mirrorpolicy: overrides pair %d %q: %s", e.Index, e.Pair, e.Reason)
}

// ParseOverrides parses HyperShift's OPENSHIFT_IMG_OVERRIDES form
// "src=mirror,src=mirror2": a repeated src appends its mirrors in order.
// "" and "=" (what HyperShift writes for an empty map) give a nil map.
//
// Unlike HyperShift's ConvertImageRegistryOverrideStringToMap, which skips
// what it cannot read, it is strict: an empty pair, a pair without exactly
// one "=", an empty side, or a source or mirror that New would reject is
// an *OverrideError quoting the pair.
func ParseOverrides(s string) (map[string][]string, error) {
	if s == "" || s == "=" {
		return nil, nil
	}
	m := map[string][]string{}
	for i, pair := range strings.Split(s, ",") {
		fail := func(format string, args ...any) (map[string][]string, error) {
			return nil, &OverrideError{Index: i, Pair: pair, Reason: fmt.Sprintf(format, args...)}
		}
		src, mirror, ok := strings.Cut(pair, "=")
		switch {
		case pair == "":
			return fail("empty pair")
		case !ok:
			return fail("missing \"=\"")
		case strings.Contains(mirror, "="):
			return fail("more than one \"=\"")
		case src == "":
			return fail("empty source")
		case mirror == "":
			return fail("empty mirror")
		}
		if strings.HasPrefix(src, "*") {
			if reason := checkWildcard(src); reason != "" {
				return fail("source %s", reason)
			}
		} else if reason := checkLocation(src); reason != "" {
			return fail("source %s", reason)
		}
		if reason := checkLocation(mirror); reason != "" {
			return fail("mirror %s", reason)
		}
		m[src] = append(m[src], mirror)
	}
	return m, nil
}

// FormatOverrides is the inverse of ParseOverrides: pairs sorted by
// source, each source's mirrors in order, "" for an empty map. Sources
// with no mirrors are left out. For any map ParseOverrides returned,
// ParseOverrides(FormatOverrides(m)) gives m back.
func FormatOverrides(m map[string][]string) string {
	sources := make([]string, 0, len(m))
	for s := range m {
		sources = append(sources, s)
	}
	sort.Strings(sources)
	var b strings.Builder
	for _, s := range sources {
		for _, mirror := range m[s] {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s)
			b.WriteByte('=')
			b.WriteString(mirror)
		}
	}
	return b.String()
}
