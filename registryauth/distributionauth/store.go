package distributionauth

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"time"

	"github.com/docker/distribution/registry/client/auth"
	"github.com/go-logr/logr"

	"github.com/openshift/hypershift-ecr/registryauth"
)

// DefaultTimeout bounds one credential lookup made by Basic.
const DefaultTimeout = 10 * time.Second

// Option configures a CredentialStore.
type Option func(*CredentialStore)

// WithTimeout bounds each lookup Basic makes, which is a network fetch only
// on a cold cache. The default is DefaultTimeout; a non-positive d keeps it.
func WithTimeout(d time.Duration) Option {
	return func(s *CredentialStore) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// WithLogger sets where failed ECR lookups are logged (registry and error,
// never a credential). The default discards.
func WithLogger(l logr.Logger) Option {
	return func(s *CredentialStore) { s.log = l }
}

// CredentialStore is a docker/distribution auth.CredentialStore that answers
// Basic for Amazon ECR hosts from a registryauth.CredentialSource and
// delegates everything else. Make one with NewCredentialStore; it is safe
// for concurrent use.
type CredentialStore struct {
	src      registryauth.CredentialSource
	delegate auth.CredentialStore
	timeout  time.Duration
	log      logr.Logger

	mu    sync.Mutex
	hosts []string         // hosts with a failure, in first-failure order
	errs  map[string]error // last failure per host
}

var _ auth.CredentialStore = (*CredentialStore)(nil)

// NewCredentialStore returns a store that serves ECR hosts from src and
// every other host from delegate (nil: anonymous). delegate is typically the
// store HyperShift builds from the pull secret.
func NewCredentialStore(src registryauth.CredentialSource, delegate auth.CredentialStore, opts ...Option) *CredentialStore {
	s := &CredentialStore{
		src:      src,
		delegate: delegate,
		timeout:  DefaultTimeout,
		log:      logr.Discard(),
		errs:     map[string]error{},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Basic returns the user name and password for the registry at u.
//
// For an ECR host it asks the source, waiting at most the store's timeout.
// For any other host, ECR Public included, it returns the delegate's answer.
// When the source fails for an ECR host, Basic returns "", "" so that the
// request goes out anonymously and the registry answers 401; the interface
// has no error result, so the failure is logged and kept for Err. A failure
// never falls back to the delegate: a stale token from a pull secret would
// only hide the IAM error.
func (s *CredentialStore) Basic(u *url.URL) (string, string) {
	if u == nil {
		return "", ""
	}
	if s.src == nil {
		return s.delegateBasic(u)
	}
	host := u.Host
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cred, err := s.src.Credential(ctx, host)
	switch {
	case err == nil:
		s.clear(host)
		s.log.V(4).Info("Using ECR credentials", "registry", host, "expiresAt", cred.ExpiresAt)
		return cred.Username, cred.Password
	case errors.Is(err, registryauth.ErrNotECR), errors.Is(err, registryauth.ErrPublicRegistry):
		return s.delegateBasic(u)
	default:
		// registryauth errors never hold a token, so err is safe to log.
		// distribution calls Basic once per request: log a failure once.
		if s.record(host, err) {
			s.log.Error(err, "Cannot get ECR credentials, the registry will be contacted anonymously", "registry", host)
		} else {
			s.log.V(4).Info("Still cannot get ECR credentials", "registry", host, "error", err.Error())
		}
		return "", ""
	}
}

// RefreshToken delegates: ECR uses Basic auth and has no refresh tokens.
func (s *CredentialStore) RefreshToken(u *url.URL, service string) string {
	if s.delegate == nil {
		return ""
	}
	return s.delegate.RefreshToken(u, service)
}

// SetRefreshToken delegates, or does nothing without a delegate.
func (s *CredentialStore) SetRefreshToken(realm *url.URL, service, token string) {
	if s.delegate != nil {
		s.delegate.SetRefreshToken(realm, service, token)
	}
}

// Err returns the ECR failures behind anonymous answers of Basic, one per
// host (the last one), joined with errors.Join; nil if there are none. A
// later success for a host clears its failure. errors.Is against the
// registryauth sentinels (ErrAccessDenied, ...) works on the result. Call it
// after a registry operation failed with 401 to report why.
func (s *CredentialStore) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.hosts) == 0 {
		return nil
	}
	errs := make([]error, 0, len(s.hosts))
	for _, h := range s.hosts {
		errs = append(errs, s.errs[h])
	}
	return errors.Join(errs...)
}

func (s *CredentialStore) delegateBasic(u *url.URL) (string, string) {
	if s.delegate == nil {
		return "", ""
	}
	return s.delegate.Basic(u)
}

// record keeps err as host's failure and reports whether it differs from
// the one already kept.
func (s *CredentialStore) record(host string, err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.errs[host]
	if !ok {
		s.hosts = append(s.hosts, host)
	}
	s.errs[host] = err
	return !ok || old.Error() != err.Error()
}

func (s *CredentialStore) clear(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.errs[host]; !ok {
		return
	}
	delete(s.errs, host)
	for i, h := range s.hosts {
		if h == host {
			s.hosts = append(s.hosts[:i], s.hosts[i+1:]...)
			break
		}
	}
}
