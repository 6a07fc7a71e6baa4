package releaseinfo

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// Defaults of a Resolver. The positive and negative TTLs are those of
// HyperShift's mirror-availability cache; a transient failure is cached
// only briefly, so that a blip does not hide a mirror for a whole minute.
const (
	DefaultPositiveTTL  = 5 * time.Minute
	DefaultNegativeTTL  = time.Minute
	DefaultTransientTTL = 10 * time.Second
	DefaultProbeTimeout = 30 * time.Second
	DefaultNoun         = "release"
)

// ResolverOption configures a Resolver. Options are applied in order and
// validated together by NewResolver.
type ResolverOption func(*resolverOptions) error

type resolverOptions struct {
	positiveTTL  time.Duration
	negativeTTL  time.Duration
	transientTTL time.Duration
	probeTimeout time.Duration
	clock        clock.PassiveClock
	noun         string
}

func defaultResolverOptions() resolverOptions {
	return resolverOptions{
		positiveTTL:  DefaultPositiveTTL,
		negativeTTL:  DefaultNegativeTTL,
		transientTTL: DefaultTransientTTL,
		probeTimeout: DefaultProbeTimeout,
		clock:        clock.RealClock{},
		noun:         DefaultNoun,
	}
}

// WithPositiveTTL sets how long "this candidate holds the image" is
// remembered. For a digest reference the answer cannot change; for a tag it
// bounds how long a moved tag keeps resolving to its old digest. The
// default is 5 minutes.
func WithPositiveTTL(d time.Duration) ResolverOption {
	return func(o *resolverOptions) error {
		if d <= 0 {
			return fmt.Errorf("WithPositiveTTL: %v is not positive", d)
		}
		o.positiveTTL = d
		return nil
	}
}

// WithNegativeTTL sets how long a definite "not there" (ErrManifestUnknown,
// ErrUnauthorized) is remembered: it is how long a release copied into a
// lagging mirror can go unnoticed. The default is 1 minute.
func WithNegativeTTL(d time.Duration) ResolverOption {
	return func(o *resolverOptions) error {
		if d <= 0 {
			return fmt.Errorf("WithNegativeTTL: %v is not positive", d)
		}
		o.negativeTTL = d
		return nil
	}
}

// WithTransientTTL sets how long any other probe failure (network, 5xx,
// timeout, credentials) is remembered, so that a dead mirror does not cost
// a timeout on every lookup. Zero disables caching them. It may not exceed
// the negative TTL. The default is 10 seconds.
func WithTransientTTL(d time.Duration) ResolverOption {
	return func(o *resolverOptions) error {
		if d < 0 {
			return fmt.Errorf("WithTransientTTL: %v is negative", d)
		}
		o.transientTTL = d
		return nil
	}
}

// WithProbeTimeout bounds one probe. Probes run on a context detached from
// the caller's (see Resolve), so this is what ends a hung probe. The
// default is 30 seconds.
func WithProbeTimeout(d time.Duration) ResolverOption {
	return func(o *resolverOptions) error {
		if d <= 0 {
			return fmt.Errorf("WithProbeTimeout: %v is not positive", d)
		}
		o.probeTimeout = d
		return nil
	}
}

// WithClock sets the clock that ages cached probe results; tests pass
// k8s.io/utils/clock/testing.FakeClock. The default is the real clock.
func WithClock(c clock.PassiveClock) ResolverOption {
	return func(o *resolverOptions) error {
		if c == nil {
			return errors.New("WithClock: nil clock")
		}
		o.clock = c
		return nil
	}
}

// WithNoun sets the word that names what is resolved in NotMirroredError
// messages ("release quay.io/… is not yet in …"). The default is "release";
// a Resolver for component images might use "image".
func WithNoun(noun string) ResolverOption {
	return func(o *resolverOptions) error {
		if noun == "" {
			return errors.New("WithNoun: empty noun")
		}
		o.noun = noun
		return nil
	}
}

func (o *resolverOptions) validate() error {
	if o.transientTTL > o.negativeTTL {
		return fmt.Errorf("transient TTL %v exceeds negative TTL %v: a failed check would hide a mirror longer than a definite absence", o.transientTTL, o.negativeTTL)
	}
	return nil
}
