package releaseinfo_test

import (
	"testing"

	"github.com/openshift/hypershift-ecr/releaseinfo"
)

// BenchmarkResolveWarm measures a lookup whose probe is cached: policy
// candidates plus one cache read, no prober call.
func BenchmarkResolveWarm(b *testing.B) {
	for _, bc := range []struct {
		name, image, want string
		registry          map[string]string
	}{
		{name: "mirror", image: release4181, want: mirror4181, registry: map[string]string{mirror4181: digest4181}},
		{name: "fallback", image: release4182, want: release4182, registry: map[string]string{release4182: digest4182}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newMemProber(bc.registry)
			r, err := releaseinfo.NewResolver(releasePolicy(b, false), p)
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			if _, err := r.Resolve(ctx, bc.image); err != nil {
				b.Fatal(err)
			}
			probes := p.total.Load()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := r.Resolve(ctx, bc.image)
					if err != nil || res.Pullspec != bc.want {
						b.Errorf("Resolve = %v, %v", res, err)
						return
					}
				}
			})
			if p.total.Load() != probes {
				b.Fatalf("a warm lookup probed: %d probes", p.total.Load()-probes)
			}
		})
	}
}
