package credentialprovider

import (
	"errors"
	"fmt"
	"strings"
	"time"

	configv1 "k8s.io/kubelet/config/v1"
	"k8s.io/utils/clock"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// Defaults of a PluginSource.
const (
	// DefaultTimeout is how long a plugin may run before it is killed: the
	// kubelet's fixed timeout.
	DefaultTimeout = time.Minute
	// DefaultCacheDuration is how long a response without cacheDuration is
	// cached. It plays the part of CredentialProviderConfig's
	// defaultCacheDuration; short, because such a plugin does not say how
	// long its credentials live.
	DefaultCacheDuration = 5 * time.Minute
)

// Option configures a PluginSource. Options are applied in order and then
// validated together by NewPluginSource.
type Option func(*options) error

type options struct {
	args                 []string
	env                  []string
	matchImages          []string
	defaultCacheDuration time.Duration
	timeout              time.Duration
	clock                clock.PassiveClock
}

func defaultOptions() options {
	return options{
		matchImages:          ecrhost.MatchImages(),
		defaultCacheDuration: DefaultCacheDuration,
		timeout:              DefaultTimeout,
		clock:                clock.RealClock{},
	}
}

// WithArgs sets the plugin's command-line arguments, like
// CredentialProviderConfig's args. The default is none.
func WithArgs(args ...string) Option {
	return func(o *options) error {
		o.args = append([]string(nil), args...)
		return nil
	}
}

// WithEnv adds environment variables for the plugin, like
// CredentialProviderConfig's env. As in the kubelet the plugin inherits
// the process's environment, and these override it.
func WithEnv(vars ...configv1.ExecEnvVar) Option {
	return func(o *options) error {
		for _, v := range vars {
			if v.Name == "" || strings.ContainsAny(v.Name, "=\x00") || strings.ContainsRune(v.Value, 0) {
				return fmt.Errorf("WithEnv: invalid variable %q", v.Name)
			}
			o.env = append(o.env, v.Name+"="+v.Value)
		}
		return nil
	}
}

// WithMatchImages sets the globs an image must match for the plugin to be
// run, like CredentialProviderConfig's matchImages: each '*' matches one
// DNS label, a port must be equal, a path is a prefix. The default is
// ecrhost.MatchImages(), every Amazon ECR host form.
func WithMatchImages(globs ...string) Option {
	return func(o *options) error {
		if len(globs) == 0 {
			return errors.New("WithMatchImages: no globs")
		}
		for _, g := range globs {
			if _, ok := parseGlob(g); !ok {
				return fmt.Errorf("WithMatchImages: %q is not a host glob", g)
			}
		}
		o.matchImages = append([]string(nil), globs...)
		return nil
	}
}

// WithDefaultCacheDuration sets how long a response that has no
// cacheDuration is cached, like CredentialProviderConfig's
// defaultCacheDuration; 0 caches such responses not at all. A response's
// own cacheDuration, 0 included (not cached), always wins. The default is
// DefaultCacheDuration.
func WithDefaultCacheDuration(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("WithDefaultCacheDuration: negative duration %v", d)
		}
		o.defaultCacheDuration = d
		return nil
	}
}

// WithTimeout bounds one plugin run; the plugin is killed when it ends.
// The default is DefaultTimeout, the kubelet's.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithTimeout: %v is not positive", d)
		}
		o.timeout = d
		return nil
	}
}

// WithClock sets the clock of the cache; tests pass
// k8s.io/utils/clock/testing.FakePassiveClock. The default is the real
// clock. The timeout always runs on real time.
func WithClock(c clock.PassiveClock) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("WithClock: nil clock")
		}
		o.clock = c
		return nil
	}
}

// FromConfig applies one provider entry of a kubelet CredentialProviderConfig:
// its args, env, matchImages and defaultCacheDuration. Its apiVersion must
// be credentialprovider.kubelet.k8s.io/v1; tokenAttributes (service account
// tokens) are not supported. The binary path is filepath.Join(the
// kubelet's plugin directory, p.Name).
func FromConfig(p configv1.CredentialProvider) Option {
	return func(o *options) error {
		if p.APIVersion != APIVersion {
			return fmt.Errorf("FromConfig: provider %q: apiVersion %q is not supported, want %s", p.Name, p.APIVersion, APIVersion)
		}
		if p.TokenAttributes != nil {
			return fmt.Errorf("FromConfig: provider %q: tokenAttributes (service account tokens) are not supported", p.Name)
		}
		opts := []Option{WithArgs(p.Args...), WithEnv(p.Env...), WithMatchImages(p.MatchImages...)}
		if p.DefaultCacheDuration != nil {
			opts = append(opts, WithDefaultCacheDuration(p.DefaultCacheDuration.Duration))
		}
		for _, opt := range opts {
			if err := opt(o); err != nil {
				return fmt.Errorf("FromConfig: provider %q: %w", p.Name, err)
			}
		}
		return nil
	}
}
