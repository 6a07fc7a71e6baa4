package fakeregistry

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// serveRegistry is the ECR front end: fault injection, Basic auth, and blob GETs turned into
// redirects; everything else goes to ggcr's registry.
func (r *Registry) serveRegistry(w http.ResponseWriter, req *http.Request) {
	kind := classify(req)
	r.obs.counts[kind].Add(1)
	sw := &statusWriter{ResponseWriter: w}
	host := hostOnly(req.Host)
	defer func() {
		// Deferred so that an aborted response (panic(http.ErrAbortHandler)) is logged too.
		r.obs.record(Request{Kind: kind, Host: host, Method: req.Method, Path: req.URL.Path,
			Status: sw.status, HadAuthorization: req.Header.Get("Authorization") != ""})
	}()

	if !r.servesHost(host) {
		writeRegistryError(sw, http.StatusMisdirectedRequest, "UNSUPPORTED", "this registry does not serve the requested host")
		return
	}
	if status, ok := r.obs.takeFault(kind); ok {
		writeRegistryError(sw, status, registryErrorCode(status), http.StatusText(status))
		return
	}
	if !r.auth.allowed(req) {
		// ECR's challenge; the realm is the registry URL the client used.
		sw.Header().Set("WWW-Authenticate", fmt.Sprintf(`Basic realm="https://%s/",service="ecr.amazonaws.com"`, host))
		writeRegistryError(sw, http.StatusUnauthorized, "DENIED", "Not Authorized")
		return
	}
	if kind == KindBlobRedirect {
		if loc, ok := r.blobLocation(req, host); ok {
			sw.Header().Set("Location", loc)
			sw.Header().Set("Docker-Distribution-Api-Version", "registry/2.0")
			sw.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		// Unknown or malformed digest: let ggcr answer 400 / 404 BLOB_UNKNOWN.
	}
	r.upstream.ServeHTTP(sw, req)
}

// blobLocation returns the pre-signed blob-host URL for a blob GET, if the blob exists.
func (r *Registry) blobLocation(req *http.Request, host string) (string, bool) {
	elem := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	h, err := v1.NewHash(elem[len(elem)-1])
	if err != nil {
		return "", false
	}
	stat, ok := r.store.(registry.BlobStatHandler)
	if !ok {
		return "", false
	}
	if _, err := stat.Stat(req.Context(), "", h); err != nil {
		return "", false
	}
	repo := strings.Join(elem[1:len(elem)-2], "/")
	// Object key shaped like ECR's: an opaque per-repository prefix, then the object.
	prefix := sha256.Sum256([]byte(host + "/" + repo))
	key := fmt.Sprintf("/%x-%s/%s", prefix[:4], accountOf(host), h.String())
	return r.presign(key), true
}

func accountOf(host string) string {
	if a, _, ok := strings.Cut(host, "."); ok && len(a) == 12 && strings.Trim(a, "0123456789") == "" {
		return a
	}
	return "000000000000"
}

const amzDateFormat = "20060102T150405Z"

// presign returns an https URL on the blob host whose query looks like a SigV4 pre-signed URL.
// The signature is an HMAC, with a key private to this Registry, over key, date and expiry.
func (r *Registry) presign(key string) string {
	date := r.clock.Now().UTC().Format(amzDateFormat)
	expires := strconv.Itoa(int(r.presignTT / time.Second))
	q := url.Values{}
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", "ASIAFAKEREGISTRY0000/"+date[:8]+"/us-east-1/s3/aws4_request")
	q.Set("X-Amz-Date", date)
	q.Set("X-Amz-Expires", expires)
	q.Set("X-Amz-SignedHeaders", "host")
	q.Set("X-Amz-Signature", r.sign(key, date, expires))
	u := url.URL{Scheme: "https", Host: r.blobHost, Path: key, RawQuery: q.Encode()}
	return u.String()
}

func (r *Registry) sign(key, date, expires string) string {
	m := hmac.New(sha256.New, r.signKey)
	fmt.Fprintf(m, "%s\n%s\n%s", key, date, expires)
	return hex.EncodeToString(m.Sum(nil))
}

// serveS3 is the blob host: pre-signed GETs only, Range supported, Authorization refused.
func (r *Registry) serveS3(w http.ResponseWriter, req *http.Request) {
	r.obs.counts[KindS3Blob].Add(1)
	sw := &statusWriter{ResponseWriter: w}
	hadAuth := req.Header.Get("Authorization") != ""
	defer func() {
		r.obs.record(Request{Kind: KindS3Blob, Host: hostOnly(req.Host), Method: req.Method,
			Path: req.URL.Path, Status: sw.status, HadAuthorization: hadAuth})
	}()

	if hostOnly(req.Host) != r.blobHost {
		writeS3Error(sw, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return
	}
	if hadAuth {
		// What S3 answers when a client forwards the registry's Authorization header along a
		// pre-signed redirect. The header's value is never echoed.
		r.obs.s3WithAuth.Add(1)
		writeS3Error(sw, http.StatusBadRequest, "InvalidArgument",
			"Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified")
		return
	}
	if status, ok := r.obs.takeFault(KindS3Blob); ok {
		writeS3Error(sw, status, s3ErrorCode(status), http.StatusText(status))
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		writeS3Error(sw, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
		return
	}
	q := req.URL.Query()
	sig, date, expires := q.Get("X-Amz-Signature"), q.Get("X-Amz-Date"), q.Get("X-Amz-Expires")
	if sig == "" {
		writeS3Error(sw, http.StatusForbidden, "AccessDenied", "Access Denied")
		return
	}
	if !hmac.Equal([]byte(sig), []byte(r.sign(req.URL.Path, date, expires))) {
		writeS3Error(sw, http.StatusForbidden, "SignatureDoesNotMatch",
			"The request signature we calculated does not match the signature you provided.")
		return
	}
	signed, err1 := time.Parse(amzDateFormat, date)
	secs, err2 := strconv.Atoi(expires)
	if err1 != nil || err2 != nil || r.clock.Now().After(signed.Add(time.Duration(secs)*time.Second)) {
		writeS3Error(sw, http.StatusForbidden, "AccessDenied", "Request has expired")
		return
	}

	h, err := v1.NewHash(path.Base(req.URL.Path))
	if err != nil {
		writeS3Error(sw, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	rc, err := r.store.Get(req.Context(), "", h)
	if err != nil {
		writeS3Error(sw, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	defer rc.Close()
	content, ok := rc.(io.ReadSeeker)
	if !ok {
		b, err := io.ReadAll(rc)
		if err != nil {
			writeS3Error(sw, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
			return
		}
		content = bytes.NewReader(b)
	}

	sw.Header().Set("Content-Type", "application/octet-stream")
	sw.Header().Set("ETag", `"`+h.Hex[:32]+`"`)
	cw := &countingWriter{ResponseWriter: sw, counter: &r.obs.s3Bytes, limit: -1}
	if req.Method == http.MethodGet {
		if n, ok := r.obs.takeCut(); ok {
			cw.limit = n
		}
	}
	// ServeContent handles Range, If-Range and HEAD, which is what lets a client resume.
	http.ServeContent(cw, req, "", time.Time{}, content)
}

// countingWriter counts body bytes and, when limit >= 0, aborts the connection after limit bytes.
type countingWriter struct {
	http.ResponseWriter
	counter *atomic.Int64
	limit   int64 // -1: no cut
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.limit < 0 {
		n, err := w.ResponseWriter.Write(p)
		w.counter.Add(int64(n))
		return n, err
	}
	cut := int64(len(p)) > w.limit
	if cut {
		p = p[:w.limit]
	}
	n, err := w.ResponseWriter.Write(p)
	w.counter.Add(int64(n))
	w.limit -= int64(n)
	if cut || err != nil {
		// Push out what was written, then drop the connection mid-body; net/http treats
		// ErrAbortHandler as a silent abort.
		_ = http.NewResponseController(w.ResponseWriter).Flush()
		panic(http.ErrAbortHandler)
	}
	return n, nil
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func writeRegistryError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Docker-Distribution-Api-Version", "registry/2.0")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func registryErrorCode(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "DENIED"
	case http.StatusForbidden:
		return "DENIED"
	case http.StatusNotFound:
		return "MANIFEST_UNKNOWN"
	case http.StatusTooManyRequests:
		return "TOOMANYREQUESTS"
	default:
		return "UNKNOWN"
	}
}

func writeS3Error(w http.ResponseWriter, status int, code, msg string) {
	body := fmt.Sprintf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message><RequestId>FAKEREGISTRY0000</RequestId></Error>", code, msg)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func s3ErrorCode(status int) string {
	switch status {
	case http.StatusForbidden:
		return "AccessDenied"
	case http.StatusNotFound:
		return "NoSuchKey"
	case http.StatusServiceUnavailable:
		return "SlowDown"
	case http.StatusInternalServerError:
		return "InternalError"
	default:
		return "InvalidRequest"
	}
}
