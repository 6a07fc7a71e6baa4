package benchcompare

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// releaseBaseLayers are the filler layers under the release metadata, first
// to last: 7 MiB of incompressible bytes standing in for the OS and the
// cluster-version-operator binary (hundreds of MiB in a real payload, so the
// measured ratio understates the real one).
var releaseBaseLayers = []int64{4 << 20, 2 << 20, 1 << 20}

const releaseTag = fakeregistry.DefaultHost + "/ocp4/openshift4:4.10.3-x86_64"

// releaseCost is what one lookup cost on the network, by the reader's own
// count (bytes, round trips) and by the registry's (S3 bytes served).
type releaseCost struct {
	bytes, roundTrips, s3Bytes int64
}

// releaseReader reads one release and returns what it cost.
type releaseReader func(ctx context.Context) (releaseCost, error)

// newReleaseRegistry starts an ECR-like registry holding a multi-layer
// release payload with its metadata in the last layer.
func newReleaseRegistry(tb testing.TB) *fakeregistry.Registry {
	tb.Helper()
	p, err := releasepayload.Build(releasepayload.WithBaseLayers(releaseBaseLayers...))
	if err != nil {
		tb.Fatal(err)
	}
	reg := fakeregistry.New(tb)
	reg.Push(tb, releaseTag, p.Image)
	return reg
}

// releaseReaders are the contenders, each over its own transport to the
// registry (TLS, Basic auth, blobs by redirect to the S3-like host), kept
// across lookups so that both reuse their connections.
func releaseReaders(tb testing.TB, reg *fakeregistry.Registry) []struct {
	name string
	read releaseReader
} {
	tb.Helper()
	ours, err := remote.NewReader(remote.WithTransport(reg.Transport()),
		remote.WithKeychain(hostKeychain{reg.Host(): reg.Auth()}))
	if err != nil {
		tb.Fatal(err)
	}
	naiveTransport := reg.Transport()
	s3 := func(read func(ctx context.Context) (releaseCost, error)) releaseReader {
		return func(ctx context.Context) (releaseCost, error) {
			reg.Reset()
			c, err := read(ctx)
			c.s3Bytes = reg.Stats().S3Bytes
			return c, err
		}
	}
	return []struct {
		name string
		read releaseReader
	}{
		// Ours: last layer first, stop once both files are found.
		{"ours", s3(func(ctx context.Context) (releaseCost, error) {
			rel, err := ours.Lookup(ctx, releaseTag)
			if err != nil {
				return releaseCost{}, err
			}
			return releaseCost{bytes: rel.Stats.BytesRead, roundTrips: int64(rel.Stats.RoundTrips)}, nil
		})},
		// Naive: what `oc image extract` or an export does, every layer read.
		{"naive-full-read", s3(func(ctx context.Context) (releaseCost, error) {
			return naiveRead(ctx, naiveTransport, reg.Auth())
		})},
	}
}

// naiveRead fetches the manifest, the config and every layer of the release.
func naiveRead(ctx context.Context, tr http.RoundTripper, auth authn.Authenticator) (releaseCost, error) {
	ref, err := name.ParseReference(releaseTag)
	if err != nil {
		return releaseCost{}, err
	}
	ct := &countingTransport{base: tr}
	img, err := ggcrremote.Image(ref, ggcrremote.WithContext(ctx),
		ggcrremote.WithAuth(auth), ggcrremote.WithTransport(ct))
	if err != nil {
		return releaseCost{}, err
	}
	if _, err := img.RawConfigFile(); err != nil {
		return releaseCost{}, err
	}
	layers, err := img.Layers()
	if err != nil {
		return releaseCost{}, err
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return releaseCost{}, err
		}
		_, err = io.Copy(io.Discard, rc)
		_ = rc.Close()
		if err != nil {
			return releaseCost{}, err
		}
	}
	return releaseCost{bytes: ct.bytes.Load(), roundTrips: ct.trips.Load()}, nil
}

// BenchmarkReleaseLookup reads a release's metadata (image-references and
// the boot images) from an ECR-like registry.
func BenchmarkReleaseLookup(b *testing.B) {
	reg := newReleaseRegistry(b)
	for _, r := range releaseReaders(b, reg) {
		b.Run("impl="+r.name, func(b *testing.B) {
			var total releaseCost
			for b.Loop() {
				c, err := r.read(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				total.bytes += c.bytes
				total.roundTrips += c.roundTrips
				total.s3Bytes += c.s3Bytes
			}
			n := float64(b.N)
			b.ReportMetric(float64(total.bytes)/n, "bytesread/op")
			b.ReportMetric(float64(total.roundTrips)/n, "roundtrips/op")
			b.ReportMetric(float64(total.s3Bytes)/n, "s3bytes/op")
		})
	}
}

// hostKeychain hands each registry host its authenticator, anonymous
// elsewhere.
type hostKeychain map[string]authn.Authenticator

func (k hostKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if a, ok := k[r.RegistryStr()]; ok {
		return a, nil
	}
	return authn.Anonymous, nil
}

// countingTransport counts the naive reader's requests and the response
// body bytes it consumed, as ReadStats does for ours.
type countingTransport struct {
	base         http.RoundTripper
	trips, bytes atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.trips.Add(1)
	resp, err := c.base.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
