package ggcrprobe

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/openshift/hypershift-ecr/releaseinfo"
)

// Prober is a releaseinfo.Prober over go-containerregistry. Make it with
// New; the zero value probes anonymously over remote.DefaultTransport. It is
// safe for concurrent use.
type Prober struct {
	keychain  authn.Keychain
	transport http.RoundTripper
	platform  *v1.Platform
	extra     []remote.Option
}

var _ releaseinfo.Prober = (*Prober)(nil)

// Option configures a Prober.
type Option func(*Prober)

// WithTransport sets the HTTP transport. ggcr wraps it with its retry and
// user-agent transports, as remote.WithTransport does. The default (and
// nil) is remote.DefaultTransport.
func WithTransport(rt http.RoundTripper) Option {
	return func(p *Prober) {
		if rt != nil {
			p.transport = rt
		}
	}
}

// WithPlatform makes Probe also check, when the reference names a manifest
// list or OCI index, that the index lists an image for platform and that
// the registry holds that image's manifest: a mirror filtered to other
// architectures then counts as not holding the image (ErrManifestUnknown).
// This costs a GET of the index and a second HEAD. The default checks the
// reference's own manifest only.
func WithPlatform(platform v1.Platform) Option {
	return func(p *Prober) { p.platform = &platform }
}

// WithRemoteOptions appends options to every remote call, for example
// remote.WithRetryBackoff or remote.WithUserAgent. Options setting the
// context, the transport or the credentials are overridden by the Prober's.
func WithRemoteOptions(opts ...remote.Option) Option {
	return func(p *Prober) { p.extra = append(p.extra, opts...) }
}

// New returns a Prober that authenticates with keychain, typically
// authn.NewMultiKeychain(ggcrauth.NewKeychain(ecrKeychain), ...); nil means
// anonymous access everywhere.
func New(keychain authn.Keychain, opts ...Option) *Prober {
	p := &Prober{keychain: keychain}
	for _, o := range opts {
		o(p)
	}
	p.extra = append([]remote.Option(nil), p.extra...)
	return p
}

// Probe sends a manifest HEAD for ref and returns the manifest's digest.
// A 404 (MANIFEST_UNKNOWN, NAME_UNKNOWN) gives an error wrapping
// releaseinfo.ErrManifestUnknown, a 401 or 403 (UNAUTHORIZED, DENIED) one
// wrapping releaseinfo.ErrUnauthorized; both also wrap ggcr's
// *transport.Error. Anything else, a credential failure from the keychain
// included, is returned wrapped as it is.
func (p *Prober) Probe(ctx context.Context, ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("ggcrprobe: %w", err)
	}
	opts := p.options(ctx)
	desc, err := remote.Head(r, opts...)
	if err != nil {
		return "", classify(err)
	}
	if p.platform != nil && desc.MediaType.IsIndex() {
		if err := p.checkPlatform(r.Context().Digest(desc.Digest.String()), opts); err != nil {
			return "", err
		}
	}
	return desc.Digest.String(), nil
}

func (p *Prober) options(ctx context.Context) []remote.Option {
	opts := make([]remote.Option, 0, len(p.extra)+3)
	opts = append(opts, p.extra...)
	opts = append(opts, remote.WithContext(ctx))
	if p.transport != nil {
		opts = append(opts, remote.WithTransport(p.transport))
	}
	if p.keychain != nil {
		opts = append(opts, remote.WithAuthFromKeychain(p.keychain))
	}
	return opts
}

// checkPlatform reads the index and HEADs the child for p.platform.
func (p *Prober) checkPlatform(index name.Digest, opts []remote.Option) error {
	idx, err := remote.Index(index, opts...)
	if err != nil {
		return classify(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return classify(err)
	}
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.Satisfies(*p.platform) {
			if _, err := remote.Head(index.Context().Digest(m.Digest.String()), opts...); err != nil {
				return fmt.Errorf("ggcrprobe: %s image of %s: %w", p.platform, index, classify(err))
			}
			return nil
		}
	}
	return fmt.Errorf("ggcrprobe: %s lists no %s image: %w", index, p.platform, releaseinfo.ErrManifestUnknown)
}

// classify maps ggcr's registry errors to releaseinfo's sentinels, keeping
// the original in the chain. ggcr redacts URLs in its messages; no
// credential ever appears in them.
func classify(err error) error {
	var terr *transport.Error
	if !errors.As(err, &terr) {
		return fmt.Errorf("ggcrprobe: %w", err)
	}
	if kind := kindOf(terr); kind != nil {
		return fmt.Errorf("%w: %w", kind, err)
	}
	return fmt.Errorf("ggcrprobe: %w", err)
}

func kindOf(terr *transport.Error) error {
	for _, d := range terr.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode:
			return releaseinfo.ErrManifestUnknown
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return releaseinfo.ErrUnauthorized
		}
	}
	switch terr.StatusCode {
	case http.StatusNotFound:
		return releaseinfo.ErrManifestUnknown
	case http.StatusUnauthorized, http.StatusForbidden:
		return releaseinfo.ErrUnauthorized
	}
	return nil
}
