package mirrorpolicy

import (
	"fmt"
	"testing"
)

// benchRules returns n rules in a realistic mix: most on a few large
// registries at namespace and repository level, some on their own hosts,
// some wildcards; one of them is the release repository the benchmark
// pulls, so every lookup walks quay.io's path boundaries.
func benchRules(n int) []Rule {
	rules := []Rule{{Source: release, Mirrors: []string{ecrRepo, "mirror.example.com/ocp-release"}, Origin: "ImageDigestMirrorSet/cluster"}}
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
		rules = append(rules, Rule{Source: src, Mirrors: []string{fmt.Sprintf("mirror%d.example.com/m", i)}})
	}
	return rules
}

func BenchmarkCandidates(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			p := mustNew(b, benchRules(n)...)
			b.ReportAllocs()
			for b.Loop() {
				c, err := p.Candidates(releaseDig)
				if err != nil || len(c) != 3 {
					b.Fatalf("Candidates = %v, %v", c, err)
				}
			}
		})
	}
}
