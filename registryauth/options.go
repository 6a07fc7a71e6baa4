package registryauth

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// Option configures a Keychain. Options are applied in order and then
// validated together by NewKeychain.
type Option func(*options) error

type options struct {
	factory         ClientFactory
	awsConfig       *aws.Config
	clientOpts      []ClientOption
	clock           clock.Clock
	log             logr.Logger
	metrics         Metrics
	aliases         []ecrhost.Alias
	roles           []RegistryRole
	refreshFraction float64
	expiryMargin    time.Duration
	fetchTimeout    time.Duration
	backoffInitial  time.Duration
	backoffMax      time.Duration
}

// Defaults. A token lives 12 hours; refreshing at half its life leaves six
// hours of retries before anyone has to wait on the network.
const (
	DefaultRefreshFraction = 0.5
	DefaultExpiryMargin    = 5 * time.Minute
	DefaultFetchTimeout    = 30 * time.Second
	DefaultBackoffInitial  = time.Second
	DefaultBackoffMax      = 5 * time.Minute
	// maxTokenLifetime bounds how long a token is trusted whatever expiresAt
	// says, so a local clock running behind ECR's cannot stretch a token
	// past its real end.
	maxTokenLifetime = 12 * time.Hour
)

func defaultOptions() options {
	return options{
		clock:           clock.RealClock{},
		log:             logr.Discard(),
		metrics:         noopMetrics{},
		refreshFraction: DefaultRefreshFraction,
		expiryMargin:    DefaultExpiryMargin,
		fetchTimeout:    DefaultFetchTimeout,
		backoffInitial:  DefaultBackoffInitial,
		backoffMax:      DefaultBackoffMax,
	}
}

// WithClientFactory sets how ECR API clients are made. Tests and HyperShift
// pass fakes here (see testing/fakeecr). It takes precedence over
// WithAWSConfig for the default identity.
func WithClientFactory(f ClientFactory) Option {
	return func(o *options) error {
		if f == nil {
			return errors.New("WithClientFactory: nil factory")
		}
		o.factory = f
		return nil
	}
}

// WithAWSConfig makes real ECR clients from cfg, typically the result of
// config.LoadDefaultConfig, whose credential chain covers environment keys,
// shared config, web identity (IRSA), EKS Pod Identity and the EC2 instance
// role through IMDSv2. The region of each client is the registry's region,
// whatever cfg.Region says. opts tune the clients (see NewClientFactory).
func WithAWSConfig(cfg aws.Config, opts ...ClientOption) Option {
	return func(o *options) error {
		c := cfg.Copy()
		o.awsConfig = &c
		o.clientOpts = append([]ClientOption(nil), opts...)
		return nil
	}
}

// WithClock sets the clock; tests pass k8s.io/utils/clock/testing.FakeClock.
// The default is the real clock.
func WithClock(c clock.Clock) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("WithClock: nil clock")
		}
		o.clock = c
		return nil
	}
}

// WithLogger sets the logger for background work (refreshes, failures). The
// default discards. No token is ever logged.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		o.log = l
		return nil
	}
}

// WithMetrics sets the metrics sink. The default discards.
func WithMetrics(m Metrics) Option {
	return func(o *options) error {
		if m == nil {
			return errors.New("WithMetrics: nil metrics")
		}
		o.metrics = m
		return nil
	}
}

// WithAliases declares custom host names (CNAMEs) that stand for ECR
// registries. Only these exact hosts are trusted besides the real ECR forms.
func WithAliases(aliases ...ecrhost.Alias) Option {
	return func(o *options) error {
		o.aliases = append(o.aliases, aliases...)
		return nil
	}
}

// RegistryRole makes the keychain assume RoleARN (with ExternalID, when set)
// for the registries that Match names. Match is a registry host, or a host
// and repository prefix ("123456789012.dkr.ecr.us-east-1.amazonaws.com/team-a")
// that matches at path boundaries; the longest match wins.
type RegistryRole struct {
	Match      string
	RoleARN    string
	ExternalID string
}

// WithRegistryRole adds a per-registry role. It needs WithAWSConfig, whose
// credentials are used to call sts:AssumeRole; assumed credentials are cached
// and refreshed by the SDK.
func WithRegistryRole(r RegistryRole) Option {
	return func(o *options) error {
		if r.Match == "" || !strings.HasPrefix(r.RoleARN, "arn:") {
			return fmt.Errorf("WithRegistryRole: need a registry match and a role ARN (got match %q, role %q)", r.Match, r.RoleARN)
		}
		o.roles = append(o.roles, r)
		return nil
	}
}

// WithRefreshFraction sets at which fraction of a token's life a refresh
// starts in the background, minus up to 10% jitter so that many keychains do
// not refresh in step. The default is 0.5.
func WithRefreshFraction(f float64) Option {
	return func(o *options) error {
		if !(f > 0 && f < 1) {
			return fmt.Errorf("WithRefreshFraction: %v is not in (0, 1)", f)
		}
		o.refreshFraction = f
		return nil
	}
}

// WithExpiryMargin sets how long before its expiry a cached token stops
// being served, leaving the caller time to use it. For a token that arrives
// with less than twice the margin left (a local clock far ahead of ECR's),
// the margin shrinks to half its remaining life, so that it is still cached.
// The default is 5 minutes.
func WithExpiryMargin(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("WithExpiryMargin: negative duration %v", d)
		}
		o.expiryMargin = d
		return nil
	}
}

// WithFetchTimeout bounds one token fetch, SDK retries included. Fetches run
// on the keychain's own context, not the caller's. The default is 30 seconds.
func WithFetchTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("WithFetchTimeout: %v is not positive", d)
		}
		o.fetchTimeout = d
		return nil
	}
}

// WithBackoff sets the wait after a failed fetch before ECR is called again
// for the same region: initial, doubling per consecutive failure up to max,
// with jitter. Callers arriving in between get the last error at once. The
// defaults are 1 second and 5 minutes.
func WithBackoff(initial, max time.Duration) Option {
	return func(o *options) error {
		if initial <= 0 || max < initial {
			return fmt.Errorf("WithBackoff: need 0 < initial <= max (got %v, %v)", initial, max)
		}
		o.backoffInitial, o.backoffMax = initial, max
		return nil
	}
}

func (o *options) validate() error {
	if o.factory == nil && o.awsConfig == nil {
		return errors.New("registryauth: no way to reach ECR: pass WithAWSConfig or WithClientFactory")
	}
	if len(o.roles) > 0 && o.awsConfig == nil {
		return errors.New("registryauth: WithRegistryRole needs WithAWSConfig to call sts:AssumeRole")
	}
	if o.expiryMargin >= maxTokenLifetime/2 {
		return fmt.Errorf("registryauth: expiry margin %v leaves no usable token life", o.expiryMargin)
	}
	return nil
}
