package releaseinfo

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-logr/logr"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// Augmenter adds registry credentials to a dockerconfigjson pull secret in
// memory. *registryauth.Keychain implements it: it returns a new secret
// with fresh ECR entries for the ECR registries among imagesOrHosts and
// never modifies pullSecret.
type Augmenter interface {
	Augment(ctx context.Context, pullSecret []byte, imagesOrHosts ...string) ([]byte, error)
}

// LookupFunc has the shape of HyperShift's lookups: releaseinfo.Provider's
// Lookup, and (as a method value) ImageMetadataProvider's ImageMetadata,
// GetManifest and the like.
type LookupFunc[T any] func(ctx context.Context, image string, pullSecret []byte) (T, error)

// Decorator makes a HyperShift lookup mirror-aware and ECR-aware. For an
// image it takes the candidates of the policy, adds ECR credentials for
// every ECR registry among them to the pull secret (one Augment call, in
// memory), and calls Delegate with the first candidate that holds the image
// (checked by Resolver, digest-pinned). When Delegate answers that a
// candidate is not there or not readable (Retryable), it moves on to the
// next candidate the policy allows, the image's own reference last and only
// when allowed; any other Delegate error is returned at once. An image no
// mirror applies to is passed through: Delegate gets it as given, with the
// augmented pull secret, and its answer is returned unchanged.
//
// When a private ECR registry rejects the token (HTTP 401, or ECR's
// "authorization token has expired") and Keychain can forget tokens, as
// *registryauth.Keychain can, the token is forgotten, the pull secret
// augmented again and that candidate tried once more before the answer
// is judged as above: a token revoked before its expiry costs one retry,
// not a fall-back to the next candidate.
//
// The caller's pull secret is never modified, and the augmented bytes are
// handed to Delegate only: they are not returned, cached or logged.
//
// Wire it where HyperShift composes its providers:
//
//	// ecrreleaseinfo "github.com/openshift/hypershift-ecr/releaseinfo"
//	var provider releaseinfo.Provider = &ecrreleaseinfo.Decorator[*releaseinfo.ReleaseImage]{
//		Delegate: inner.Lookup, Resolver: resolver, Keychain: keychain,
//	}
//
// Fields are read on every call and must not change while calls are in
// flight.
type Decorator[T any] struct {
	// Delegate does the real lookup, given a pullspec and a pull secret.
	// Required.
	Delegate LookupFunc[T]
	// Resolver picks the candidate and checks it before Delegate is called,
	// caching the checks. Nil: no checks, Delegate is called on each
	// candidate in turn and is the only judge.
	Resolver *Resolver
	// Keychain adds ECR credentials to the pull secret. Nil: the pull secret
	// is passed as it is. A failure to get ECR credentials fails the lookup
	// (wrapped, so errors.Is with registryauth's sentinels works) rather
	// than silently bypassing the mirror.
	Keychain Augmenter
	// Policy gives the candidates when Resolver is nil. With a Resolver it
	// must be nil or the Resolver's policy. Nil with no Resolver: no rules.
	Policy *mirrorpolicy.Policy
	// Retryable decides whether a Delegate error means "not at this
	// candidate, try the next one". Nil means DefaultRetryable.
	Retryable func(error) bool
}

// Lookup looks image up as described on Decorator.
func (d *Decorator[T]) Lookup(ctx context.Context, image string, pullSecret []byte) (T, error) {
	var zero T
	if d.Delegate == nil {
		return zero, errors.New("releaseinfo: Decorator has no Delegate")
	}
	policy, noun := d.Policy, DefaultNoun
	if d.Resolver != nil {
		if d.Resolver.prober == nil {
			return zero, errNoResolver
		}
		if d.Policy != nil && d.Policy != d.Resolver.policy {
			return zero, errors.New("releaseinfo: Decorator.Policy differs from its Resolver's policy")
		}
		policy, noun = d.Resolver.policy, d.Resolver.opts.noun
	}
	cands, err := candidatesFor(policy, noun, image)
	if err != nil {
		return zero, err
	}
	refs := make([]string, len(cands))
	for i, c := range cands {
		refs[i] = c.Ref
	}
	secret := pullSecret
	if d.Keychain != nil {
		if secret, err = d.Keychain.Augment(ctx, pullSecret, refs...); err != nil {
			return zero, fmt.Errorf("releaseinfo: adding ECR credentials for %s: %w", image, err)
		}
	}
	retryable := d.Retryable
	if retryable == nil {
		retryable = DefaultRetryable
	}
	// call is Delegate, retried once with fresh ECR credentials when an ECR
	// registry rejects the token Augment gave (revoked before its expiry).
	// A failure to get the fresh credentials is final, as the first
	// Augment's is: final is set then.
	call := func(pullspec string) (v T, final bool, err error) {
		v, err = d.Delegate(ctx, pullspec, secret)
		f, ok := d.Keychain.(credentialForgetter)
		if err == nil || !ok || ctx.Err() != nil || !tokenRejected(err) || !isPrivateECR(pullspec) {
			return v, false, err
		}
		logr.FromContextOrDiscard(ctx).V(1).Info("ECR registry rejected the token; fetching a new one and retrying once",
			"image", image, "candidate", pullspec)
		f.Forget(pullspec)
		fresh, aerr := d.Keychain.Augment(ctx, pullSecret, refs...)
		if aerr != nil {
			return zero, true, fmt.Errorf("releaseinfo: refreshing the ECR credentials %s rejected: %w", pullspec, aerr)
		}
		secret = fresh
		v, err = d.Delegate(ctx, pullspec, secret)
		return v, false, err
	}
	if !hasMirror(cands) {
		// Nothing to choose: stay transparent, as if undecorated.
		v, _, err := call(image)
		return v, err
	}
	log := logr.FromContextOrDiscard(ctx)

	var skipped []Skip
	for i := 0; i < len(cands); i++ {
		pullspec := cands[i].Ref
		if d.Resolver != nil {
			res, n, all, err := d.Resolver.scan(ctx, image, cands[i:], skipped)
			if err != nil {
				return zero, err
			}
			if res == nil {
				skipped = all
				break
			}
			i += n
			pullspec, skipped = res.Pullspec, res.Skipped
		}
		v, final, err := call(pullspec)
		if err == nil {
			return v, nil
		}
		if final {
			return zero, err
		}
		if ctx.Err() != nil || !retryable(err) {
			if pullspec != image {
				err = fmt.Errorf("releaseinfo: looking up %s at %s: %w", image, pullspec, err)
			}
			return zero, err
		}
		s := Skip{Ref: pullspec, Reason: "lookup failed: " + err.Error(), Err: asSentinel(err)}
		if v := log.V(1); v.Enabled() {
			v.Info("Image lookup failed at candidate, trying the next", "image", image, "candidate", pullspec, "reason", s.Reason)
		}
		skipped = append(skipped, s)
		if d.Resolver != nil {
			// The check said the candidate holds the image; the lookup says
			// otherwise. Check again next time instead of trusting the cache.
			d.Resolver.forget(cands[i].Ref)
		}
	}
	return zero, notMirrored(policy, noun, image, cands, skipped)
}

// credentialForgetter is implemented by *registryauth.Keychain: Forget
// drops the cached token of a registry so that the next Augment fetches a
// new one.
type credentialForgetter interface {
	Forget(registryHostOrImage string)
}

// tokenRejectedStatus matches HTTP 401 as registry clients print it.
var tokenRejectedStatus = regexp.MustCompile(`\b(?:http|status|status code|response)[ :]{0,2}401\b|\b401 unauthorized\b`)

// tokenRejected reports whether err says the registry refused the
// credential itself, which a new token may cure: HTTP 401, UNAUTHORIZED,
// ECR's 401 "DENIED: Not Authorized" (registry clients keep the code, not
// the status) or its 403 "Your authorization token has expired". A 403
// DENIED naming a permission ("is not authorized to perform") is about the
// repository, and a new token would not change it.
func tokenRejected(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "unauthorized") || strings.Contains(msg, "authentication required") ||
		strings.Contains(msg, "denied: not authorized") || strings.Contains(msg, "authorization token has expired") ||
		tokenRejectedStatus.MatchString(msg)
}

// isPrivateECR reports whether ref is on a private ECR registry, the only
// kind the keychain holds tokens for.
func isPrivateECR(ref string) bool {
	reg, ok := ecrhost.Parse(ref)
	return ok && !reg.Public
}

func hasMirror(cands []mirrorpolicy.Candidate) bool {
	for _, c := range cands {
		if c.Mirror {
			return true
		}
	}
	return false
}

// retryableCodes are docker/distribution errcode texts (ErrorCode.Error(),
// lower case), messages of its client, and ggcr's, meaning "not here" or
// "not for you".
var retryableCodes = []string{
	"manifest unknown",
	"name unknown",
	"unknown manifest",                      // distribution.ErrManifestUnknown(Revision)
	"repository name not known to registry", // NAME_UNKNOWN's message
	"unauthorized",
	"authentication required",
	"denied",
}

// retryableStatus matches HTTP 401, 403 and 404 as registry clients print
// them: "HTTP 404", "status: 404", "status code 404", "404 Not Found".
var retryableStatus = regexp.MustCompile(`\b(?:http|status|status code|response)[ :]{0,2}(?:401|403|404)\b|\b(?:401 unauthorized|403 forbidden|404 not found)\b`)

// authStatus matches HTTP 401 and 403 as retryableStatus does.
var authStatus = regexp.MustCompile(`\b(?:http|status|status code|response)[ :]{0,2}(?:401|403)\b|\b(?:401 unauthorized|403 forbidden)\b`)

// asSentinel makes a retryable Delegate error match ErrUnauthorized or
// ErrManifestUnknown, so that skips read the same whichever client failed.
func asSentinel(err error) error {
	if errors.Is(err, ErrManifestUnknown) || errors.Is(err, ErrUnauthorized) {
		return err
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "unauthorized") || strings.Contains(msg, "authentication required") ||
		strings.Contains(msg, "denied") || authStatus.MatchString(msg) {
		return fmt.Errorf("%w: %w", ErrUnauthorized, err)
	}
	return fmt.Errorf("%w: %w", ErrManifestUnknown, err)
}

// DefaultRetryable is the Decorator's default classifier. It reports whether
// err says the image is not at that candidate or not readable there, so
// that the next candidate is worth trying: errors.Is ErrManifestUnknown or
// ErrUnauthorized, docker/distribution error codes (manifest unknown, name
// unknown, unauthorized, denied) and HTTP 401/403/404 in the message, as
// HyperShift's registry client reports them. It recognises them from the
// text so that this package need not import that client. Context
// cancellation and deadlines are never retryable.
func DefaultRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrManifestUnknown) || errors.Is(err, ErrUnauthorized) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range retryableCodes {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return retryableStatus.MatchString(msg)
}
