package registryauth_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

func newBenchKeychain(b *testing.B) *registryauth.Keychain {
	b.Helper()
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(fakeecr.New().ClientFactory))
	require.NoError(b, err)
	b.Cleanup(func() { _ = kc.Close() })
	return kc
}

// BenchmarkCredentialWarm is the hot path HyperShift pays on every registry
// call: target <= 100 ns/op and 0 allocs/op.
func BenchmarkCredentialWarm(b *testing.B) {
	for _, input := range []string{useast1, useast1 + "/ocp4/openshift4:4.18.0-x86_64"} {
		b.Run(input, func(b *testing.B) {
			kc := newBenchKeychain(b)
			ctx := context.Background()
			if _, err := kc.Credential(ctx, input); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := kc.Credential(ctx, input); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCredentialWarmParallel(b *testing.B) {
	kc := newBenchKeychain(b)
	ctx := context.Background()
	if _, err := kc.Credential(ctx, useast1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := kc.Credential(ctx, useast1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestCredentialWarmAllocs(t *testing.T) {
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(fakeecr.New().ClientFactory))
	require.NoError(t, err)
	defer kc.Close()
	ctx := context.Background()
	_, err = kc.Credential(ctx, useast1)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(1000, func() {
		_, _ = kc.Credential(ctx, useast1)
	})
	require.Zero(t, allocs, "a warm lookup must not allocate")
}
