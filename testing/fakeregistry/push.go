package fakeregistry

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push, PushIndex, Copy and Delete are test setup. They talk to the registry's storage
// in-process, bypassing authentication, fault injection, counters and the request log, so that
// setup neither needs credentials nor perturbs what a test measures. They still speak the
// registry protocol through ggcr's remote package, so what they store is what a real push stores.

// Push stores img under ref, a tag or digest reference on one of r's hosts, and returns the
// digest pullspec "<host>/<repository>@sha256:...". It fails the test on error.
func (r *Registry) Push(t testing.TB, ref string, img v1.Image) string {
	t.Helper()
	n := r.parseRef(t, ref)
	if err := remote.Write(n, img, r.setupOptions(t)...); err != nil {
		t.Fatalf("fakeregistry: pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatalf("fakeregistry: digest of %s: %v", ref, err)
	}
	return n.Context().Digest(d.String()).String()
}

// PushIndex stores the manifest list or OCI index idx (and every image in it) under ref and
// returns its digest pullspec. It fails the test on error.
func (r *Registry) PushIndex(t testing.TB, ref string, idx v1.ImageIndex) string {
	t.Helper()
	n := r.parseRef(t, ref)
	if err := remote.WriteIndex(n, idx, r.setupOptions(t)...); err != nil {
		t.Fatalf("fakeregistry: pushing index %s: %v", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatalf("fakeregistry: digest of %s: %v", ref, err)
	}
	return n.Context().Digest(d.String()).String()
}

// Copy mirrors the image or index src, held by from (r itself when from is nil), to dst on r,
// byte for byte so digests are preserved, as `oc adm release mirror` does. It returns the digest
// pullspec of dst and fails the test on error.
func (r *Registry) Copy(t testing.TB, src, dst string, from *Registry) string {
	t.Helper()
	if from == nil {
		from = r
	}
	srcRef := from.parseRef(t, src)
	dstRef := r.parseRef(t, dst)
	desc, err := remote.Get(srcRef, from.setupOptions(t)...)
	if err != nil {
		t.Fatalf("fakeregistry: reading %s: %v", src, err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err == nil {
			err = remote.WriteIndex(dstRef, idx, r.setupOptions(t)...)
		}
		if err != nil {
			t.Fatalf("fakeregistry: copying index %s to %s: %v", src, dst, err)
		}
	} else {
		img, err := desc.Image()
		if err == nil {
			err = remote.Write(dstRef, img, r.setupOptions(t)...)
		}
		if err != nil {
			t.Fatalf("fakeregistry: copying %s to %s: %v", src, dst, err)
		}
	}
	return dstRef.Context().Digest(desc.Digest.String()).String()
}

// Delete removes the manifest reference ref: a tag reference removes the tag, a digest reference
// the digest (tags pointing at it still resolve). Later requests for it get 404 MANIFEST_UNKNOWN.
// Blobs stay. It fails the test on error.
func (r *Registry) Delete(t testing.TB, ref string) {
	t.Helper()
	if err := remote.Delete(r.parseRef(t, ref), r.setupOptions(t)...); err != nil {
		t.Fatalf("fakeregistry: deleting %s: %v", ref, err)
	}
}

func (r *Registry) parseRef(t testing.TB, ref string) name.Reference {
	t.Helper()
	n, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		t.Fatalf("fakeregistry: %v", err)
	}
	if !r.servesHost(n.Context().RegistryStr()) {
		t.Fatalf("fakeregistry: %s is not on a host of this registry (%v)", ref, r.hosts)
	}
	return n
}

func (r *Registry) setupOptions(t testing.TB) []remote.Option {
	return []remote.Option{
		remote.WithContext(t.Context()),
		remote.WithTransport(inProcess{r.upstream}),
	}
}

// inProcess is a RoundTripper that serves requests with a handler in the same process.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context()) // never hand the caller's request to a server
	if in.Body == nil {
		in.Body = http.NoBody
	}
	defer in.Body.Close()
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
