package fakeregistry

import (
	"context"
	"fmt"
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
	out, err := r.PushImage(t.Context(), ref, img)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// PushImage is Push for programs that are not tests: it returns an error instead of failing a
// test.
func (r *Registry) PushImage(ctx context.Context, ref string, img v1.Image) (string, error) {
	n, err := r.parseRef(ref)
	if err != nil {
		return "", err
	}
	if err := remote.Write(n, img, r.setupOptions(ctx)...); err != nil {
		return "", fmt.Errorf("fakeregistry: pushing %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("fakeregistry: digest of %s: %w", ref, err)
	}
	return n.Context().Digest(d.String()).String(), nil
}

// PushIndex stores the manifest list or OCI index idx (and every image in it) under ref and
// returns its digest pullspec. It fails the test on error.
func (r *Registry) PushIndex(t testing.TB, ref string, idx v1.ImageIndex) string {
	t.Helper()
	out, err := r.PushImageIndex(t.Context(), ref, idx)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// PushImageIndex is PushIndex for programs that are not tests: it returns an error instead of
// failing a test.
func (r *Registry) PushImageIndex(ctx context.Context, ref string, idx v1.ImageIndex) (string, error) {
	n, err := r.parseRef(ref)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(n, idx, r.setupOptions(ctx)...); err != nil {
		return "", fmt.Errorf("fakeregistry: pushing index %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", fmt.Errorf("fakeregistry: digest of %s: %w", ref, err)
	}
	return n.Context().Digest(d.String()).String(), nil
}

// Copy mirrors the image or index src, held by from (r itself when from is nil), to dst on r,
// byte for byte so digests are preserved, as `oc adm release mirror` does. It returns the digest
// pullspec of dst and fails the test on error.
func (r *Registry) Copy(t testing.TB, src, dst string, from *Registry) string {
	t.Helper()
	out, err := r.CopyImage(t.Context(), src, dst, from)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// CopyImage is Copy for programs that are not tests: it returns an error instead of failing a
// test.
func (r *Registry) CopyImage(ctx context.Context, src, dst string, from *Registry) (string, error) {
	if from == nil {
		from = r
	}
	srcRef, err := from.parseRef(src)
	if err != nil {
		return "", err
	}
	dstRef, err := r.parseRef(dst)
	if err != nil {
		return "", err
	}
	desc, err := remote.Get(srcRef, from.setupOptions(ctx)...)
	if err != nil {
		return "", fmt.Errorf("fakeregistry: reading %s: %w", src, err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err == nil {
			err = remote.WriteIndex(dstRef, idx, r.setupOptions(ctx)...)
		}
		if err != nil {
			return "", fmt.Errorf("fakeregistry: copying index %s to %s: %w", src, dst, err)
		}
	} else {
		img, err := desc.Image()
		if err == nil {
			err = remote.Write(dstRef, img, r.setupOptions(ctx)...)
		}
		if err != nil {
			return "", fmt.Errorf("fakeregistry: copying %s to %s: %w", src, dst, err)
		}
	}
	return dstRef.Context().Digest(desc.Digest.String()).String(), nil
}

// Delete removes the manifest reference ref: a tag reference removes the tag, a digest reference
// the digest (tags pointing at it still resolve). Later requests for it get 404 MANIFEST_UNKNOWN.
// Blobs stay. It fails the test on error.
func (r *Registry) Delete(t testing.TB, ref string) {
	t.Helper()
	n, err := r.parseRef(ref)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := remote.Delete(n, r.setupOptions(t.Context())...); err != nil {
		t.Fatalf("fakeregistry: deleting %s: %v", ref, err)
	}
}

func (r *Registry) parseRef(ref string) (name.Reference, error) {
	n, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return nil, fmt.Errorf("fakeregistry: %w", err)
	}
	if !r.servesHost(n.Context().RegistryStr()) {
		return nil, fmt.Errorf("fakeregistry: %s is not on a host of this registry (%v)", ref, r.hosts)
	}
	return n, nil
}

func (r *Registry) setupOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
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
