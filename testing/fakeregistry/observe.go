package fakeregistry

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Kind classifies a request for counters, the request log and FailNext.
type Kind int

// Request kinds. Registry-side kinds are decided from method and path as in the distribution
// spec; every request to the blob server is KindS3Blob.
const (
	KindPing          Kind = iota // GET /v2/
	KindManifestHead              // HEAD /v2/<name>/manifests/<ref>
	KindManifestGet               // GET /v2/<name>/manifests/<ref>
	KindManifestWrite             // PUT or DELETE /v2/<name>/manifests/<ref>
	KindBlobHead                  // HEAD /v2/<name>/blobs/<digest>, answered by the registry
	KindBlobRedirect              // GET /v2/<name>/blobs/<digest>, answered with 307 to the blob host
	KindBlobUpload                // POST, PATCH, PUT under /v2/<name>/blobs/uploads/
	KindTags                      // GET /v2/<name>/tags/list
	KindOther                     // anything else on the registry (catalog, referrers, unknown)
	KindS3Blob                    // any request to the blob host
	numKinds
)

var kindNames = [numKinds]string{"ping", "manifest-head", "manifest-get", "manifest-write",
	"blob-head", "blob-redirect", "blob-upload", "tags", "other", "s3-blob"}

func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return "unknown"
	}
	return kindNames[k]
}

// classify decides the registry-side Kind of req.
func classify(req *http.Request) Kind {
	p := strings.TrimSuffix(req.URL.Path, "/")
	if p == "/v2" {
		return KindPing
	}
	elem := strings.Split(strings.TrimPrefix(p, "/"), "/")
	n := len(elem)
	if elem[0] != "v2" || n < 4 {
		return KindOther
	}
	switch {
	case elem[n-2] == "manifests":
		switch req.Method {
		case http.MethodHead:
			return KindManifestHead
		case http.MethodGet:
			return KindManifestGet
		default:
			return KindManifestWrite
		}
	case elem[n-2] == "blobs" && elem[n-1] == "uploads", elem[n-3] == "blobs" && elem[n-2] == "uploads":
		return KindBlobUpload
	case elem[n-2] == "blobs":
		switch req.Method {
		case http.MethodHead:
			return KindBlobHead
		case http.MethodGet:
			return KindBlobRedirect
		default:
			return KindOther
		}
	case elem[n-2] == "tags" && elem[n-1] == "list":
		return KindTags
	}
	return KindOther
}

// Stats is a snapshot of a Registry's counters since New or the last Reset.
type Stats struct {
	Ping, ManifestHead, ManifestGet, ManifestWrite int64 // registry requests by kind
	BlobHead, BlobRedirect, BlobUpload, Tags       int64
	Other                                          int64
	S3BlobGet                                      int64 // requests to the blob host
	S3Bytes                                        int64 // blob body bytes the blob host wrote, partial bodies included
	Unauthorized                                   int64 // registry answers with status 401
	S3WithAuthorization                            int64 // blob-host requests carrying an Authorization header (each answered 400)
	S3Forbidden                                    int64 // blob-host answers 403: missing, wrong or expired signature
}

// Request is one entry of the request log. Path has no query: pre-signed URLs stay out of logs.
type Request struct {
	Kind             Kind
	Host             string // virtual host name, without port
	Method           string
	Path             string
	Status           int
	HadAuthorization bool
}

type fault struct {
	remaining int
	status    int
}

// observer holds counters, the request log and armed faults. Counters are atomics so that
// benchmarks with parallel clients do not serialize on them.
type observer struct {
	counts       [numKinds]atomic.Int64
	s3Bytes      atomic.Int64
	unauthorized atomic.Int64
	s3WithAuth   atomic.Int64
	s3Forbidden  atomic.Int64
	mu           sync.Mutex
	log          []Request
	faults       [numKinds][]fault
	cuts         []int64
}

func (o *observer) reset() {
	for i := range o.counts {
		o.counts[i].Store(0)
	}
	o.s3Bytes.Store(0)
	o.unauthorized.Store(0)
	o.s3WithAuth.Store(0)
	o.s3Forbidden.Store(0)
	o.mu.Lock()
	o.log = nil
	o.mu.Unlock()
}

func (o *observer) record(r Request) {
	switch {
	case r.Kind == KindS3Blob && r.Status == http.StatusForbidden:
		o.s3Forbidden.Add(1)
	case r.Kind != KindS3Blob && r.Status == http.StatusUnauthorized:
		o.unauthorized.Add(1)
	}
	o.mu.Lock()
	o.log = append(o.log, r)
	o.mu.Unlock()
}

// takeFault consumes one armed failure for kind, if any.
func (o *observer) takeFault(k Kind) (status int, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.faults[k]
	if len(q) == 0 {
		return 0, false
	}
	status = q[0].status
	if q[0].remaining--; q[0].remaining == 0 {
		o.faults[k] = q[1:]
	}
	return status, true
}

func (o *observer) takeCut() (n int64, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.cuts) == 0 {
		return 0, false
	}
	n = o.cuts[0]
	o.cuts = o.cuts[1:]
	return n, true
}

// Stats returns a snapshot of the counters.
func (r *Registry) Stats() Stats {
	o := &r.obs
	c := func(k Kind) int64 { return o.counts[k].Load() }
	return Stats{
		Ping: c(KindPing), ManifestHead: c(KindManifestHead), ManifestGet: c(KindManifestGet),
		ManifestWrite: c(KindManifestWrite), BlobHead: c(KindBlobHead), BlobRedirect: c(KindBlobRedirect),
		BlobUpload: c(KindBlobUpload), Tags: c(KindTags), Other: c(KindOther), S3BlobGet: c(KindS3Blob),
		S3Bytes:             o.s3Bytes.Load(),
		Unauthorized:        o.unauthorized.Load(),
		S3WithAuthorization: o.s3WithAuth.Load(),
		S3Forbidden:         o.s3Forbidden.Load(),
	}
}

// Requests returns a copy of the request log, oldest first. Requests made by Push, PushIndex,
// Copy and Delete are not in it.
func (r *Registry) Requests() []Request {
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	return append([]Request(nil), r.obs.log...)
}

// Reset zeroes the counters and empties the request log, typically after a test's setup.
// Armed faults stay armed.
func (r *Registry) Reset() { r.obs.reset() }

// FailNext makes the next n requests of kind fail with HTTP status before any authentication,
// as a throttled or failing front end would (429, 500, 503 ...). Registry kinds get a
// distribution-spec JSON error body, KindS3Blob an S3 XML error. Calls queue up in order.
func (r *Registry) FailNext(kind Kind, n, status int) {
	if n <= 0 || kind < 0 || kind >= numKinds {
		return
	}
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	r.obs.faults[kind] = append(r.obs.faults[kind], fault{remaining: n, status: status})
}

// CutBlobAfter makes the next blob-host GET close the connection after n bytes of body, as a
// network failure mid-download would; a client can resume with a Range request. Each call arms
// one cut; cuts are consumed in order.
func (r *Registry) CutBlobAfter(n int64) {
	if n < 0 {
		n = 0
	}
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	r.obs.cuts = append(r.obs.cuts, n)
}

// statusWriter remembers the status code written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's Flusher.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
