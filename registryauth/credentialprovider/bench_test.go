package credentialprovider_test

import (
	"context"
	"testing"
)

// BenchmarkPluginSourceCached measures the warm path every pull from a
// registry takes after the first: no plugin run, a map read and the
// kubelet's glob matching.
func BenchmarkPluginSourceCached(b *testing.B) {
	p := newTestPlugin(b)
	src := p.source(modeGood, map[string]string{envPassword: "pw-bench", envCacheDuration: "1h"})
	ctx := context.Background()
	if _, err := src.Credential(ctx, imageA); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := src.Credential(ctx, releaseRef); err != nil {
			b.Fatal(err)
		}
	}
}
