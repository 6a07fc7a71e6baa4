package registryauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
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
	// Validate the pull secret before anything else: bad input changes
	// nothing and calls nothing. A memoised input was valid.
	var cfg *dockerconfig.Config
	memo, memoHit := k.memo.find(pullSecret)
	if !memoHit {
		var err error
		if cfg, err = dockerconfig.Parse(pullSecret); err != nil {
			return nil, fmt.Errorf("ecr: augment pull secret: %w", err)
		}
	}
	type target struct {
		authKey string
		host    string
		e       *entry
	}
	var targets []target
	seen := make(map[string]bool, len(imagesOrHosts))
	for _, s := range imagesOrHosts {
		host, e, err := k.lookup(s)
		if errors.Is(err, ErrNotECR) || errors.Is(err, ErrPublicRegistry) {
			continue
		}
		if err != nil {
			return nil, err
		}
		authKey := host
		if len(k.roles) > 0 {
			_, authKey = k.roleFor(host, s)
		}
		if seen[authKey] {
			continue
		}
		seen[authKey] = true
		targets = append(targets, target{authKey: authKey, host: host, e: e})
	}
	// Start every cold fetch before waiting on any, so regions load in parallel.
	for _, t := range targets {
		k.prefetch(t.e)
	}
	edits := make([]memoEdit, len(targets))
	for i, t := range targets {
		tok, err := k.token(ctx, t.host, t.e)
		if err != nil {
			return nil, err
		}
		edits[i] = memoEdit{authKey: t.authKey, tok: tok}
	}
	if memoHit && slices.Equal(memo.edits, edits) {
		return bytes.Clone(memo.out), nil // the caller owns the result
	}
	if cfg == nil {
		var err error
		if cfg, err = dockerconfig.Parse(pullSecret); err != nil {
			return nil, fmt.Errorf("ecr: augment pull secret: %w", err)
		}
	}
	for i, t := range targets {
		if err := cfg.SetAuth(t.authKey, edits[i].tok.auth); err != nil {
			return nil, fmt.Errorf("ecr: augment pull secret for %s: %w", t.host, err)
		}
	}
	out := cfg.Marshal()
	k.memo.put(pullSecret, edits, out)
	return out, nil
}

// prefetch starts a fetch for e when it has no servable token, none is in
// flight and no backoff applies. It does not wait.
func (k *Keychain) prefetch(e *entry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := k.clock.Now()
	if tok := e.tok.Load(); tok != nil && tok.servable(now) {
		return
	}
	if e.inflight == nil && (e.lastErr == nil || !now.Before(e.retryAt)) {
		_, _ = k.startFlight(e)
	}
}

// augmentMemo remembers the last few Augment results. HyperShift augments
// the same pull secret with the same tokens on every reconcile; a hit costs
// a comparison and a copy instead of a parse and a serialisation. An entry
// is keyed by the exact input bytes and the exact tokens used (by
// identity), so a rotated token or an edited pull secret never hits. It
// holds nothing the keychain does not already hold in memory, and Close
// drops it.
type augmentMemo struct {
	mu      sync.Mutex
	entries [augmentMemoSize]memoEntry
	next    int
}

const augmentMemoSize = 8

type memoEdit struct {
	authKey string
	tok     *token
}

type memoEntry struct {
	in, out []byte
	edits   []memoEdit
}

// find returns the entry remembered for exactly in. Stored slices are never
// written again, so the copy of the entry stays valid after the lock.
func (m *augmentMemo) find(in []byte) (memoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.entries {
		if e := m.entries[i]; e.out != nil && bytes.Equal(e.in, in) {
			return e, true
		}
	}
	return memoEntry{}, false
}

func (m *augmentMemo) put(in []byte, edits []memoEdit, out []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := memoEntry{in: bytes.Clone(in), out: bytes.Clone(out), edits: edits}
	// One entry per input: a result for rotated tokens replaces the old one,
	// which find would otherwise keep returning.
	for i := range m.entries {
		if m.entries[i].out != nil && bytes.Equal(m.entries[i].in, in) {
			m.entries[i] = e
			return
		}
	}
	m.entries[m.next] = e
	m.next = (m.next + 1) % augmentMemoSize
}

func (m *augmentMemo) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = [augmentMemoSize]memoEntry{}
}
