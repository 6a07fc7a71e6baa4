package mirrorpolicy

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cases below are worked examples copied from the reference
// implementations' own tests, to show we agree with them.

// From openshift/runtime-utils pkg/registries/registries_test.go,
// mergedMirrorsetsTestcases: "Example", "Sets with a shared element -
// strict order" and "Source included in mirrors", and topo_test.go
// TestTopoGraph ("Complete loop").
func TestAgreesWithRuntimeUtilsMerge(t *testing.T) {
	tests := []struct {
		name   string
		source string
		lists  [][]string
		want   []string
	}{
		{
			name:   "When a vendor set and an admin set share source.vendor.com, it should give local-mirror, registry2 (Example)",
			source: "source.vendor.com",
			lists:  [][]string{{"registry2.vendor.com"}, {"local-mirror.example.com"}},
			want:   []string{"local-mirror.example.com", "registry2.vendor.com"},
		},
		{
			name:   "When the admin set reverses the vendor's order, it should give the runtime-utils order (Example)",
			source: "source.vendor2.com",
			lists: [][]string{
				{"registry1.vendor2.com", "registry2.vendor2.com"},
				{"local-mirror2.example.com", "registry2.vendor2.com", "registry1.vendor2.com"},
			},
			want: []string{"local-mirror2.example.com", "registry1.vendor2.com", "registry2.vendor2.com"},
		},
		{
			name:   "When sets share an element, it should keep the strict order (Sets with a shared element)",
			source: "source.example.com",
			lists:  [][]string{{"z1.example.com", "y2.example.com"}, {"y2.example.com", "x3.example.com"}},
			want:   []string{"z1.example.com", "y2.example.com", "x3.example.com"},
		},
		{
			name:   "When the source is among the mirrors, it should stay in place (Source included in mirrors)",
			source: "source.example.com",
			lists: [][]string{
				{"z1.example.com", "source.example.com", "y2.example.com"},
				{"source.example.com", "y2.example.com", "x3.example.com"},
			},
			want: []string{"z1.example.com", "source.example.com", "y2.example.com", "x3.example.com"},
		},
		{
			name:   "When the lists form a complete loop, it should break it lexically (TestTopoGraph Complete loop)",
			source: "s.example.com",
			lists: [][]string{
				{"a.example.com", "b.example.com"}, {"b.example.com", "c.example.com"},
				{"c.example.com", "d.example.com"}, {"d.example.com", "a.example.com"},
			},
			want: []string{"a.example.com", "b.example.com", "c.example.com", "d.example.com"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, mergeMirrors(tt.source, tt.lists))
			// The same through New, in both input orders, where New accepts the lists.
			if hasDup(tt.lists) {
				return
			}
			for _, order := range [][][]string{tt.lists, reverse(tt.lists)} {
				var rules []Rule
				for _, l := range order {
					rules = append(rules, Rule{Source: tt.source, Mirrors: l})
				}
				require.Equal(t, tt.want, mustNew(t, rules...).Rules()[0].Mirrors)
			}
		})
	}
}

// From openshift/runtime-utils pkg/registries/registries_test.go,
// TestEditRegistriesConfig "mirrorSourcePolicy" and "imageDigestMirrorSet
// + imageTagMirrorSet": registry-b.com is blocked by its ImageTagMirrorSet
// alone, yet its registries.conf entry (and so digest pulls) is blocked.
func TestAgreesWithRuntimeUtilsEditRegistriesConfig(t *testing.T) {
	idms, err := FromImageDigestMirrorSets(configv1.ImageDigestMirrorSet{
		ObjectMeta: metav1.ObjectMeta{Name: "idms"},
		Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: []configv1.ImageDigestMirrors{
			{Source: "registry-a.com", Mirrors: []configv1.ImageMirror{"mirror-digest-1.registry-a.com", "mirror-digest-2.registry-a.com"}, MirrorSourcePolicy: "NeverContactSource"},
			{Source: "registry-b.com", Mirrors: []configv1.ImageMirror{"mirror-digest-1.registry-b.com", "mirror-digest-2.registry-b.com"}},
			{Source: "registry-c.com", Mirrors: []configv1.ImageMirror{"mirror-digest-1.registry-c.com", "mirror-digest-2.registry-c.com"}},
		}},
	})
	require.NoError(t, err)
	itms, err := FromImageTagMirrorSets(configv1.ImageTagMirrorSet{
		ObjectMeta: metav1.ObjectMeta{Name: "itms"},
		Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{
			{Source: "registry-b.com", Mirrors: []configv1.ImageMirror{"mirror-tag-1.registry-b.com", "mirror-tag-2.registry-b.com"}, MirrorSourcePolicy: "NeverContactSource"},
		}},
	})
	require.NoError(t, err)
	p := mustNew(t, append(idms, itms...)...)

	// Their want: one blocked/unblocked [[registry]] per source, digest-only then tag-only mirrors.
	type want struct {
		blocked bool
		digest  []string
		tag     []string
	}
	wants := map[string]want{
		"registry-a.com": {true, []string{"mirror-digest-1.registry-a.com", "mirror-digest-2.registry-a.com"}, nil},
		"registry-b.com": {true, []string{"mirror-digest-1.registry-b.com", "mirror-digest-2.registry-b.com"}, []string{"mirror-tag-1.registry-b.com", "mirror-tag-2.registry-b.com"}},
		"registry-c.com": {false, []string{"mirror-digest-1.registry-c.com", "mirror-digest-2.registry-c.com"}, nil},
	}
	for source, w := range wants {
		t.Run("When pulling from "+source+", it should use the registries.conf entry runtime-utils writes", func(t *testing.T) {
			dig := source + "/ns/img@" + digest
			got, err := p.Candidates(dig)
			require.NoError(t, err)
			wantRefs := withRest(w.digest, "/ns/img@"+digest)
			if !w.blocked {
				wantRefs = append(wantRefs, dig)
			}
			require.Equal(t, wantRefs, refs(got))
			require.Equal(t, !w.blocked, p.SourceAllowed(dig))

			tag := source + "/ns/img:v1"
			got, err = p.Candidates(tag)
			if w.blocked && len(w.tag) == 0 {
				require.ErrorIs(t, err, ErrBlocked)
				return
			}
			require.NoError(t, err)
			wantRefs = withRest(w.tag, "/ns/img:v1")
			if !w.blocked {
				wantRefs = append(wantRefs, tag)
			}
			require.Equal(t, wantRefs, refs(got))
		})
	}
}

// From containers/image pkg/sysregistriesv2/system_registries_v2_test.go,
// TestRewriteReferenceSuccess (rows expressible as a mirror: location !=
// prefix) and TestRewriteReferenceFailedDuringParseNamed. A bare name
// gains ":latest" here, as docker.ParseReference adds it before a pull.
func TestAgreesWithSysregistriesv2Rewrite(t *testing.T) {
	success := []struct{ inputRef, prefix, location, expected string }{
		{"example.com/foo/image:latest", "example.com/foo", "example.com", "example.com/image:latest"},
		{"example.com/foo/image:latest", "example.com/foo", "example.com/path", "example.com/path/image:latest"},
		{"docker.io/library/image", "docker.io/library", "example.com", "example.com/image"},
		{"docker.io/library/image", "docker.io", "example.com", "example.com/library/image"},
		{"docker.io/library/prefix/image", "docker.io/library/prefix", "example.com", "example.com/image"},
		{"docker.io/namespace/image", "*.io", "example.com", "example.com/namespace/image"},
		{"docker.io/library/prefix/image", "*.io", "example.com", "example.com/library/prefix/image"},
		{"sub.example.io/library/prefix/image", "*.example.io", "example.com", "example.com/library/prefix/image"},
		{"another.sub.example.io:5000/library/prefix/image:latest", "*.sub.example.io", "example.com", "example.com:5000/library/prefix/image:latest"},
		{"foo.bar.io/ns1/ns2/ns3/ns4", "*.bar.io", "omg.bbq.com/roflmao", "omg.bbq.com/roflmao/ns1/ns2/ns3/ns4"},
	}
	for _, c := range success {
		t.Run("When "+c.inputRef+" is mirrored from "+c.prefix+" to "+c.location+", it should give "+c.expected, func(t *testing.T) {
			expected := c.expected
			if !strings.Contains(expected[strings.LastIndexByte(expected, '/'):], ":") {
				expected += ":latest"
			}
			got, err := mustNew(t, Rule{Source: c.prefix, Mirrors: []string{c.location}, Kind: AllMirrors}).Candidates(c.inputRef)
			require.NoError(t, err)
			require.Equal(t, expected, got[0].Ref)
			require.True(t, got[0].Mirror)
		})
	}

	t.Run("When a repository-level digest is rewritten onto a bare host, it should fail like rewriteReference", func(t *testing.T) {
		_, err := mustNew(t, Rule{Source: "example.com/foo", Mirrors: []string{"example.com"}}).Candidates("example.com/foo@sha256:" + strings.Repeat("a", 64))
		var re *RuleError
		require.ErrorAs(t, err, &re)
	})
	// Rows with malformed prefixes ("example.com//foo", "example.com/foo/",
	// "image") are rejected by New; "example.com/f" vs example.com/foo/image
	// and "*.com" vs docker.io do not match at all.
	for _, bad := range []string{"example.com//foo", "example.com/foo/", "image"} {
		t.Run("When the prefix is "+bad+", it should be rejected", func(t *testing.T) {
			_, err := New(Rule{Source: bad, Mirrors: []string{"example.com/path"}})
			var re *RuleError
			require.ErrorAs(t, err, &re)
		})
	}
}

// From containers/image pkg/sysregistriesv2/testdata/pull-sources-from-reference.conf
// and TestPullSourcesFromReference, registry "registry-g.com/baz": mirror-1
// digest-only, mirror-2 tag-only, mirror-3 and mirror-4 all. (Their source
// endpoint is a different location, which IDMS cannot express, so only the
// mirrors are compared.)
func TestAgreesWithSysregistriesv2PullFromMirror(t *testing.T) {
	p := mustNew(t,
		Rule{Source: "registry-g.com/baz", Mirrors: []string{"mirror-1.registry-g.com"}, Kind: DigestMirrors},
		Rule{Source: "registry-g.com/baz", Mirrors: []string{"mirror-2.registry-g.com"}, Kind: TagMirrors},
		Rule{Source: "registry-g.com/baz", Mirrors: []string{"mirror-3.registry-g.com", "mirror-4.registry-g.com"}, Kind: AllMirrors},
	)
	d := "@sha256:" + strings.Repeat("a", 64)
	got, err := p.Candidates("registry-g.com/baz/image" + d)
	require.NoError(t, err)
	require.Equal(t, withRest([]string{"mirror-1.registry-g.com", "mirror-3.registry-g.com", "mirror-4.registry-g.com", "registry-g.com/baz"}, "/image"+d), refs(got))

	got, err = p.Candidates("registry-g.com/baz/image:aaa")
	require.NoError(t, err)
	require.Equal(t, withRest([]string{"mirror-2.registry-g.com", "mirror-3.registry-g.com", "mirror-4.registry-g.com", "registry-g.com/baz"}, "/image:aaa"), refs(got))
}

func withRest(locs []string, rest string) []string {
	out := make([]string, 0, len(locs))
	for _, l := range locs {
		out = append(out, l+rest)
	}
	return out
}

func reverse(l [][]string) [][]string {
	out := make([][]string, len(l))
	for i, x := range l {
		out[len(l)-1-i] = x
	}
	return out
}

func hasDup(lists [][]string) bool {
	for _, l := range lists {
		seen := map[string]bool{}
		for _, m := range l {
			if seen[m] {
				return true
			}
			seen[m] = true
		}
	}
	return false
}
