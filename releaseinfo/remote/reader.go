package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	imagev1 "github.com/openshift/api/image/v1"
)

// Release is the metadata of one OpenShift release image.
type Release struct {
	// ImageStream is release-manifests/image-references as published in the
	// release, unmodified: one tag per component, from.name its pullspec.
	ImageStream *imagev1.ImageStream
	// StreamMetadata is the CoreOS stream of the boot images ConfigMap's
	// data.stream (the rhel-9 stream on 5.0 payloads). It is nil only when
	// the ConfigMap has no data.stream but a non-empty data.streams.
	StreamMetadata *stream.Stream
	// OSStreams is the ConfigMap's data.streams, present from OpenShift 5.0:
	// OS stream name ("rhel-9", "rhel-10") -> CoreOS stream, no entry nil.
	// Nil when the payload has no data.streams (before 5.0) or it is empty.
	OSStreams map[string]*stream.Stream
	// Pullspec is what was read, pinned by digest:
	// "<registry>/<repository>@sha256:...", in the repository the resolver
	// chose (WithResolver), e.g.
	// 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:....
	// For a manifest list it is the digest of the list, not of the image
	// chosen for the platform, as HyperShift pins release images.
	Pullspec string
	// ComponentImages maps each ImageStream tag with a DockerImage source to
	// its pullspec: the first candidate of the component policy
	// (WithComponentPolicy) when one is set, else from.name as is.
	ComponentImages map[string]string
	// Stats says what this lookup cost on the network.
	Stats ReadStats
}

// ReadStats counts one lookup's network work.
type ReadStats struct {
	// BytesRead is the number of HTTP response body bytes the lookup
	// consumed: manifests, error bodies and layer blobs as sent (compressed).
	// Bytes of a layer abandoned half way count only as far as they were read.
	BytesRead int64
	// LayersRead is the number of layers opened, last layer first.
	LayersRead int
	// RoundTrips is the number of HTTP requests sent: the /v2/ ping, manifest
	// GETs, and for each layer the registry GET plus the GET that follows
	// its redirect to the blob host; retries count.
	RoundTrips int
}

// Reader reads release metadata from release images over the registry API.
// It is immutable and safe for concurrent use. Make one with NewReader.
type Reader struct {
	o options
}

// NewReader returns a Reader configured by opts; it fails on an invalid option.
func NewReader(opts ...Option) (*Reader, error) {
	o, err := makeOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Reader{o: *o}, nil
}

// Lookup reads the release metadata of image, a pullspec by tag or digest,
// with the Reader's keychain. When the registry rejects the keychain's
// credential (HTTP 401) and a CredentialRefresher is set, the credential
// is dropped, fetched anew and the lookup retried once. Errors are *Error.
func (r *Reader) Lookup(ctx context.Context, image string) (*Release, error) {
	return r.lookup(ctx, image, r.o.keychain, r.o.refresher)
}

// LookupWithPullSecret is Lookup with credentials from pullSecret, a
// dockerconfigjson document ({"auths": {...}}), instead of the Reader's
// keychain: the shape of HyperShift's releaseinfo.Provider.Lookup, for use
// behind its decorators. The same bytes serve the resolved mirror and every
// other host the lookup contacts, so they must already hold credentials for
// all of them (an ECR entry added by registryauth's Augment, for example).
// Empty pullSecret reads anonymously. A malformed one fails with an error
// matching dockerconfig.ErrMalformed that quotes none of it. A rejected
// credential is not retried: the caller owns the bytes (releaseinfo's
// Decorator refreshes them).
func (r *Reader) LookupWithPullSecret(ctx context.Context, image string, pullSecret []byte) (*Release, error) {
	kc, err := newPullSecretKeychain(pullSecret)
	if err != nil {
		return nil, &Error{Image: image, Op: "parse pull secret for", Err: err}
	}
	return r.lookup(ctx, image, kc, nil)
}

func (r *Reader) lookup(ctx context.Context, image string, kc authn.Keychain, refresher CredentialRefresher) (*Release, error) {
	pullspec := image
	if r.o.resolve != nil {
		p, err := r.o.resolve(ctx, image)
		if err == nil && p == "" {
			err = errors.New("resolver returned an empty pullspec")
		}
		if err != nil {
			return nil, &Error{Image: image, Op: "resolve", Err: err}
		}
		pullspec = p
	}
	c := &counter{} // per lookup, retry included: the Reader is shared
	rel, err := r.read(ctx, image, pullspec, kc, c)
	if err == nil || refresher == nil {
		return rel, err
	}
	// A token revoked before its expiry (or rotated away) is still valid
	// in the keychain's eyes: drop it, fetch a new one, try once more.
	host, ok := rejectedCredential(ctx, err, kc)
	if !ok {
		return nil, err
	}
	logr.FromContextOrDiscard(ctx).V(1).Info("Registry rejected a cached credential; fetching a new one and retrying once",
		"registry", host, "image", image)
	refresher.Forget(host)
	rel, err = r.read(ctx, image, pullspec, kc, c)
	if err == nil {
		return rel, nil
	}
	var e *Error
	if _, again := rejectedCredential(ctx, err, kc); again && errors.As(err, &e) {
		e.Err = fmt.Errorf("%w: %w", ErrCredentialsRejected, e.Err)
		e.Hint = "the registry " + host + " refused a credential fetched just now; on ECR, check that the identity may " +
			"read the repository (ecr:BatchGetImage, ecr:GetDownloadUrlForLayer) and the repository policy"
	}
	return nil, err
}

// rejectedCredential reports whether err is a registry's 401 to a request
// for which kc had a credential, and that registry's host. A 401 to an
// anonymous request is not a stale credential.
func rejectedCredential(ctx context.Context, err error, kc authn.Keychain) (string, bool) {
	var te *transport.Error
	if !errors.As(err, &te) || te.StatusCode != http.StatusUnauthorized || te.Request == nil || te.Request.URL == nil {
		return "", false
	}
	host := te.Request.URL.Host
	reg, perr := name.NewRegistry(host)
	if perr != nil {
		return "", false
	}
	auth, aerr := authn.Resolve(ctx, kc, reg)
	if aerr != nil || auth == authn.Anonymous {
		return "", false
	}
	return host, true
}

// read is one attempt at reading pullspec; c accumulates across attempts.
func (r *Reader) read(ctx context.Context, image, pullspec string, kc authn.Keychain, c *counter) (*Release, error) {
	fail := func(op, file string, err error) *Error {
		return &Error{Image: image, Pullspec: pullspec, Op: op, File: file, Err: redact(err)}
	}
	ref, err := name.ParseReference(pullspec)
	if err != nil {
		return nil, fail("parse reference", "", err)
	}

	desc, err := ggcrremote.Get(ref,
		ggcrremote.WithContext(ctx),
		ggcrremote.WithAuthFromKeychain(kc),
		ggcrremote.WithTransport(&countingTransport{base: r.o.transport, c: c}),
		ggcrremote.WithPlatform(r.o.platform),
	)
	if err != nil {
		return nil, fail("fetch manifest", "", err)
	}
	pullspec = ref.Context().Digest(desc.Digest.String()).Name()

	img, err := r.platformImage(desc)
	if err != nil {
		return nil, fail("select image of", "", err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fail("read manifest of", "", err)
	}

	x := newExtraction(r.o.maxFile, r.o.maxScan)
	if err := x.scan(img, m.Layers); err != nil {
		var le *layerError
		if !errors.As(err, &le) {
			return nil, fail("read layers of", "", err)
		}
		if le.file != "" { // a limit hit by one release file
			return nil, fail("read", le.file, fmt.Errorf("layer %s: %w", le.digest, le.err))
		}
		e := fail("read layer "+le.digest.String()+" of", "", le.err)
		e.Hint = blobHint(le.err, ref.Context().RegistryStr())
		return nil, e
	}
	var missing []error
	for _, f := range x.missing() {
		missing = append(missing, fail("find", f, ErrReleaseMetadataMissing))
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}

	is, err := parseImageReferences(x.files[ImageReferencesPath])
	if err != nil {
		return nil, fail("parse", ImageReferencesPath, err)
	}
	st, streams, err := parseBootImages(x.files[BootImagesPath])
	if err != nil {
		return nil, fail("parse", BootImagesPath, err)
	}
	components, err := r.components(is)
	if err != nil {
		return nil, fail("rewrite components of", "", err)
	}

	rel := &Release{
		ImageStream:     is,
		StreamMetadata:  st,
		OSStreams:       streams,
		Pullspec:        pullspec,
		ComponentImages: components,
		Stats:           ReadStats{BytesRead: c.bytes.Load(), LayersRead: x.layers, RoundTrips: int(c.roundTrips.Load())},
	}
	logr.FromContextOrDiscard(ctx).V(4).Info("Read release metadata", "image", image, "pullspec", pullspec,
		"layers", rel.Stats.LayersRead, "bytes", rel.Stats.BytesRead, "roundTrips", rel.Stats.RoundTrips)
	return rel, nil
}

// platformImage returns desc itself when it is an image, or the image of the
// Reader's platform when it is a manifest list or OCI index.
func (r *Reader) platformImage(desc *ggcrremote.Descriptor) (v1.Image, error) {
	if !desc.MediaType.IsIndex() {
		return desc.Image()
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, child := range im.Manifests {
		p := v1.Platform{OS: "linux", Architecture: "amd64"} // what a child without platform means
		if child.Platform != nil {
			p = *child.Platform
		}
		if p.Satisfies(r.o.platform) {
			return idx.Image(child.Digest)
		}
		have = append(have, p.String())
	}
	return nil, fmt.Errorf("%w: want %s, list has [%s]", ErrPlatformNotFound, r.o.platform.String(), strings.Join(have, " "))
}

// components maps tag name -> pullspec, rewritten by the component policy.
// A component the policy cannot place (a reference that does not parse, or
// one whose every candidate is blocked) fails the lookup rather than leaving
// a pullspec the nodes would refuse.
func (r *Reader) components(is *imagev1.ImageStream) (map[string]string, error) {
	out := make(map[string]string, len(is.Spec.Tags))
	for _, tag := range is.Spec.Tags {
		if tag.From == nil || tag.From.Name == "" || (tag.From.Kind != "" && tag.From.Kind != "DockerImage") {
			continue
		}
		ps := tag.From.Name
		if r.o.policy != nil {
			cands, err := r.o.policy.Candidates(ps)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", tag.Name, err)
			}
			if len(cands) == 0 { // Candidates promises one or an error; do not index blindly
				return nil, fmt.Errorf("component %q: no candidate", tag.Name)
			}
			ps = cands[0].Ref
		}
		out[tag.Name] = ps
	}
	return out, nil
}

// blobHint explains a layer download refused by the blob host a registry
// redirected to (ECR: a pre-signed S3 URL).
func blobHint(err error, registry string) string {
	var te *transport.Error
	if !errors.As(err, &te) || te.Request == nil || strings.EqualFold(te.Request.URL.Host, registry) {
		return ""
	}
	switch te.StatusCode {
	case http.StatusBadRequest:
		return "the blob host " + te.Request.URL.Hostname() + " refused the redirected layer download; S3 answers 400 when a pre-signed URL request also carries an Authorization header, so the transport must not add one to redirected requests"
	case http.StatusForbidden:
		return "the blob host " + te.Request.URL.Hostname() + " refused the redirected layer download; S3 answers 403 to a missing, altered or expired URL signature"
	}
	return ""
}
