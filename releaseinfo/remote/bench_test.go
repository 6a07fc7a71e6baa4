package remote_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// BenchmarkLookup reads a release whose metadata sits in its last layer, over 7 MiB of base
// layers, from the in-process ECR-like registry (TLS, Basic auth, blobs by redirect), and
// compares with a naive reader that fetches the whole image as a puller would.
func BenchmarkLookup(b *testing.B) {
	p := build(b, releasepayload.WithBaseLayers(4<<20, 2<<20, 1<<20))
	reg := fakeregistry.New(b)
	push(b, reg, releaseTag, p)

	b.Run("metadata-reader", func(b *testing.B) {
		r := newReader(b, reg)
		var bytes, trips, n int64
		for b.Loop() {
			rel, err := r.Lookup(b.Context(), releaseTag)
			if err != nil {
				b.Fatal(err)
			}
			bytes += rel.Stats.BytesRead
			trips += int64(rel.Stats.RoundTrips)
			n++
		}
		b.ReportMetric(float64(bytes)/float64(n), "bytes/lookup")
		b.ReportMetric(float64(trips)/float64(n), "roundtrips/lookup")
	})

	b.Run("naive-full-read", func(b *testing.B) {
		ct := &benchCounter{base: reg.Transport()}
		ref, err := name.ParseReference(releaseTag)
		require.NoError(b, err)
		var n int64
		for b.Loop() {
			img, err := ggcrremote.Image(ref, ggcrremote.WithContext(b.Context()),
				ggcrremote.WithAuth(reg.Auth()), ggcrremote.WithTransport(ct))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := img.RawConfigFile(); err != nil {
				b.Fatal(err)
			}
			layers, err := img.Layers()
			if err != nil {
				b.Fatal(err)
			}
			for _, l := range layers { // what an extractor that reads every layer does
				rc, err := l.Compressed()
				if err != nil {
					b.Fatal(err)
				}
				_, err = io.Copy(io.Discard, rc)
				_ = rc.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
			n++
		}
		b.ReportMetric(float64(ct.bytes.Load())/float64(n), "bytes/lookup")
		b.ReportMetric(float64(ct.trips.Load())/float64(n), "roundtrips/lookup")
	})
}

// benchCounter counts requests and response body bytes for the naive reader.
type benchCounter struct {
	base         http.RoundTripper
	trips, bytes atomic.Int64
}

func (c *benchCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.trips.Add(1)
	resp, err := c.base.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &benchBody{ReadCloser: resp.Body, n: &c.bytes}
	}
	return resp, err
}

type benchBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *benchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
