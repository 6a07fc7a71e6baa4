package remote

import (
	"io"
	"net/http"
	"sync/atomic"
)

// counter holds one lookup's network counters. A Reader is shared by
// concurrent lookups, so each lookup wraps the base transport with its own.
type counter struct {
	roundTrips atomic.Int64
	bytes      atomic.Int64
}

// countingTransport counts every request that reaches the base transport
// (pings, retries and both legs of a blob redirect included) and every
// response body byte the reader consumes. It sits under go-containerregistry's
// authentication and retry transports, so it sees what goes on the wire.
type countingTransport struct {
	base http.RoundTripper
	c    *counter
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.roundTrips.Add(1)
	resp, err := t.base.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.c.bytes}
	}
	return resp, err
}

// countingBody counts the bytes read from a response body: for a layer
// abandoned half way, only what was read, not the size it advertised.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
