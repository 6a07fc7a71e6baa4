package releaseinfo_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/releaseinfo"
)

// Real pullspecs: the 4.18.1 and 4.18.2 x86_64 release digests and the ECR
// repository `oc adm release mirror` writes to in the tests.
const (
	ecrHost    = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	mirrorRepo = ecrHost + "/ocp4/openshift4"
	sourceRepo = "quay.io/openshift-release-dev/ocp-release"

	digest4181 = "sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1"
	digest4182 = "sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"

	release4181 = sourceRepo + "@" + digest4181
	release4182 = sourceRepo + "@" + digest4182
	mirror4181  = mirrorRepo + "@" + digest4181
	mirror4182  = mirrorRepo + "@" + digest4182
)

// memProber is an in-memory registry: refs it holds map to digests, errs
// force an answer for a ref, anything else is ErrManifestUnknown. It counts
// probes per ref and can hold probes until released.
type memProber struct {
	mu      sync.Mutex
	digests map[string]string
	errs    map[string]error
	panics  map[string]bool
	calls   map[string]int
	total   atomic.Int64
	gates   map[string]chan struct{} // held refs
	entered chan string
}

func newMemProber(digests map[string]string) *memProber {
	return &memProber{digests: digests, errs: map[string]error{}, panics: map[string]bool{}, calls: map[string]int{},
		gates: map[string]chan struct{}{}, entered: make(chan string, 64)}
}

func (m *memProber) Probe(ctx context.Context, ref string) (string, error) {
	m.total.Add(1)
	m.mu.Lock()
	m.calls[ref]++
	gate := m.gates[ref]
	m.mu.Unlock()
	if gate != nil {
		m.entered <- ref
		select {
		case <-gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.panics[ref] {
		panic("prober bug")
	}
	if err, ok := m.errs[ref]; ok {
		return "", err
	}
	if d, ok := m.digests[ref]; ok {
		return d, nil
	}
	return "", releaseinfo.ErrManifestUnknown
}

func (m *memProber) set(ref, digest string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.digests[ref] = digest
	delete(m.errs, ref)
}

func (m *memProber) fail(ref string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs[ref] = err
}

func (m *memProber) callsFor(ref string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[ref]
}

// block makes later probes of ref wait for release (or their context);
// each held probe reports ref on entered first.
func (m *memProber) block(ref string) (entered <-chan string, release func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	gate := make(chan struct{})
	m.gates[ref] = gate
	var once sync.Once
	return m.entered, func() { once.Do(func() { close(gate) }) }
}

// releasePolicy is what `oc adm release mirror --to=<mirrorRepo>` prints,
// with mirrorSourcePolicy set as given.
func releasePolicy(t testing.TB, never bool) *mirrorpolicy.Policy {
	t.Helper()
	policy := configv1.AllowContactingSource
	if never {
		policy = configv1.NeverContactSource
	}
	idms := configv1.ImageDigestMirrorSet{}
	idms.Name = "ocp-release"
	for _, src := range []string{sourceRepo, "quay.io/openshift-release-dev/ocp-v4.0-art-dev"} {
		idms.Spec.ImageDigestMirrors = append(idms.Spec.ImageDigestMirrors, configv1.ImageDigestMirrors{
			Source: src, Mirrors: []configv1.ImageMirror{configv1.ImageMirror(mirrorRepo)}, MirrorSourcePolicy: policy,
		})
	}
	rules, err := mirrorpolicy.FromImageDigestMirrorSets(idms)
	require.NoError(t, err)
	p, err := mirrorpolicy.New(rules...)
	require.NoError(t, err)
	return p
}

func newPolicy(t testing.TB, rules ...mirrorpolicy.Rule) *mirrorpolicy.Policy {
	t.Helper()
	p, err := mirrorpolicy.New(rules...)
	require.NoError(t, err)
	return p
}
