package mirrorpolicy

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	ecrHost    = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	ecrRepo    = ecrHost + "/ocp4/openshift4"
	digest     = "sha256:3a5b3c2b7f1c9e8d4d6f0e2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c"
	release    = "quay.io/openshift-release-dev/ocp-release"
	artDev     = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
	releaseDig = release + "@" + digest
	releaseTag = release + ":4.18.1-x86_64"
)

func refs(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Ref
	}
	return out
}

func mustNew(t testing.TB, rules ...Rule) *Policy {
	t.Helper()
	p, err := New(rules...)
	require.NoError(t, err)
	return p
}

func TestCandidates(t *testing.T) {
	mirrorNS := Rule{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4"}, Origin: "ImageDigestMirrorSet/cluster"}
	tests := []struct {
		name    string
		rules   []Rule
		image   string
		want    []string
		wantErr error
	}{
		{
			name:  "When no rule matches the image, it should return only the image itself",
			rules: []Rule{mirrorNS},
			image: "registry.redhat.io/ubi9/ubi@" + digest,
			want:  []string{"registry.redhat.io/ubi9/ubi@" + digest},
		},
		{
			name:  "When a namespace source matches a release digest, it should try the mirror with the rest of the path, then the source",
			rules: []Rule{mirrorNS},
			image: releaseDig,
			want:  []string{ecrHost + "/ocp4/ocp-release@" + digest, releaseDig},
		},
		{
			name:  "When the image is in a look-alike namespace, it should not use the mirror",
			rules: []Rule{mirrorNS},
			image: "quay.io/openshift-release-dev-evil/ocp-release@" + digest,
			want:  []string{"quay.io/openshift-release-dev-evil/ocp-release@" + digest},
		},
		{
			name:  "When the image is a look-alike repository of a repository source, it should not use the mirror",
			rules: []Rule{{Source: release, Mirrors: []string{ecrRepo}}},
			image: release + "2@" + digest,
			want:  []string{release + "2@" + digest},
		},
		{
			name:  "When the source is a repository and the image is that repository, it should put the digest on the mirror repository",
			rules: []Rule{{Source: release, Mirrors: []string{ecrRepo}}},
			image: releaseDig,
			want:  []string{ecrRepo + "@" + digest, releaseDig},
		},
		{
			name:  "When the source is a registry host, it should keep the whole path under the mirror",
			rules: []Rule{{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}}},
			image: releaseDig,
			want:  []string{ecrHost + "/quay/openshift-release-dev/ocp-release@" + digest, releaseDig},
		},
		{
			name:  "When the image is a tag reference and only digest mirrors exist, it should return only the source",
			rules: []Rule{mirrorNS},
			image: releaseTag,
			want:  []string{releaseTag},
		},
		{
			name:  "When the image is a digest reference and only tag mirrors exist, it should return only the source",
			rules: []Rule{{Source: "quay.io/openshift-release-dev", Mirrors: []string{"mirror.example.com/ocp"}, Kind: TagMirrors}},
			image: releaseDig,
			want:  []string{releaseDig},
		},
		{
			name:  "When the image is a tag reference and tag mirrors exist, it should keep the tag on the mirror",
			rules: []Rule{{Source: "quay.io/openshift-release-dev", Mirrors: []string{"mirror.example.com/ocp"}, Kind: TagMirrors}},
			image: releaseTag,
			want:  []string{"mirror.example.com/ocp/ocp-release:4.18.1-x86_64", releaseTag},
		},
		{
			name:  "When the image has both a tag and a digest, it should be a digest reference without the tag",
			rules: []Rule{mirrorNS},
			image: release + ":4.18.1-x86_64@" + digest,
			want:  []string{ecrHost + "/ocp4/ocp-release@" + digest, releaseDig},
		},
		{
			name:  "When the image has neither tag nor digest, it should be pulled as :latest through tag mirrors",
			rules: []Rule{{Source: "quay.io/openshift", Mirrors: []string{"mirror.example.com/openshift"}, Kind: TagMirrors}},
			image: "quay.io/openshift/origin-cli",
			want:  []string{"mirror.example.com/openshift/origin-cli:latest", "quay.io/openshift/origin-cli:latest"},
		},
		{
			name:  "When the source has NeverContactSource, it should leave the source out",
			rules: []Rule{{Source: release, Mirrors: []string{ecrRepo}, NeverContactSource: true}},
			image: releaseDig,
			want:  []string{ecrRepo + "@" + digest},
		},
		{
			name:    "When the source has NeverContactSource and no mirror serves the reference, it should fail with ErrBlocked",
			rules:   []Rule{{Source: release, Mirrors: []string{ecrRepo}, NeverContactSource: true}},
			image:   releaseTag,
			wantErr: ErrBlocked,
		},
		{
			name: "When NeverContactSource is set by a tag rule only, it should block the source for digest pulls too",
			rules: []Rule{
				{Source: release, Mirrors: []string{ecrRepo}},
				{Source: release, Mirrors: []string{"mirror.example.com/ocp-release"}, Kind: TagMirrors, NeverContactSource: true},
			},
			image: releaseDig,
			want:  []string{ecrRepo + "@" + digest},
		},
		{
			name: "When a more specific source exists, it should shadow the broader source's mirrors",
			rules: []Rule{
				{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}},
				{Source: release, Mirrors: []string{ecrRepo}},
			},
			image: releaseDig,
			want:  []string{ecrRepo + "@" + digest, releaseDig},
		},
		{
			name: "When the more specific source has only tag mirrors, it should still shadow the broader digest mirrors",
			rules: []Rule{
				{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}},
				{Source: release, Mirrors: []string{"mirror.example.com/ocp-release"}, Kind: TagMirrors},
			},
			image: releaseDig,
			want:  []string{releaseDig},
		},
		{
			name: "When the broader source is blocked and a more specific one is not, it should allow the source",
			rules: []Rule{
				{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}, NeverContactSource: true},
				{Source: release, Mirrors: []string{ecrRepo}},
			},
			image: releaseDig,
			want:  []string{ecrRepo + "@" + digest, releaseDig},
		},
		{
			name: "When several rules share a source, it should merge their mirrors keeping each rule's order",
			rules: []Rule{
				{Source: release, Mirrors: []string{"b.example.com/r", "c.example.com/r"}, Origin: "ImageDigestMirrorSet/one"},
				{Source: release, Mirrors: []string{"a.example.com/r", "b.example.com/r"}, Origin: "ImageDigestMirrorSet/two"},
			},
			image: releaseDig,
			want:  []string{"a.example.com/r@" + digest, "b.example.com/r@" + digest, "c.example.com/r@" + digest, releaseDig},
		},
		{
			name: "When unrelated rules share a source, it should order their mirrors lexically like runtime-utils",
			rules: []Rule{
				{Source: release, Mirrors: []string{"z.example.com/r"}},
				{Source: release, Mirrors: []string{"y.example.com/r"}},
			},
			image: releaseDig,
			want:  []string{"y.example.com/r@" + digest, "z.example.com/r@" + digest, releaseDig},
		},
		{
			name:  "When a wildcard source matches a subdomain, it should drop the host and keep the path (the IDMS API example)",
			rules: []Rule{{Source: "*.redhat.io", Mirrors: []string{"mirror.local/redhat"}}},
			image: "registry.redhat.io/product/repo@" + digest,
			want:  []string{"mirror.local/redhat/product/repo@" + digest, "registry.redhat.io/product/repo@" + digest},
		},
		{
			name:  "When a wildcard source is given its bare domain, it should not match",
			rules: []Rule{{Source: "*.redhat.io", Mirrors: []string{"mirror.local/redhat"}}},
			image: "redhat.io/product/repo@" + digest,
			want:  []string{"redhat.io/product/repo@" + digest},
		},
		{
			name:  "When a wildcard domain appears only in the path, it should not match",
			rules: []Rule{{Source: "*.namespace.com", Mirrors: []string{"mirror.local/x"}}},
			image: "another.example.com/namespace.com/foo:bar",
			want:  []string{"another.example.com/namespace.com/foo:bar"},
		},
		{
			name: "When a wildcard and an exact host both match, it should use the exact host",
			rules: []Rule{
				{Source: "*.redhat.io", Mirrors: []string{"mirror.local/wild"}},
				{Source: "registry.redhat.io", Mirrors: []string{"mirror.local/exact"}},
			},
			image: "registry.redhat.io/ubi9/ubi@" + digest,
			want:  []string{"mirror.local/exact/ubi9/ubi@" + digest, "registry.redhat.io/ubi9/ubi@" + digest},
		},
		{
			name: "When two wildcards match, it should use the longer one",
			rules: []Rule{
				{Source: "*.io", Mirrors: []string{"mirror.local/io"}},
				{Source: "*.redhat.io", Mirrors: []string{"mirror.local/redhat"}},
			},
			image: "registry.redhat.io/ubi9/ubi@" + digest,
			want:  []string{"mirror.local/redhat/ubi9/ubi@" + digest, "registry.redhat.io/ubi9/ubi@" + digest},
		},
		{
			name: "When a mirror falls under a blocked source, it should be left out",
			rules: []Rule{
				{Source: release, Mirrors: []string{"mirror.example.com/blocked/ocp-release", ecrRepo}},
				{Source: "mirror.example.com/blocked", Mirrors: []string{"other.example.com/x"}, NeverContactSource: true},
			},
			image: releaseDig,
			want:  []string{ecrRepo + "@" + digest, releaseDig},
		},
		{
			name: "When the source is listed among its own mirrors, it should be tried once, at its merged position",
			rules: []Rule{
				{Source: "source.example.com", Mirrors: []string{"z1.example.com", "source.example.com", "y2.example.com"}},
			},
			image: "source.example.com/ns/img@" + digest,
			want: []string{
				"z1.example.com/ns/img@" + digest, "source.example.com/ns/img@" + digest, "y2.example.com/ns/img@" + digest,
			},
		},
		{
			name:  "When a Docker Hub familiar name is pulled, it should match docker.io/library sources",
			rules: []Rule{{Source: "docker.io/library", Mirrors: []string{ecrHost + "/docker-hub/library"}, Kind: AllMirrors}},
			image: "busybox:1.36",
			want:  []string{ecrHost + "/docker-hub/library/busybox:1.36", "docker.io/library/busybox:1.36"},
		},
		{
			name:  "When a source is written docker.io/<name>, it should not match the normalised docker.io/library/<name> (as on a node)",
			rules: []Rule{{Source: "docker.io/busybox", Mirrors: []string{ecrHost + "/busybox"}, Kind: AllMirrors}},
			image: "busybox:1.36",
			want:  []string{"docker.io/library/busybox:1.36"},
		},
		{
			name:  "When an AllMirrors pull-through cache matches, it should serve tag references too",
			rules: []Rule{{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}, Kind: AllMirrors}},
			image: releaseTag,
			want:  []string{ecrHost + "/quay/openshift-release-dev/ocp-release:4.18.1-x86_64", releaseTag},
		},
		{
			name:  "When the image host has a port, it should not match a source without that port",
			rules: []Rule{{Source: "registry.example.com", Mirrors: []string{"mirror.example.com"}}},
			image: "registry.example.com:5000/ns/img@" + digest,
			want:  []string{"registry.example.com:5000/ns/img@" + digest},
		},
		{
			name:  "When the image host differs in case, it should not match (sysregistriesv2 compares bytes)",
			rules: []Rule{mirrorNS},
			image: "Quay.io/openshift-release-dev/ocp-release@" + digest,
			want:  []string{"Quay.io/openshift-release-dev/ocp-release@" + digest},
		},
		{
			name:    "When the image is the source repository and the mirror is a bare host, it should fail like a node",
			rules:   []Rule{{Source: release, Mirrors: []string{"mirror.example.com"}}},
			image:   releaseDig,
			wantErr: &RuleError{},
		},
		{
			name:    "When the image reference is invalid, it should fail with ErrInvalidReference",
			rules:   []Rule{mirrorNS},
			image:   "quay.io/openshift-release-dev/OCP-release@" + digest,
			wantErr: ErrInvalidReference,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustNew(t, tt.rules...)
			got, err := p.Candidates(tt.image)
			if tt.wantErr != nil {
				require.Error(t, err)
				var ruleErr *RuleError
				if errors.As(tt.wantErr, &ruleErr) {
					require.ErrorAs(t, err, &ruleErr)
				} else {
					require.ErrorIs(t, err, tt.wantErr)
				}
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, refs(got))
		})
	}
}

func TestCandidateFields(t *testing.T) {
	p := mustNew(t,
		Rule{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4"}, Origin: "ImageDigestMirrorSet/cluster"},
		Rule{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4", "mirror.example.com/ocp"}, Origin: "ImageDigestMirrorSet/extra"},
	)
	tests := []struct {
		name  string
		image string
		want  []Candidate
	}{
		{
			name:  "When mirrors match, it should mark them, name the source and the origins of each mirror",
			image: releaseDig,
			want: []Candidate{
				{Ref: ecrHost + "/ocp4/ocp-release@" + digest, Mirror: true, Source: "quay.io/openshift-release-dev", Origin: "ImageDigestMirrorSet/cluster, ImageDigestMirrorSet/extra"},
				{Ref: "mirror.example.com/ocp/ocp-release@" + digest, Mirror: true, Source: "quay.io/openshift-release-dev", Origin: "ImageDigestMirrorSet/extra"},
				{Ref: releaseDig, Source: "quay.io/openshift-release-dev", Origin: "ImageDigestMirrorSet/cluster, ImageDigestMirrorSet/extra"},
			},
		},
		{
			name:  "When nothing matches, it should return the normalised image with no source or origin",
			image: "busybox",
			want:  []Candidate{{Ref: "docker.io/library/busybox:latest"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.Candidates(tt.image)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestSourceAllowed(t *testing.T) {
	p := mustNew(t,
		Rule{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4"}, NeverContactSource: true},
		Rule{Source: release, Mirrors: []string{ecrRepo}},
		Rule{Source: "*.example.com", Mirrors: []string{"mirror.local/example"}, NeverContactSource: true},
	)
	tests := []struct {
		name  string
		image string
		want  bool
	}{
		{"When the source has NeverContactSource, it should be false", artDev + "@" + digest, false},
		{"When a more specific source allows contact, it should be true", releaseDig, true},
		{"When no rule matches, it should be true", "registry.redhat.io/ubi9/ubi:latest", true},
		{"When a blocked wildcard matches, it should be false", "registry.example.com/ns/img:1", false},
		{"When the reference is invalid, it should be false", "quay.io//x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, p.SourceAllowed(tt.image))
		})
	}
}

func TestNewRejectsInvalidRules(t *testing.T) {
	tests := []struct {
		name   string
		rule   Rule
		reason string
	}{
		{"When the source has a tag, it should be rejected", Rule{Source: release + ":4.18", Mirrors: []string{ecrRepo}}, "must not contain a tag"},
		{"When the source has a digest, it should be rejected", Rule{Source: releaseDig, Mirrors: []string{ecrRepo}}, "must not contain a digest"},
		{"When a mirror has a tag, it should be rejected", Rule{Source: release, Mirrors: []string{ecrRepo + ":latest"}}, "must not contain a tag"},
		{"When a mirror has a digest, it should be rejected", Rule{Source: release, Mirrors: []string{ecrRepo + "@" + digest}}, "must not contain a digest"},
		{"When a mirror is a wildcard, it should be rejected", Rule{Source: "quay.io", Mirrors: []string{"*.example.com"}}, "wildcard"},
		{"When a wildcard is not a leading *., it should be rejected", Rule{Source: "registry.*.com", Mirrors: []string{"mirror.local"}}, "wildcard"},
		{"When a wildcard source has a path, it should be rejected", Rule{Source: "*.example.com/ns", Mirrors: []string{"mirror.local"}}, "without port, path"},
		{"When a wildcard source has a port, it should be rejected", Rule{Source: "*.example.com:5000", Mirrors: []string{"mirror.local"}}, "without port, path"},
		{"When a wildcard source is a double star, it should be rejected", Rule{Source: "**.example.com", Mirrors: []string{"mirror.local"}}, "wildcard"},
		{"When the source has a URL scheme, it should be rejected", Rule{Source: "https://quay.io", Mirrors: []string{"mirror.local"}}, "URL scheme"},
		{"When a mirror ends with a slash, it should be rejected", Rule{Source: "quay.io", Mirrors: []string{"mirror.local/quay/"}}, "must not end"},
		{"When the source is empty, it should be rejected", Rule{Source: "", Mirrors: []string{"mirror.local"}}, "is empty"},
		{"When the source's first component is not a host, it should be rejected", Rule{Source: "registry/ns", Mirrors: []string{"mirror.local"}}, "registry host"},
		{"When the source has upper case path components, it should be rejected", Rule{Source: "quay.io/OpenShift", Mirrors: []string{"mirror.local"}}, "not a valid"},
		{"When there are no mirrors, it should be rejected", Rule{Source: release}, "no mirrors"},
		{"When the mirrors only repeat the source, it should be rejected", Rule{Source: release, Mirrors: []string{release}}, "only repeat the source"},
		{"When a mirror is listed twice, it should be rejected", Rule{Source: release, Mirrors: []string{ecrRepo, ecrRepo}}, "listed twice"},
		{"When the kind is unknown, it should be rejected", Rule{Source: release, Mirrors: []string{ecrRepo}, Kind: Kind(7)}, "unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.rule.Origin = "ImageDigestMirrorSet/bad"
			valid := Rule{Source: "registry.redhat.io", Mirrors: []string{"mirror.local/redhat"}}
			_, err := New(valid, tt.rule)
			var re *RuleError
			require.ErrorAs(t, err, &re)
			require.Equal(t, "ImageDigestMirrorSet/bad", re.Origin)
			require.Equal(t, tt.rule.Source, re.Source)
			require.Contains(t, re.Reason, tt.reason)
		})
	}

	t.Run("When a rule is invalid, it should say where, which source and why", func(t *testing.T) {
		_, err := New(Rule{Source: release, Mirrors: []string{ecrRepo + ":4.18"}, Origin: "ImageDigestMirrorSet/cluster"})
		require.EqualError(t, err, `mirrorpolicy: ImageDigestMirrorSet/cluster: source "quay.io/openshift-release-dev/ocp-release": mirror "`+ecrRepo+`:4.18" must not contain a tag`)
	})

	t.Run("When a rule has no Origin, it should be named by its index", func(t *testing.T) {
		_, err := New(Rule{Source: "quay.io", Mirrors: []string{"mirror.local"}}, Rule{Source: "quay.io"})
		var re *RuleError
		require.ErrorAs(t, err, &re)
		require.Equal(t, "rules[1]", re.Origin)
	})
}

func TestRules(t *testing.T) {
	rules := []Rule{
		{Source: release, Mirrors: []string{"b.example.com/r", "c.example.com/r"}, Origin: "ImageDigestMirrorSet/one"},
		{Source: release, Mirrors: []string{"a.example.com/r", "b.example.com/r"}, Origin: "ImageDigestMirrorSet/two"},
		{Source: release, Mirrors: []string{"t.example.com/r"}, Kind: TagMirrors, Origin: "ImageTagMirrorSet/tags", NeverContactSource: true},
		{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}, Kind: AllMirrors, Origin: "ECRPullThroughCache/quay"},
		{Source: "*.redhat.io", Mirrors: []string{"mirror.local/redhat"}, Origin: "ImageDigestMirrorSet/wild"},
	}
	p := mustNew(t, rules...)

	t.Run("When rules share a source, it should return them merged and sorted by source", func(t *testing.T) {
		require.Equal(t, []Rule{
			{Source: "*.redhat.io", Mirrors: []string{"mirror.local/redhat"}, Kind: DigestMirrors, Origin: "ImageDigestMirrorSet/wild"},
			{Source: "quay.io", Mirrors: []string{ecrHost + "/quay"}, Kind: AllMirrors, Origin: "ECRPullThroughCache/quay"},
			{
				Source: release, Mirrors: []string{"a.example.com/r", "b.example.com/r", "c.example.com/r"}, Kind: DigestMirrors, NeverContactSource: true,
				Origin: "ImageDigestMirrorSet/one, ImageDigestMirrorSet/two, ImageTagMirrorSet/tags",
			},
			{
				Source: release, Mirrors: []string{"t.example.com/r"}, Kind: TagMirrors, NeverContactSource: true,
				Origin: "ImageDigestMirrorSet/one, ImageDigestMirrorSet/two, ImageTagMirrorSet/tags",
			},
		}, p.Rules())
	})

	t.Run("When the merged rules are fed back to New, it should behave the same", func(t *testing.T) {
		again := mustNew(t, p.Rules()...)
		require.Equal(t, p.Rules(), again.Rules())
		for _, img := range []string{releaseDig, releaseTag, "quay.io/x/y:1", "registry.redhat.io/ubi9/ubi@" + digest} {
			a, aErr := p.Candidates(img)
			b, bErr := again.Candidates(img)
			require.Equal(t, aErr, bErr)
			require.Equal(t, refs(a), refs(b))
		}
	})

	t.Run("When the result is modified, it should not change the policy", func(t *testing.T) {
		got := p.Rules()
		got[1].Mirrors[0] = "evil.example.com"
		require.Equal(t, ecrHost+"/quay", p.Rules()[1].Mirrors[0])
	})

	t.Run("When the caller modifies its rules after New, it should not change the policy", func(t *testing.T) {
		mine := []Rule{{Source: "quay.io", Mirrors: []string{"mirror.local/quay"}}}
		q := mustNew(t, mine...)
		mine[0].Mirrors[0] = "evil.example.com"
		got, err := q.Candidates(releaseDig)
		require.NoError(t, err)
		require.Equal(t, "mirror.local/quay/openshift-release-dev/ocp-release@"+digest, got[0].Ref)
	})

	t.Run("When the rules come in another order, it should merge to the same result", func(t *testing.T) {
		reversed := make([]Rule, len(rules))
		for i, r := range rules {
			reversed[len(rules)-1-i] = r
		}
		got := mustNew(t, reversed...).Rules()
		for i := range got {
			got[i].Origin = ""
		}
		want := p.Rules()
		for i := range want {
			want[i].Origin = ""
		}
		require.Equal(t, want, got)
	})
}

func TestZeroPolicy(t *testing.T) {
	t.Run("When the Policy is the zero value, it should return the image itself", func(t *testing.T) {
		var p Policy
		got, err := p.Candidates(releaseDig)
		require.NoError(t, err)
		require.Equal(t, []string{releaseDig}, refs(got))
		require.True(t, p.SourceAllowed(releaseDig))
		require.Empty(t, p.Rules())
	})
	t.Run("When New gets no rules, it should return the image itself", func(t *testing.T) {
		got, err := mustNew(t).Candidates(releaseDig)
		require.NoError(t, err)
		require.Equal(t, []string{releaseDig}, refs(got))
	})
}

func TestCandidatesConcurrent(t *testing.T) {
	p := mustNew(t, Rule{Source: "quay.io/openshift-release-dev", Mirrors: []string{ecrHost + "/ocp4"}, NeverContactSource: true})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				got, err := p.Candidates(releaseDig)
				if err != nil || len(got) != 1 || got[0].Ref != ecrHost+"/ocp4/ocp-release@"+digest {
					t.Errorf("Candidates = %v, %v", got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
