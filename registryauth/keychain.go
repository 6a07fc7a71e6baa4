package registryauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// Keychain hands out ECR registry credentials fetched with the process's
// own AWS identity. It keeps them in memory only, one token per identity,
// partition, region and API endpoint (a token serves every account of its
// region), refreshes them in the background before they expire and never
// returns an expired one. Make it with NewKeychain; it is safe for
// concurrent use. Close stops its background work.
type Keychain struct {
	parser  *ecrhost.Parser
	factory ClientFactory
	aws     *awsClients
	roles   []RegistryRole
	clock   clock.Clock
	log     logr.Logger
	metrics Metrics

	refreshFraction float64
	expiryMargin    time.Duration
	fetchTimeout    time.Duration
	backoffInitial  time.Duration
	backoffMax      time.Duration

	// index is copy-on-write: warm lookups read it without a lock.
	index   atomic.Pointer[cacheIndex]
	indexMu sync.Mutex

	// ctx is the parent of every fetch: detached from callers, cancelled by Close.
	ctx    context.Context
	cancel context.CancelFunc
	// lifeMu orders wg.Add against Close's wg.Wait.
	lifeMu sync.RWMutex
	closed atomic.Bool
	wg     sync.WaitGroup
	wake   chan struct{}
	memo   augmentMemo
}

// cacheKey is what a token is valid for. It never holds an access key id:
// temporary credentials (IRSA, Pod Identity, instance roles) rotate their
// key ids, the principal does not.
type cacheKey struct {
	identity  Identity
	partition string
	region    string
	fips      bool
	dualStack bool
}

// cacheIndex maps cache keys to entries and, as a shortcut for the warm
// path, normalised registry hosts already parsed to their entry.
type cacheIndex struct {
	byKey  map[cacheKey]*entry
	byHost map[string]hostRef
}

type hostRef struct {
	host string
	e    *entry
}

// maxIndexedHosts bounds the host shortcut: hosts come from image strings,
// and a flood of distinct accounts must not grow memory without end.
const maxIndexedHosts = 4096

type entry struct {
	key cacheKey
	// reg is the first registry seen for the key; every registry of the key
	// gets the same client, so any of them will do for the factory.
	reg ecrhost.Registry
	tok atomic.Pointer[token]
	// usedSinceFetch decides whether the background refresher keeps the
	// token warm: an unused region is left to lapse instead of calling AWS.
	usedSinceFetch atomic.Bool

	mu       sync.Mutex
	inflight *flight
	failures int
	retryAt  time.Time
	lastErr  *TokenError
}

type token struct {
	username, password string
	// auth is base64("user:password"), as ECR returned it and as a
	// dockerconfigjson "auth" field wants it.
	auth      string
	fetchedAt time.Time
	refreshAt time.Time
	expiresAt time.Time
	// The token is served while the clock is before both limits: the wall
	// one (expiresAt minus the margin, without a monotonic reading) holds
	// across a suspended machine, whose monotonic clock stood still; the
	// monotonic one (fetchedAt plus the token's life minus the margin)
	// holds when the wall clock is set back.
	servableWall, servableMono time.Time
}

// servable reports whether the token may still be handed out at now.
func (t *token) servable(now time.Time) bool {
	return now.Before(t.servableWall) && now.Before(t.servableMono)
}

type flight struct {
	done chan struct{}
	tok  *token
	err  *TokenError
}

// NewKeychain returns a Keychain. It needs WithClientFactory or
// WithAWSConfig; see the Option docs for the defaults of everything else.
func NewKeychain(opts ...Option) (*Keychain, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("registryauth: %w", err)
		}
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	parser, err := ecrhost.NewParser(o.aliases...)
	if err != nil {
		return nil, fmt.Errorf("registryauth: %w", err)
	}
	k := &Keychain{
		parser:          parser,
		factory:         o.factory,
		roles:           append([]RegistryRole(nil), o.roles...),
		clock:           o.clock,
		log:             o.log,
		metrics:         o.metrics,
		refreshFraction: o.refreshFraction,
		expiryMargin:    o.expiryMargin,
		fetchTimeout:    o.fetchTimeout,
		backoffInitial:  o.backoffInitial,
		backoffMax:      o.backoffMax,
		wake:            make(chan struct{}, 1),
	}
	for i := range k.roles {
		k.roles[i].Match = strings.TrimSuffix(strings.ToLower(k.roles[i].Match), "/")
	}
	if o.awsConfig != nil {
		k.aws = newAWSClients(*o.awsConfig, o.clientOpts...)
		if k.factory == nil {
			k.factory = func(ctx context.Context, reg ecrhost.Registry) (ECRAPI, error) {
				return k.aws.client(reg, Identity{}), nil
			}
		}
	}
	k.index.Store(&cacheIndex{byKey: map[cacheKey]*entry{}, byHost: map[string]hostRef{}})
	k.ctx, k.cancel = context.WithCancel(context.Background())
	k.wg.Add(1)
	go k.refreshLoop()
	return k, nil
}

// Credential returns a credential for the ECR registry named by
// registryHostOrImage (a host, host:port, URL or image reference). A warm
// lookup reads memory only. On a miss it waits for one fetch shared with
// every concurrent caller for the same region; if ctx ends first it returns
// ctx's error at once while the fetch goes on and fills the cache. A host
// that is not ECR gives an error matching ErrNotECR, ECR Public one
// matching ErrPublicRegistry.
func (k *Keychain) Credential(ctx context.Context, registryHostOrImage string) (Credential, error) {
	host, e, err := k.lookup(registryHostOrImage)
	if err != nil {
		return Credential{}, err
	}
	tok, err := k.token(ctx, host, e)
	if err != nil {
		return Credential{}, err
	}
	return Credential{Registry: host, Username: tok.username, Password: tok.password, ExpiresAt: tok.expiresAt}, nil
}

// Forget drops the cached token serving registryHostOrImage, so that the
// next lookup fetches a new one. Call it when a registry rejects a token
// the keychain handed out (revoked early, or the identity's permissions
// changed); it does nothing for hosts that are not ECR.
func (k *Keychain) Forget(registryHostOrImage string) {
	if _, e, err := k.lookup(registryHostOrImage); err == nil {
		e.mu.Lock()
		e.tok.Store(nil)
		e.mu.Unlock()
	}
}

// Close stops background refreshes, cancels fetches in flight and waits for
// them. Later lookups fail with ErrClosed. It is safe to call more than once.
func (k *Keychain) Close() error {
	k.lifeMu.Lock()
	k.closed.Store(true)
	k.lifeMu.Unlock()
	k.cancel()
	k.wg.Wait()
	k.memo.clear()
	return nil
}

// lookup returns the normalised registry host named by s and its cache
// entry. It returns the host, not the parsed Registry: the warm path copies
// nothing it does not hand out.
func (k *Keychain) lookup(s string) (string, *entry, error) {
	if k.closed.Load() {
		return "", nil, ErrClosed
	}
	idx := k.index.Load()
	// Shortcut: a host (or image on a host) already parsed and normalised
	// needs no parse. Roles depend on the repository path, so they take the
	// full route.
	if len(k.roles) == 0 {
		host := s
		if i := strings.IndexByte(s, '/'); i >= 0 {
			host = s[:i]
		}
		if ref, ok := idx.byHost[host]; ok {
			return ref.host, ref.e, nil
		}
	}
	reg, ok := k.parser.Parse(s)
	if !ok {
		return "", nil, &NotECRError{Input: s}
	}
	if reg.Public {
		return "", nil, fmt.Errorf("ecr: %s: %w", reg.Host, ErrPublicRegistry)
	}
	key := cacheKey{partition: reg.Partition, region: reg.Region, fips: reg.FIPS, dualStack: reg.DualStack}
	if len(k.roles) > 0 {
		key.identity, _ = k.roleFor(reg.Host, s)
		if e, ok := idx.byKey[key]; ok {
			return reg.Host, e, nil
		}
	}
	return reg.Host, k.addEntry(key, reg), nil
}

// addEntry returns the entry for key, creating it, and indexes reg.Host.
func (k *Keychain) addEntry(key cacheKey, reg ecrhost.Registry) *entry {
	k.indexMu.Lock()
	defer k.indexMu.Unlock()
	old := k.index.Load()
	e, haveEntry := old.byKey[key]
	_, haveHost := old.byHost[reg.Host]
	if haveEntry && (haveHost || len(k.roles) > 0 || len(old.byHost) >= maxIndexedHosts) {
		return e
	}
	next := old.clone()
	if !haveEntry {
		e = &entry{key: key, reg: reg}
		next.byKey[key] = e
	}
	if len(k.roles) == 0 && len(next.byHost) < maxIndexedHosts {
		next.byHost[reg.Host] = hostRef{host: reg.Host, e: e}
	}
	k.index.Store(next)
	return e
}

func (idx *cacheIndex) clone() *cacheIndex {
	next := &cacheIndex{
		byKey:  make(map[cacheKey]*entry, len(idx.byKey)+1),
		byHost: make(map[string]hostRef, len(idx.byHost)+1),
	}
	for key, e := range idx.byKey {
		next.byKey[key] = e
	}
	for host, ref := range idx.byHost {
		next.byHost[host] = ref
	}
	return next
}

// token is the hot path: a map read, a clock read and two atomic loads when
// warm.
func (k *Keychain) token(ctx context.Context, host string, e *entry) (*token, error) {
	now := k.clock.Now()
	if tok := e.tok.Load(); tok != nil && tok.servable(now) {
		k.metrics.CacheHit(e.key.partition, e.key.region)
		if !e.usedSinceFetch.Load() && !e.usedSinceFetch.Swap(true) {
			k.nudge() // the refresher now has a used token to keep warm
		}
		if !now.Before(tok.refreshAt) {
			k.refreshAhead(e, now)
		}
		return tok, nil
	}
	k.metrics.CacheMiss(e.key.partition, e.key.region)
	return k.await(ctx, host, e)
}

// await waits for a usable token: the one a flight in progress brings, or
// a new flight's. Within the backoff window after a failure it returns that
// failure at once instead of calling ECR again.
func (k *Keychain) await(ctx context.Context, host string, e *entry) (*token, error) {
	e.mu.Lock()
	now := k.clock.Now()
	if tok := e.tok.Load(); tok != nil && tok.servable(now) {
		e.mu.Unlock()
		return tok, nil
	}
	f := e.inflight
	if f == nil {
		if e.lastErr != nil && now.Before(e.retryAt) {
			err := e.lastErr.forRegistry(host)
			e.mu.Unlock()
			return nil, err
		}
		var err error
		if f, err = k.startFlight(e); err != nil {
			e.mu.Unlock()
			return nil, err
		}
	}
	e.mu.Unlock()

	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("ecr: waiting for a token for %s: %w", host, context.Cause(ctx))
	case <-f.done:
	}
	if f.err != nil {
		return nil, f.err.forRegistry(host)
	}
	// A fresh token is usable until it expires; the margin only limits how
	// long a cached one is served.
	if !k.clock.Now().Before(f.tok.expiresAt) {
		return nil, k.tokenError(e.reg, ErrInvalidToken, errors.New("ECR returned a token that has already expired (check the clock)")).forRegistry(host)
	}
	return f.tok, nil
}

// refreshAhead starts a background refresh unless one runs already or the
// last failure's backoff has not elapsed. It never blocks the caller.
func (k *Keychain) refreshAhead(e *entry, now time.Time) {
	if !e.mu.TryLock() {
		return // another caller is deciding the same thing
	}
	defer e.mu.Unlock()
	if e.inflight == nil && !now.Before(e.retryAt) {
		_, _ = k.startFlight(e)
	}
}

// startFlight must be called with e.mu held.
func (k *Keychain) startFlight(e *entry) (*flight, error) {
	k.lifeMu.RLock()
	defer k.lifeMu.RUnlock()
	if k.closed.Load() {
		return nil, ErrClosed
	}
	f := &flight{done: make(chan struct{})}
	e.inflight = f
	k.wg.Add(1)
	go k.fly(e, f)
	return f, nil
}

func (k *Keychain) fly(e *entry, f *flight) {
	defer k.wg.Done()
	defer close(f.done)
	tok, terr := k.fetch(e)

	e.mu.Lock()
	defer e.mu.Unlock()
	e.inflight = nil
	f.tok, f.err = tok, terr
	now := k.clock.Now()
	if terr == nil {
		e.tok.Store(tok)
		e.usedSinceFetch.Store(false)
		e.failures, e.retryAt, e.lastErr = 0, time.Time{}, nil
		k.metrics.TokenExpiry(e.key.partition, e.key.region, tok.expiresAt)
		k.nudge()
		return
	}
	if errors.Is(terr, ErrClosed) {
		return
	}
	e.failures++
	e.retryAt = now.Add(k.backoff(e.failures))
	e.lastErr = terr
	if old := e.tok.Load(); old != nil {
		servedUntil := old.servableWall
		k.metrics.RefreshFailure(e.key.partition, e.key.region, outcomeOf(terr))
		k.log.Error(terr, "ECR token refresh failed; serving the cached token while it is valid",
			"partition", e.key.partition, "region", e.key.region, "servedUntil", servedUntil, "retryAt", e.retryAt)
		if !old.servable(now) {
			e.tok.Store(nil)
		}
	}
	k.nudge()
}

// fetch calls GetAuthorizationToken on the keychain's own context: a caller
// giving up must not waste a fetch every other caller is waiting for.
func (k *Keychain) fetch(e *entry) (*token, *TokenError) {
	ctx, cancel := context.WithTimeout(k.ctx, k.fetchTimeout)
	defer cancel()
	reg := e.reg
	start := k.clock.Now()

	client, err := k.clientFor(ctx, e)
	if err != nil {
		return nil, k.failure(reg, err, start)
	}
	out, err := client.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return nil, k.failure(reg, err, start)
	}
	tok, err := k.parseToken(out, start)
	if err != nil {
		k.metrics.TokenFetch(e.key.partition, e.key.region, "invalid_token", k.clock.Since(start))
		return nil, k.tokenError(reg, ErrInvalidToken, err)
	}
	k.metrics.TokenFetch(e.key.partition, e.key.region, "ok", k.clock.Since(start))
	k.log.V(1).Info("fetched ECR authorization token", "partition", e.key.partition, "region", e.key.region,
		"endpoint", k.endpointLabel(reg), "expiresAt", tok.expiresAt, "refreshAt", tok.refreshAt)
	return tok, nil
}

func (k *Keychain) clientFor(ctx context.Context, e *entry) (ECRAPI, error) {
	if e.key.identity != (Identity{}) {
		return k.aws.client(e.reg, e.key.identity), nil
	}
	return k.factory(ctx, e.reg)
}

func (k *Keychain) failure(reg ecrhost.Registry, err error, start time.Time) *TokenError {
	if k.ctx.Err() != nil {
		return &TokenError{Registry: reg.Host, Region: reg.Region, Partition: reg.Partition, Kind: ErrClosed}
	}
	kind, outcome, hint := classify(err, reg)
	k.metrics.TokenFetch(reg.Partition, reg.Region, outcome, k.clock.Since(start))
	te := k.tokenError(reg, kind, err)
	te.Hint = hint
	return te
}

func (k *Keychain) tokenError(reg ecrhost.Registry, kind, cause error) *TokenError {
	return &TokenError{
		Registry:  reg.Host,
		Region:    reg.Region,
		Partition: reg.Partition,
		Endpoint:  k.endpointLabel(reg),
		Kind:      kind,
		Err:       cause,
	}
}

func (k *Keychain) endpointLabel(reg ecrhost.Registry) string {
	return k.aws.endpointLabel(reg)
}

// parseToken validates ECR's answer. Its errors never quote the token.
func (k *Keychain) parseToken(out *ecr.GetAuthorizationTokenOutput, fetchedAt time.Time) (*token, error) {
	if out == nil || len(out.AuthorizationData) == 0 {
		return nil, errors.New("ECR returned no authorization data")
	}
	d := out.AuthorizationData[0]
	if d.AuthorizationToken == nil || d.ExpiresAt == nil {
		return nil, errors.New("ECR returned authorization data without a token or an expiry")
	}
	raw, err := base64.StdEncoding.DecodeString(*d.AuthorizationToken)
	if err != nil {
		return nil, errors.New("ECR returned a token that is not valid base64")
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" || pass == "" {
		return nil, errors.New(`ECR returned a token that is not of the form "user:password"`)
	}
	expiresAt := *d.ExpiresAt
	if limit := fetchedAt.Add(maxTokenLifetime); expiresAt.After(limit) {
		expiresAt = limit
	}
	life := expiresAt.Sub(fetchedAt)
	if life <= 0 {
		return nil, errors.New("ECR returned a token that has already expired (check the clock)")
	}
	ahead := time.Duration(float64(life) * k.refreshFraction * (1 - 0.1*rand.Float64()))
	// A token that arrives with less than twice the margin left (a local
	// clock running almost a token's life ahead of ECR's) is served for
	// half its remaining life: with the full margin it would never be
	// servable, and every lookup would call ECR.
	margin := min(k.expiryMargin, life/2)
	return &token{
		username:     user,
		password:     pass,
		auth:         *d.AuthorizationToken,
		fetchedAt:    fetchedAt,
		refreshAt:    fetchedAt.Add(ahead),
		expiresAt:    expiresAt,
		servableWall: expiresAt.Round(0).Add(-margin),
		servableMono: fetchedAt.Add(life - margin),
	}, nil
}

// backoff is exponential with equal jitter: at least half the nominal wait,
// so a failing region cannot be hammered, and spread so that keychains
// started together do not retry together.
func (k *Keychain) backoff(failures int) time.Duration {
	d := k.backoffInitial
	for i := 1; i < failures && d < k.backoffMax; i++ {
		d *= 2
	}
	d = min(d, k.backoffMax)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// refreshLoop keeps used tokens warm: it wakes at the earliest refresh time
// of any entry and starts the due refreshes, so that callers never wait for
// a token they keep using. Entries nobody used since their last fetch are
// left to expire and are then dropped.
func (k *Keychain) refreshLoop() {
	defer k.wg.Done()
	for {
		next := k.refreshDue(k.clock.Now())
		var timer clock.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			timer = k.clock.NewTimer(next.Sub(k.clock.Now()))
			fire = timer.C()
		}
		select {
		case <-k.ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-k.wake:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// refreshDue starts due refreshes and returns when to look again (zero:
// nothing scheduled until a fetch completes and nudges the loop).
func (k *Keychain) refreshDue(now time.Time) time.Time {
	var next time.Time
	var expired []cacheKey
	for key, e := range k.index.Load().byKey {
		e.mu.Lock()
		tok := e.tok.Load()
		switch {
		case e.inflight != nil:
		case tok == nil:
			// Never fetched yet, failed, or forgotten: the next caller fetches.
		case !tok.servable(now):
			e.tok.Store(nil)
			if !e.usedSinceFetch.Load() {
				expired = append(expired, key)
			}
		case !e.usedSinceFetch.Load():
			// Idle since the last fetch: look again when it can no longer be served.
			next = earliest(next, tok.servableWall)
		default:
			due := tok.refreshAt
			if due.Before(e.retryAt) {
				due = e.retryAt
			}
			if !now.Before(due) {
				_, _ = k.startFlight(e)
			} else {
				next = earliest(next, due)
			}
		}
		e.mu.Unlock()
	}
	if len(expired) > 0 {
		k.dropEntries(expired)
	}
	return next
}

func (k *Keychain) dropEntries(keys []cacheKey) {
	k.indexMu.Lock()
	defer k.indexMu.Unlock()
	next := k.index.Load().clone()
	for _, key := range keys {
		e := next.byKey[key]
		// Re-check under the entry lock: a caller may have revived it.
		e.mu.Lock()
		if e.inflight == nil && e.tok.Load() == nil {
			delete(next.byKey, key)
			for host, ref := range next.byHost {
				if ref.e == e {
					delete(next.byHost, host)
				}
			}
		}
		e.mu.Unlock()
	}
	k.index.Store(next)
}

func (k *Keychain) nudge() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// roleFor returns the identity configured for host and the entry key its
// dockerconfigjson entry should use ("host" or "host/prefix").
func (k *Keychain) roleFor(host, input string) (Identity, string) {
	path := repositoryPath(input)
	best, bestLen := -1, -1
	for i, r := range k.roles {
		rh, rp, _ := strings.Cut(r.Match, "/")
		if rh != host {
			continue
		}
		if rp != "" && path != rp && !strings.HasPrefix(path, rp+"/") {
			continue
		}
		if len(rp) > bestLen {
			best, bestLen = i, len(rp)
		}
	}
	if best < 0 {
		return Identity{}, host
	}
	r := k.roles[best]
	return Identity{RoleARN: r.RoleARN, ExternalID: r.ExternalID}, r.Match
}

// repositoryPath extracts "ns/repo" from a host, URL or image reference.
func repositoryPath(s string) string {
	s = strings.ToLower(s)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	_, path, ok := strings.Cut(s, "/")
	if !ok {
		return ""
	}
	if i := strings.IndexByte(path, '@'); i >= 0 {
		path = path[:i]
	}
	if i := strings.LastIndexByte(path, ':'); i >= 0 && !strings.Contains(path[i:], "/") {
		path = path[:i]
	}
	return strings.TrimPrefix(strings.TrimSuffix(path, "/"), "v2/")
}

func outcomeOf(err *TokenError) string {
	switch err.Kind {
	case ErrAccessDenied:
		return "access_denied"
	case ErrThrottled:
		return "throttled"
	case ErrNoAWSCredentials:
		return "no_credentials"
	case ErrEndpointUnreachable:
		return "endpoint_unreachable"
	case ErrInvalidToken:
		return "invalid_token"
	}
	return "error"
}

// forRegistry returns the shared failure as seen by the caller's registry:
// one failed fetch serves every account of a region.
func (e *TokenError) forRegistry(host string) *TokenError {
	if e.Registry == host {
		return e
	}
	c := *e
	c.Registry = host
	return &c
}
