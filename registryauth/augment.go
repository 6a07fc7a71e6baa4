package registryauth

import (
	"context"
	"errors"
	"fmt"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// Augment returns a new dockerconfigjson: pullSecret with a fresh ECR entry
// for every ECR registry among imagesOrHosts (hosts, URLs or image
// references; others are ignored). An existing entry for such a host, in
// any key form ("https://host", "host/"), is replaced: a stale token there
// would shadow the fresh one. Everything else, unknown fields included, is
// kept, and the output is byte-identical for identical inputs and tokens.
// pullSecret is never modified. The result holds live tokens: use it for
// registry access only, never store it (see the package documentation).
func (k *Keychain) Augment(ctx context.Context, pullSecret []byte, imagesOrHosts ...string) ([]byte, error) {
	cfg, err := dockerconfig.Parse(pullSecret)
	if err != nil {
		return nil, fmt.Errorf("ecr: augment pull secret: %w", err)
	}
	type target struct {
		authKey string
		reg     ecrhost.Registry
		e       *entry
	}
	var targets []target
	seen := make(map[string]bool, len(imagesOrHosts))
	for _, s := range imagesOrHosts {
		reg, e, err := k.lookup(s)
		if errors.Is(err, ErrNotECR) || errors.Is(err, ErrPublicRegistry) {
			continue
		}
		if err != nil {
			return nil, err
		}
		authKey := reg.Host
		if len(k.roles) > 0 {
			_, authKey = k.roleFor(reg.Host, s)
		}
		if seen[authKey] {
			continue
		}
		seen[authKey] = true
		targets = append(targets, target{authKey: authKey, reg: reg, e: e})
	}
	// Start every cold fetch before waiting on any, so regions load in parallel.
	for _, t := range targets {
		k.prefetch(t.e)
	}
	for _, t := range targets {
		tok, err := k.token(ctx, t.reg, t.e)
		if err != nil {
			return nil, err
		}
		if err := cfg.SetAuth(t.authKey, tok.auth); err != nil {
			return nil, fmt.Errorf("ecr: augment pull secret for %s: %w", t.reg.Host, err)
		}
	}
	return cfg.Marshal(), nil
}

// prefetch starts a fetch for e when it has no servable token, none is in
// flight and no backoff applies. It does not wait.
func (k *Keychain) prefetch(e *entry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := k.clock.Now()
	if tok := e.tok.Load(); tok != nil && now.Before(tok.expiresAt.Add(-k.expiryMargin)) {
		return
	}
	if e.inflight == nil && (e.lastErr == nil || !now.Before(e.retryAt)) {
		_, _ = k.startFlight(e)
	}
}
