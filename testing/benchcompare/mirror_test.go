package benchcompare

import (
	"fmt"
	"testing"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

const (
	mirrorRelease   = "quay.io/openshift-release-dev/ocp-release"
	mirrorReleaseAt = mirrorRelease + "@sha256:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f809"
	mirrorECRRepo   = "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"
)

// mirrorRuleCounts are the policy sizes measured: a cluster has a handful of
// IDMS entries, a fleet-wide policy thousands.
var mirrorRuleCounts = []int{10, 100, 1000, 10000}

// mirrorRules returns n rules in a realistic mix: most on quay.io at
// namespace and repository level, some on their own hosts, some wildcards;
// one is the release repository looked up, so every lookup walks quay.io's
// path boundaries.
func mirrorRules(n int) []mirrorpolicy.Rule {
	rules := []mirrorpolicy.Rule{{Source: mirrorRelease, Mirrors: []string{mirrorECRRepo, "mirror.example.com/ocp-release"}, Origin: "ImageDigestMirrorSet/cluster"}}
	for i := 1; i < n; i++ {
		var src string
		switch i % 4 {
		case 0:
			src = fmt.Sprintf("quay.io/org%d", i)
		case 1:
			src = fmt.Sprintf("quay.io/openshift-release-dev/repo%d", i)
		case 2:
			src = fmt.Sprintf("registry%d.example.net/ns", i)
		default:
			src = fmt.Sprintf("*.sub%d.example.org", i)
		}
		rules = append(rules, mirrorpolicy.Rule{Source: src, Mirrors: []string{fmt.Sprintf("mirror%d.example.com/m", i)}})
	}
	return rules
}

// BenchmarkMirrorCandidates is the cost of choosing where to pull a release
// from, as the policy grows.
func BenchmarkMirrorCandidates(b *testing.B) {
	for _, n := range mirrorRuleCounts {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			p, err := mirrorpolicy.New(mirrorRules(n)...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				c, err := p.Candidates(mirrorReleaseAt)
				if err != nil || len(c) != 3 { // ECR, the other mirror, the source
					b.Fatalf("Candidates = %v, %v", c, err)
				}
			}
		})
	}
}
