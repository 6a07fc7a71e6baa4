package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// Limits that protect the reader from broken or hostile images. Real release
// files are far smaller (image-references is about 100 KiB, the boot images
// ConfigMap under 100 KiB) and real release images carry the metadata in their
// last layer, a few MiB.
const (
	// MaxFileSize is the largest release file the reader accepts: a tar entry
	// for ImageReferencesPath or BootImagesPath declaring more is refused
	// before any of it is read.
	MaxFileSize = 64 << 20
	// MaxScanSize bounds the decompressed bytes one lookup reads across all
	// the layers it opens, so that a compression bomb or a huge image without
	// metadata costs bounded CPU. It is large enough to scan every layer of a
	// real release image.
	MaxScanSize = 4 << 30
)

// Option configures a Reader. Options are applied in order and validated
// together by NewReader.
type Option func(*options) error

type options struct {
	keychain  authn.Keychain
	refresher CredentialRefresher
	transport http.RoundTripper
	platform  v1.Platform
	resolve   func(ctx context.Context, image string) (string, error)
	policy    *mirrorpolicy.Policy
	maxFile   int64
	maxScan   int64
}

// WithKeychain sets where Lookup takes registry credentials from, for
// example authn.NewMultiKeychain(ggcrauth.NewKeychain(kc), authn.DefaultKeychain)
// for fresh ECR tokens plus the usual credentials elsewhere. The default reads
// anonymously. LookupWithPullSecret ignores it.
func WithKeychain(kc authn.Keychain) Option {
	return func(o *options) error {
		if kc == nil {
			return errors.New("WithKeychain: nil keychain")
		}
		o.keychain = kc
		return nil
	}
}

// CredentialRefresher drops a cached registry credential so that the next
// request for that registry gets a new one. *registryauth.Keychain
// implements it; hostOrImage is a registry host (host:port for a port).
type CredentialRefresher interface {
	Forget(hostOrImage string)
}

// WithCredentialRefresher makes Lookup recover from a credential the
// registry rejects before the keychain thinks it expired (an ECR token
// revoked early, say): on an HTTP 401 from a registry the keychain sent
// credentials to, Lookup calls f.Forget with the registry's host and
// retries the whole lookup once; a second 401 fails with an *Error
// matching ErrCredentialsRejected. Pass the *registryauth.Keychain behind
// the ggcrauth keychain given to WithKeychain. The default is the keychain
// of WithKeychain itself when it implements CredentialRefresher, else none:
// a 401 fails the lookup at once. LookupWithPullSecret never retries.
func WithCredentialRefresher(f CredentialRefresher) Option {
	return func(o *options) error {
		if f == nil {
			return errors.New("WithCredentialRefresher: nil refresher")
		}
		o.refresher = f
		return nil
	}
}

// WithTransport sets the HTTP transport under the reader's own wrappers
// (request counting, go-containerregistry's authentication and retries). The
// default is go-containerregistry's remote.DefaultTransport.
func WithTransport(rt http.RoundTripper) Option {
	return func(o *options) error {
		if rt == nil {
			return errors.New("WithTransport: nil transport")
		}
		o.transport = rt
		return nil
	}
}

// WithPlatform sets the image chosen from a manifest list. OS and
// Architecture are required; Variant, OSVersion and features must match
// when set. The default is linux/amd64.
func WithPlatform(p v1.Platform) Option {
	return func(o *options) error {
		if p.OS == "" || p.Architecture == "" {
			return errors.New("WithPlatform: OS and Architecture are required")
		}
		o.platform = *p.DeepCopy()
		return nil
	}
}

// WithResolver sets a function that turns the requested image into the
// pullspec to read, for example the first reachable ECR mirror of a quay.io
// release. It is called once per lookup with the lookup's context; its error
// fails the lookup (wrapped). The default reads the image as given.
func WithResolver(fn func(ctx context.Context, image string) (pullspec string, err error)) Option {
	return func(o *options) error {
		if fn == nil {
			return errors.New("WithResolver: nil resolver")
		}
		o.resolve = fn
		return nil
	}
}

// WithComponentPolicy rewrites Release.ComponentImages: each component
// pullspec becomes the first candidate of p (its first applicable mirror, or
// the pullspec itself, normalised, when no rule applies). The default leaves
// the pullspecs as the release's ImageStream has them.
func WithComponentPolicy(p *mirrorpolicy.Policy) Option {
	return func(o *options) error {
		if p == nil {
			return errors.New("WithComponentPolicy: nil policy")
		}
		o.policy = p
		return nil
	}
}

func makeOptions(opts []Option) (*options, error) {
	o := &options{
		keychain:  authn.NewMultiKeychain(), // resolves everything to authn.Anonymous
		transport: ggcrremote.DefaultTransport,
		platform:  v1.Platform{OS: "linux", Architecture: "amd64"},
		maxFile:   MaxFileSize,
		maxScan:   MaxScanSize,
	}
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			errs = append(errs, errors.New("nil option"))
			continue
		}
		if err := opt(o); err != nil {
			errs = append(errs, err)
		}
	}
	if o.refresher == nil {
		o.refresher, _ = o.keychain.(CredentialRefresher)
	}
	if o.maxFile <= 0 || o.maxScan <= 0 {
		errs = append(errs, errors.New("size limits must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("releaseinfo/remote: invalid options: %w", err)
	}
	return o, nil
}
