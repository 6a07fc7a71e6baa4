package releaseinfo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// Prober checks that a registry holds a manifest, typically with an
// authenticated manifest HEAD. It returns the manifest's digest ("sha256:…";
// required for tag references, checked against the reference for digest
// references), or an error wrapping ErrManifestUnknown or ErrUnauthorized
// when the registry says the manifest is not there or not readable. Any
// other error means the registry could not be asked. ggcrprobe.Prober is
// the default implementation.
type Prober interface {
	Probe(ctx context.Context, ref string) (digest string, err error)
}

// ProbeFunc adapts a function to Prober.
type ProbeFunc func(ctx context.Context, ref string) (digest string, err error)

// Probe calls f.
func (f ProbeFunc) Probe(ctx context.Context, ref string) (string, error) { return f(ctx, ref) }

// Resolution is where an image was found.
type Resolution struct {
	// Image is the reference that was asked for.
	Image string
	// Pullspec is the digest-pinned reference to use: the candidate's own
	// digest reference, or <candidate repository>@<digest> for a tag.
	Pullspec string
	// Candidate is the policy candidate that holds the image.
	Candidate mirrorpolicy.Candidate
	// Skipped lists the earlier candidates and why each was passed over.
	Skipped []Skip
}

// Digest returns the digest part of Pullspec.
func (r *Resolution) Digest() string { return digestOf(r.Pullspec) }

// String is a one-line explanation for logs:
//
//	quay.io/…@sha256:… -> 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:… (mirror, ECRReleaseMirror/…)
//
// followed by "; skipped <ref>: <reason>" for each skipped candidate.
func (r *Resolution) String() string {
	var b strings.Builder
	b.WriteString(r.Image + " -> " + r.Pullspec + " (" + r.kind())
	if r.Candidate.Origin != "" {
		b.WriteString(", " + r.Candidate.Origin)
	}
	b.WriteString(")")
	for _, s := range r.Skipped {
		b.WriteString("; skipped " + s.Ref + ": " + s.Reason)
	}
	return b.String()
}

// Explain is a multi-line explanation for a CLI: the image, the pullspec
// to use and where it comes from, and every skipped candidate.
func (r *Resolution) Explain() string {
	var b strings.Builder
	b.WriteString("image:    " + r.Image + "\n")
	b.WriteString("pullspec: " + r.Pullspec + "\n")
	b.WriteString("from:     " + r.kind())
	if r.Candidate.Origin != "" {
		b.WriteString(" (" + r.Candidate.Origin + ")")
	}
	b.WriteString("\n")
	for _, s := range r.Skipped {
		b.WriteString("skipped:  " + s.Ref + ": " + s.Reason + "\n")
	}
	return b.String()
}

func (r *Resolution) kind() string {
	if r.Candidate.Mirror {
		return "mirror"
	}
	return "source"
}

var errNoResolver = errors.New("releaseinfo: Resolver not made by NewResolver")

// Resolver picks, for an image, the first candidate of a mirror policy that
// really holds it. Make it with NewResolver (the zero value fails every
// call); it is safe for concurrent use.
type Resolver struct {
	policy *mirrorpolicy.Policy
	prober Prober
	opts   resolverOptions

	mu      sync.RWMutex
	cache   map[string]probeResult
	sweepAt time.Time
	flights singleflight.Group
}

// probeResult is one cached probe of one candidate reference.
type probeResult struct {
	pullspec string // digest-pinned, when err == nil
	err      error
	expires  time.Time
}

// sweepThreshold is the cache size above which expired entries are swept
// on insert; below it they are simply overwritten when probed again.
const sweepThreshold = 1024

// NewResolver returns a Resolver over policy (nil means no rules: every
// image is its own only candidate) that checks candidates with prober.
func NewResolver(policy *mirrorpolicy.Policy, prober Prober, opts ...ResolverOption) (*Resolver, error) {
	if prober == nil {
		return nil, errors.New("releaseinfo: nil prober")
	}
	o := defaultResolverOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("releaseinfo: %w", err)
		}
	}
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("releaseinfo: %w", err)
	}
	return &Resolver{policy: policy, prober: prober, opts: o, cache: map[string]probeResult{}}, nil
}

// Resolve returns the first candidate of the policy for image whose manifest
// the prober confirms, digest-pinned, with the reasons earlier candidates
// were skipped. Candidates are tried in policy order: mirrors first, the
// image's own reference last and only when the policy allows contacting it.
//
// A candidate is skipped when the prober says it is absent or unreadable,
// and also when the prober cannot reach it: Resolve answers "where is it
// provably available", so a mirror that cannot be checked is passed over
// for the next allowed candidate. When no candidate qualifies the error is
// a *NotMirroredError (errors.Is(err, ErrNotMirrored)). An invalid
// reference gives an error wrapping mirrorpolicy.ErrInvalidReference; a
// rule that cannot hold the image, a *mirrorpolicy.RuleError. If ctx ends,
// Resolve returns its error at once; probes in flight go on, on a context
// of their own bounded by WithProbeTimeout, and fill the cache.
func (r *Resolver) Resolve(ctx context.Context, image string) (*Resolution, error) {
	if r == nil || r.prober == nil {
		return nil, errNoResolver
	}
	cands, err := candidatesFor(r.policy, r.opts.noun, image)
	if err != nil {
		return nil, err
	}
	res, _, skipped, err := r.scan(ctx, image, cands, nil)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, notMirrored(r.policy, r.opts.noun, image, cands, skipped)
	}
	return res, nil
}

// candidatesFor returns the policy's candidates for image, turning "no
// allowed candidate at all" into a *NotMirroredError.
func candidatesFor(p *mirrorpolicy.Policy, noun, image string) ([]mirrorpolicy.Candidate, error) {
	cands, err := p.Candidates(image)
	if errors.Is(err, mirrorpolicy.ErrBlocked) {
		return nil, &NotMirroredError{Noun: noun, Image: image, Source: sourceRepository(image),
			SourceHost: sourceHost(image), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("releaseinfo: %w", err)
	}
	return cands, nil
}

// scan probes cands in order and returns the first that holds image, with
// its index in cands, or a nil Resolution when none does. skipped carries
// skips from earlier rounds (the Decorator's) and comes back with this
// round's appended. The error is set only when ctx ended.
func (r *Resolver) scan(ctx context.Context, image string, cands []mirrorpolicy.Candidate, skipped []Skip) (*Resolution, int, []Skip, error) {
	log := logr.FromContextOrDiscard(ctx)
	for i, c := range cands {
		pullspec, err := r.probe(ctx, c.Ref)
		if err == nil {
			return &Resolution{Image: image, Pullspec: pullspec, Candidate: c, Skipped: skipped}, i, skipped, nil
		}
		if ctx.Err() != nil {
			return nil, i, skipped, fmt.Errorf("releaseinfo: resolving %s: %w", image, context.Cause(ctx))
		}
		s := Skip{Ref: c.Ref, Reason: reason(c.Ref, err), Err: err}
		if v := log.V(1); v.Enabled() {
			v.Info("Skipping image candidate", "image", image, "candidate", c.Ref, "reason", s.Reason)
		}
		skipped = append(skipped, s)
	}
	return nil, len(cands), skipped, nil
}

func notMirrored(p *mirrorpolicy.Policy, noun, image string, cands []mirrorpolicy.Candidate, skipped []Skip) *NotMirroredError {
	e := &NotMirroredError{
		Noun:          noun,
		Image:         image,
		Source:        sourceRepository(image),
		SourceHost:    sourceHost(image),
		SourceAllowed: p.SourceAllowed(image),
		Skipped:       skipped,
	}
	for _, c := range cands {
		if c.Mirror {
			e.Mirrors = append(e.Mirrors, repository(c.Ref))
		}
	}
	return e
}

// reason is the short explanation of a failed probe or lookup of ref.
func reason(ref string, err error) string {
	switch {
	case errors.Is(err, ErrManifestUnknown):
		return "manifest unknown"
	case errors.Is(err, ErrUnauthorized):
		if ecrhost.IsECR(ref) {
			return "unauthorized (on ECR: no such repository, or not readable)"
		}
		return "unauthorized"
	default:
		return "unreachable: " + err.Error()
	}
}

// probe returns the digest-pinned pullspec of ref, from the cache when a
// result is fresh. Concurrent misses for one ref share one probe.
func (r *Resolver) probe(ctx context.Context, ref string) (string, error) {
	r.mu.RLock()
	e, ok := r.cache[ref]
	r.mu.RUnlock()
	if ok && r.opts.clock.Now().Before(e.expires) {
		return e.pullspec, e.err
	}
	ch := r.flights.DoChan(ref, func() (any, error) {
		return r.load(ctx, ref), nil
	})
	select {
	case <-ctx.Done():
		return "", context.Cause(ctx)
	case res := <-ch:
		pr := res.Val.(probeResult)
		return pr.pullspec, pr.err
	}
}

// load runs one probe on a context detached from the caller's (values such
// as the logger are kept) and caches the outcome.
func (r *Resolver) load(ctx context.Context, ref string) probeResult {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.probeTimeout)
	defer cancel()
	digest, err := r.safeProbe(pctx, ref)
	var pr probeResult
	ttl := r.opts.positiveTTL
	switch {
	case err == nil:
		pr.pullspec, err = pin(ref, digest)
		if err != nil {
			pr.err, ttl = fmt.Errorf("releaseinfo: %w", err), r.opts.transientTTL
		}
	case errors.Is(err, ErrManifestUnknown), errors.Is(err, ErrUnauthorized):
		pr.err, ttl = err, r.opts.negativeTTL
	default:
		pr.err, ttl = err, r.opts.transientTTL
	}
	if ttl <= 0 {
		return pr
	}
	now := r.opts.clock.Now()
	pr.expires = now.Add(ttl)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cache) >= sweepThreshold && !now.Before(r.sweepAt) {
		for k, v := range r.cache {
			if !now.Before(v.expires) {
				delete(r.cache, k)
			}
		}
		r.sweepAt = now.Add(r.opts.transientTTL + time.Second)
	}
	r.cache[ref] = pr
	return pr
}

// safeProbe turns a panicking prober into an error: singleflight would
// otherwise re-panic in a goroutine of its own and end the process.
func (r *Resolver) safeProbe(ctx context.Context, ref string) (digest string, err error) {
	defer func() {
		if p := recover(); p != nil {
			digest, err = "", fmt.Errorf("releaseinfo: prober panicked on %s: %v", ref, p)
		}
	}()
	return r.prober.Probe(ctx, ref)
}

// forget drops the cached result for ref, so that the next lookup probes
// again; the Decorator calls it when a lookup contradicts the cache.
func (r *Resolver) forget(ref string) {
	r.mu.Lock()
	delete(r.cache, ref)
	r.mu.Unlock()
}
