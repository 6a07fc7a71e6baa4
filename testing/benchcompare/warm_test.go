package benchcompare

import (
	"context"
	"io"
	"testing"

	awsecr "github.com/aws/aws-sdk-go-v2/service/ecr"
	ecrlogin "github.com/awslabs/amazon-ecr-credential-helper/ecr-login"
	ecrloginapi "github.com/awslabs/amazon-ecr-credential-helper/ecr-login/api"

	"github.com/openshift/hypershift-ecr/registryauth"
)

const warmRegion = "us-east-1"

var warmHost = registryHost(defaultAccount, warmRegion)

// warmContenders are the ways to get a credential for a registry that was
// looked up before. Each setup runs outside the timer and returns one lookup.
var warmContenders = []struct {
	name  string
	setup func(b *testing.B) (lookup func() error)
}{
	// Ours: the keychain HyperShift keeps for the life of the process.
	{"ours", func(b *testing.B) func() error {
		kc := newKeychain(b)
		ctx := context.Background()
		return func() error {
			_, err := kc.Credential(ctx, warmHost)
			return err
		}
	}},
	// ecr-login's Go API as docker and ggcr's helper adapter use it: every
	// Get loads a new SDK config and client, then reads the file cache.
	{"ecr-login", func(b *testing.B) func() error {
		b.Setenv("AWS_ECR_CACHE_DIR", b.TempDir())
		h := ecrlogin.NewECRHelper(ecrlogin.WithLogger(io.Discard))
		return func() error {
			_, _, err := h.Get(warmHost)
			return err
		}
	}},
	// ecr-login at its most favourable: one API client kept across calls,
	// so a lookup is only its file cache read (open, read, JSON decode).
	{"ecr-login-client", func(b *testing.B) func() error {
		b.Setenv("AWS_ECR_CACHE_DIR", b.TempDir())
		c := ecrloginapi.DefaultClientFactory{}.NewClientFromRegion(warmRegion)
		return func() error {
			_, err := c.GetCredentials(warmHost)
			return err
		}
	}},
	// No cache: one GetAuthorizationToken per lookup through a reused SDK
	// client, the floor for anything that calls the API every time.
	{"sdk-nocache", func(b *testing.B) func() error {
		cfg := awsConfig(b)
		cfg.Region = warmRegion
		c := awsecr.NewFromConfig(cfg)
		ctx := context.Background()
		return func() error {
			_, err := c.GetAuthorizationToken(ctx, &awsecr.GetAuthorizationTokenInput{})
			return err
		}
	}},
}

// newKeychain returns a keychain on the SDK configuration of the
// environment (AWS_ENDPOINT_URL_ECR points at the fake).
func newKeychain(tb testing.TB) *registryauth.Keychain {
	tb.Helper()
	kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(awsConfig(tb)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = kc.Close() })
	return kc
}

// BenchmarkWarmLookup is the cost of one credential lookup for a registry
// whose token is already cached, which is every lookup but one per region
// and half token life.
func BenchmarkWarmLookup(b *testing.B) {
	for _, c := range warmContenders {
		b.Run("impl="+c.name, func(b *testing.B) { benchWarm(b, c.name, c.setup) })
	}
}

func benchWarm(b *testing.B, name string, setup func(*testing.B) func() error) {
	lookup := setup(b)
	if err := lookup(); err != nil { // fill the cache
		b.Fatal(err)
	}
	before := fakeAPI.TotalCalls()
	b.ReportAllocs()
	for b.Loop() {
		if err := lookup(); err != nil {
			b.Fatal(err)
		}
	}
	calls := fakeAPI.TotalCalls() - before
	// A cached contender that called the API would not be measuring its cache.
	if name != "sdk-nocache" && calls != 0 {
		b.Fatalf("%s made %d API calls in warm lookups", name, calls)
	}
	b.ReportMetric(float64(calls)/float64(b.N), "apicalls/op")
}
