package mirrorpolicy

import (
	"errors"
	"testing"

	"github.com/distribution/reference"
	"github.com/stretchr/testify/require"
)

// FuzzParseImage checks the fast path against distribution/reference, the
// authority: whenever parseFast accepts, ParseDockerRef agrees exactly.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{
		releaseDig, releaseTag, release, release + ":4.18.1-x86_64@" + digest, "busybox", "docker.io/library/busybox:1",
		"localhost:5000/a/b_c__d--e.f:Tag_1.0-x", "quay.io:443/x@" + digest, "Quay.io/x:1", "[::1]:5000/x:y", "quay.io/x@sha512:" + digest[7:] + digest[7:],
		ecrRepo + "@" + digest, "a.b/c.-d", "a.b/c/:d", "a.b/c@sha256:ABC",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := parseFast(s)
		if !ok {
			return
		}
		named, err := reference.ParseDockerRef(s)
		require.NoError(t, err, "parseFast accepted %q", s)
		_, digested := named.(reference.Canonical)
		require.Equal(t, imageRef{full: named.String(), nameLen: len(named.Name()), hostLen: len(reference.Domain(named)), digested: digested}, fast, "input %q", s)
	})
}

func fuzzPolicyRules() []Rule {
	return []Rule{
		{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4", "mirror.example.com/ocp"}, Origin: "ImageDigestMirrorSet/cluster"},
		{Source: release, Mirrors: []string{ecrRepo}, NeverContactSource: true},
		{Source: release, Mirrors: []string{"mirror.example.com/tags/ocp-release"}, Kind: TagMirrors},
		{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}, Kind: AllMirrors},
		{Source: "docker.io", Mirrors: []string{ecrHost + "/docker-hub"}, Kind: AllMirrors},
		{Source: "*.example.com", Mirrors: []string{"mirror.local/example", "mirror.local"}, Kind: AllMirrors},
		{Source: "mirror.local", Mirrors: []string{"mirror2.local/m"}, NeverContactSource: true},
		{Source: "registry.redhat.io", Mirrors: []string{"registry.redhat.io/ubi9", "mirror.local:5000/rh"}, Kind: AllMirrors},
	}
}

// FuzzCandidates checks that Candidates never panics, that every candidate
// is a canonical reference a node could parse, and that no candidate falls
// under a blocked source.
func FuzzCandidates(f *testing.F) {
	for _, s := range []string{
		releaseDig, releaseTag, artDev + "@" + digest, "busybox", "nginx:1.27", "registry.example.com:5000/ns/img:1",
		"a.b.example.com/x/y@" + digest, "registry.redhat.io/ubi9@" + digest, "quay.io/openshift-release-dev@" + digest,
	} {
		f.Add(s, "quay.io/openshift-release-dev/ocp-release", "mirror.local/x", uint8(0), false)
	}
	f.Add("x.example.com:5000/ns/img:1", "*.example.com", "mirror.local", uint8(2), true)
	f.Fuzz(func(t *testing.T, image, source, mirror string, kind uint8, never bool) {
		rules := fuzzPolicyRules()
		extra := Rule{Source: source, Mirrors: []string{mirror}, Kind: Kind(kind % 3), NeverContactSource: never}
		if _, err := New(append(rules, extra)...); err == nil {
			rules = append(rules, extra)
		}
		p, err := New(rules...)
		require.NoError(t, err)

		got, err := p.Candidates(image)
		_, parseErr := reference.ParseDockerRef(image)
		if parseErr != nil {
			require.ErrorIs(t, err, ErrInvalidReference)
			return
		}
		if err != nil {
			var re *RuleError
			require.True(t, errors.Is(err, ErrBlocked) || errors.As(err, &re), "unexpected error %v", err)
			return
		}
		require.NotEmpty(t, got)
		for _, c := range got {
			named, err := reference.ParseNamed(c.Ref)
			require.NoError(t, err, "candidate %q for %q", c.Ref, image)
			require.Equal(t, c.Ref, named.String())
			require.True(t, p.SourceAllowed(c.Ref), "candidate %q for %q is under a blocked source", c.Ref, image)
		}
	})
}

// FuzzParseOverrides checks that ParseOverrides never panics, that what it
// accepts round-trips through FormatOverrides, and that FromOverrides
// accepts it.
func FuzzParseOverrides(f *testing.F) {
	for _, s := range []string{
		"", "=", release + "=" + ecrRepo, release + "=" + ecrRepo + "," + release + "=mirror.local/r," + artDev + "=" + ecrRepo,
		"*.redhat.io=mirror.local/redhat", "quay.io=", "=x", "a=b=c", ",", "quay.io=mirror.local,",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseOverrides(s)
		if err != nil {
			var oe *OverrideError
			require.ErrorAs(t, err, &oe)
			return
		}
		back, err := ParseOverrides(FormatOverrides(m))
		require.NoError(t, err)
		require.Equal(t, m, back)
		_, err = FromOverrides(m)
		require.NoError(t, err)
	})
}
