package releaseinfo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/releaseinfo"
)

var errConnRefused = errors.New("dial tcp 10.0.0.1:443: connect: connection refused")

func TestResolve(t *testing.T) {
	t.Parallel()
	const tagRelease = sourceRepo + ":4.18.1-x86_64"
	tagMirror := mirrorpolicy.Rule{Source: sourceRepo, Mirrors: []string{mirrorRepo}, Kind: mirrorpolicy.TagMirrors, Origin: "ImageTagMirrorSet/ocp-release"}
	tests := []struct {
		name     string
		policy   func(t *testing.T) *mirrorpolicy.Policy
		registry map[string]string
		errs     map[string]error
		image    string

		wantPullspec string
		wantMirror   bool
		wantSkipped  []releaseinfo.Skip // Err compared with errors.Is
		wantErr      []error
		wantMessage  string
	}{
		{
			name:         "When the mirror holds the release, it should resolve to the mirror",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			registry:     map[string]string{mirror4181: digest4181, release4181: digest4181},
			image:        release4181,
			wantPullspec: mirror4181,
			wantMirror:   true,
		},
		{
			name:         "When the mirror lags and the policy allows the source, it should fall back to quay.io and say why",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			registry:     map[string]string{release4182: digest4182},
			image:        release4182,
			wantPullspec: release4182,
			wantSkipped:  []releaseinfo.Skip{{Ref: mirror4182, Reason: "manifest unknown", Err: releaseinfo.ErrManifestUnknown}},
		},
		{
			name:         "When ECR answers unauthorized, it should explain that the repository may be missing and fall back",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			registry:     map[string]string{release4182: digest4182},
			errs:         map[string]error{mirror4182: fmt.Errorf("HEAD: %w", releaseinfo.ErrUnauthorized)},
			image:        release4182,
			wantPullspec: release4182,
			wantSkipped:  []releaseinfo.Skip{{Ref: mirror4182, Reason: "unauthorized (on ECR: no such repository, or not readable)", Err: releaseinfo.ErrUnauthorized}},
		},
		{
			name:         "When the mirror is unreachable and the policy allows the source, it should fall back and report the failure",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			registry:     map[string]string{release4181: digest4181},
			errs:         map[string]error{mirror4181: errConnRefused},
			image:        release4181,
			wantPullspec: release4181,
			wantSkipped:  []releaseinfo.Skip{{Ref: mirror4181, Reason: "unreachable: " + errConnRefused.Error(), Err: errConnRefused}},
		},
		{
			name:        "When the mirror lags and the policy forbids the source, it should fail with ErrNotMirrored naming both",
			policy:      func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, true) },
			registry:    map[string]string{release4182: digest4182},
			image:       release4182,
			wantErr:     []error{releaseinfo.ErrNotMirrored, releaseinfo.ErrManifestUnknown},
			wantMessage: "release " + release4182 + " is not yet in " + mirrorRepo + " (manifest unknown) and the policy forbids contacting quay.io",
		},
		{
			name:        "When the mirror is unreachable and the policy forbids the source, it should fail without calling the release absent",
			policy:      func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, true) },
			errs:        map[string]error{mirror4182: errConnRefused},
			image:       release4182,
			wantErr:     []error{releaseinfo.ErrNotMirrored, errConnRefused},
			wantMessage: "release " + release4182 + " could not be found in " + mirrorRepo + " (unreachable: " + errConnRefused.Error() + ") and the policy forbids contacting quay.io",
		},
		{
			name:        "When neither the mirror nor the source holds the release, it should fail listing both answers",
			policy:      func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			image:       release4182,
			wantErr:     []error{releaseinfo.ErrNotMirrored},
			wantMessage: "release " + release4182 + " is not in " + mirrorRepo + " (manifest unknown); source " + sourceRepo + ": manifest unknown",
		},
		{
			name:         "When a tag is resolved through a tag mirror, it should come back digest-pinned on the mirror",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return newPolicy(t, tagMirror) },
			registry:     map[string]string{mirrorRepo + ":4.18.1-x86_64": digest4181},
			image:        tagRelease,
			wantPullspec: mirror4181,
			wantMirror:   true,
		},
		{
			name:         "When a tag has no mirror, it should come back digest-pinned on the source",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			registry:     map[string]string{tagRelease: digest4181},
			image:        tagRelease,
			wantPullspec: release4181,
		},
		{
			name:     "When the prober gives no digest for a tag, it should skip the candidate",
			policy:   func(t *testing.T) *mirrorpolicy.Policy { return newPolicy(t, tagMirror) },
			registry: map[string]string{mirrorRepo + ":4.18.1-x86_64": "", tagRelease: digest4181},
			image:    tagRelease,

			wantPullspec: release4181,
			wantSkipped: []releaseinfo.Skip{{Ref: mirrorRepo + ":4.18.1-x86_64",
				Reason: `unreachable: releaseinfo: prober reported no valid digest for tag reference ` + mirrorRepo + `:4.18.1-x86_64 (got "")`}},
		},
		{
			name:         "When the mirror serves another digest for a digest reference, it should not use the mirror",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			registry:     map[string]string{mirror4181: digest4182, release4181: digest4181},
			image:        release4181,
			wantPullspec: release4181,
			wantSkipped: []releaseinfo.Skip{{Ref: mirror4181,
				Reason: "unreachable: releaseinfo: registry reported digest " + digest4182 + " for " + mirror4181}},
		},
		{
			name:        "When a tag meets a digest-only mirror whose source is forbidden, it should fail with ErrNotMirrored and ErrBlocked",
			policy:      func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, true) },
			image:       tagRelease,
			wantErr:     []error{releaseinfo.ErrNotMirrored, mirrorpolicy.ErrBlocked},
			wantMessage: "release " + tagRelease + " has no allowed pull source: ",
		},
		{
			name:         "When no rule matches, it should check and return the image itself",
			policy:       func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, true) },
			registry:     map[string]string{"registry.ci.openshift.org/ocp/release@" + digest4181: digest4181},
			image:        "registry.ci.openshift.org/ocp/release@" + digest4181,
			wantPullspec: "registry.ci.openshift.org/ocp/release@" + digest4181,
		},
		{
			name:    "When the reference is invalid, it should fail with ErrInvalidReference",
			policy:  func(t *testing.T) *mirrorpolicy.Policy { return releasePolicy(t, false) },
			image:   "quay.io/openshift-release-dev/ocp-release@sha256:short",
			wantErr: []error{mirrorpolicy.ErrInvalidReference},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			registry := map[string]string{}
			for k, v := range tc.registry {
				registry[k] = v
			}
			prober := newMemProber(registry)
			for ref, err := range tc.errs {
				prober.fail(ref, err)
			}
			r, err := releaseinfo.NewResolver(tc.policy(t), prober)
			require.NoError(t, err)

			res, err := r.Resolve(t.Context(), tc.image)
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				require.Nil(t, res)
				for _, want := range tc.wantErr {
					require.ErrorIs(t, err, want)
				}
				if tc.wantMessage != "" {
					require.Contains(t, err.Error(), tc.wantMessage)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.image, res.Image)
			require.Equal(t, tc.wantPullspec, res.Pullspec)
			require.Equal(t, tc.wantMirror, res.Candidate.Mirror)
			require.Len(t, res.Skipped, len(tc.wantSkipped))
			for i, want := range tc.wantSkipped {
				require.Equal(t, want.Ref, res.Skipped[i].Ref)
				require.Equal(t, want.Reason, res.Skipped[i].Reason)
				require.Error(t, res.Skipped[i].Err)
				if want.Err != nil {
					require.ErrorIs(t, res.Skipped[i].Err, want.Err)
				}
			}
		})
	}
}

func TestResolutionString(t *testing.T) {
	t.Parallel()
	prober := newMemProber(map[string]string{release4182: digest4182})
	r, err := releaseinfo.NewResolver(releasePolicy(t, false), prober)
	require.NoError(t, err)
	res, err := r.Resolve(t.Context(), release4182)
	require.NoError(t, err)
	require.Equal(t, release4182+" -> "+release4182+" (source, ImageDigestMirrorSet/ocp-release); skipped "+mirror4182+": manifest unknown", res.String())
	require.Equal(t, "image:    "+release4182+"\npullspec: "+release4182+"\nfrom:     source (ImageDigestMirrorSet/ocp-release)\nskipped:  "+mirror4182+": manifest unknown\n", res.Explain())
	require.Equal(t, digest4182, res.Digest())
}

func TestResolveCache(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		run  func(t *testing.T, r *releaseinfo.Resolver, p *memProber, clk *clocktesting.FakeClock)
	}{
		{
			name: "When a mirror confirmed the release, it should not probe again for five minutes",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber, clk *clocktesting.FakeClock) {
				p.set(mirror4181, digest4181)
				for range 3 {
					res, err := r.Resolve(t.Context(), release4181)
					require.NoError(t, err)
					require.Equal(t, mirror4181, res.Pullspec)
				}
				require.Equal(t, 1, p.callsFor(mirror4181))
				clk.Step(releaseinfo.DefaultPositiveTTL - time.Second)
				_, err := r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, 1, p.callsFor(mirror4181))
				clk.Step(time.Second)
				_, err = r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, 2, p.callsFor(mirror4181))
			},
		},
		{
			name: "When the release reaches the mirror after a miss, it should be found once the negative TTL has passed",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber, clk *clocktesting.FakeClock) {
				p.set(release4182, digest4182)
				res, err := r.Resolve(t.Context(), release4182)
				require.NoError(t, err)
				require.Equal(t, release4182, res.Pullspec)

				p.set(mirror4182, digest4182) // oc adm release mirror catches up
				clk.Step(releaseinfo.DefaultNegativeTTL - time.Second)
				res, err = r.Resolve(t.Context(), release4182)
				require.NoError(t, err)
				require.Equal(t, release4182, res.Pullspec, "a miss is remembered for the negative TTL")
				require.Equal(t, 1, p.callsFor(mirror4182))

				clk.Step(time.Second)
				res, err = r.Resolve(t.Context(), release4182)
				require.NoError(t, err)
				require.Equal(t, mirror4182, res.Pullspec)
			},
		},
		{
			name: "When the mirror fails transiently, it should probe it again after ten seconds, not a minute",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber, clk *clocktesting.FakeClock) {
				p.set(release4181, digest4181)
				p.fail(mirror4181, errConnRefused)
				res, err := r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, release4181, res.Pullspec)

				p.set(mirror4181, digest4181)
				_, err = r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, 1, p.callsFor(mirror4181), "a failure is remembered briefly")

				clk.Step(releaseinfo.DefaultTransientTTL)
				res, err = r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, mirror4181, res.Pullspec)
				require.Equal(t, 2, p.callsFor(mirror4181))
			},
		},
		{
			name: "When the prober panics, it should skip the candidate instead of crashing",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber, _ *clocktesting.FakeClock) {
				p.set(release4181, digest4181)
				p.mu.Lock()
				p.panics[mirror4181] = true
				p.mu.Unlock()
				res, err := r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, release4181, res.Pullspec)
				require.Contains(t, res.Skipped[0].Reason, "prober panicked")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := clocktesting.NewFakeClock(start)
			p := newMemProber(map[string]string{})
			r, err := releaseinfo.NewResolver(releasePolicy(t, false), p, releaseinfo.WithClock(clk))
			require.NoError(t, err)
			tc.run(t, r, p, clk)
		})
	}
}

func TestNewResolver(t *testing.T) {
	t.Parallel()
	prober := newMemProber(nil)
	tests := []struct {
		name    string
		prober  releaseinfo.Prober
		opts    []releaseinfo.ResolverOption
		wantErr string
	}{
		{name: "When the defaults are used, it should succeed", prober: prober},
		{name: "When there is no prober, it should fail", wantErr: "nil prober"},
		{name: "When the positive TTL is zero, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithPositiveTTL(0)}, wantErr: "WithPositiveTTL"},
		{name: "When the negative TTL is negative, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithNegativeTTL(-time.Second)}, wantErr: "WithNegativeTTL"},
		{name: "When the transient TTL is negative, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithTransientTTL(-1)}, wantErr: "WithTransientTTL"},
		{name: "When the transient TTL exceeds the negative TTL, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithNegativeTTL(time.Second), releaseinfo.WithTransientTTL(2 * time.Second)}, wantErr: "exceeds negative TTL"},
		{name: "When the transient TTL is zero, it should succeed", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithTransientTTL(0)}},
		{name: "When the probe timeout is zero, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithProbeTimeout(0)}, wantErr: "WithProbeTimeout"},
		{name: "When the clock is nil, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithClock(nil)}, wantErr: "nil clock"},
		{name: "When the noun is empty, it should fail", prober: prober, opts: []releaseinfo.ResolverOption{releaseinfo.WithNoun("")}, wantErr: "empty noun"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := releaseinfo.NewResolver(nil, tc.prober, tc.opts...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Nil(t, r)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, r)
		})
	}
}

func TestResolveWithoutTransientCache(t *testing.T) {
	t.Parallel()
	p := newMemProber(map[string]string{release4181: digest4181})
	p.fail(mirror4181, errConnRefused)
	r, err := releaseinfo.NewResolver(releasePolicy(t, false), p, releaseinfo.WithTransientTTL(0))
	require.NoError(t, err)
	for range 3 {
		_, err := r.Resolve(t.Context(), release4181)
		require.NoError(t, err)
	}
	require.Equal(t, 3, p.callsFor(mirror4181), "When transient caching is off, it should probe the mirror every time")
}

// The tests below run in a synctest bubble: time is virtual and
// synctest.Wait returns once every goroutine is blocked, so "all callers
// are waiting on the one probe" is observed, not guessed with sleeps.

func TestResolveConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, r *releaseinfo.Resolver, p *memProber)
	}{
		{
			name: "When many callers resolve the same release at once, it should probe each candidate once",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber) {
				p.set(mirror4181, digest4181)
				_, release := p.block(mirror4181)
				const callers = 16
				results := make(chan string, callers)
				var wg sync.WaitGroup
				for range callers {
					wg.Go(func() {
						res, err := r.Resolve(t.Context(), release4181)
						if err != nil {
							results <- err.Error()
							return
						}
						results <- res.Pullspec
					})
				}
				synctest.Wait() // every caller now waits on the single parked probe
				require.EqualValues(t, 1, p.total.Load())
				release()
				wg.Wait()
				close(results)
				for got := range results {
					require.Equal(t, mirror4181, got)
				}
				require.Equal(t, 1, p.callsFor(mirror4181))
			},
		},
		{
			name: "When the caller gives up, it should return at once and let the probe fill the cache",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber) {
				p.set(mirror4181, digest4181)
				entered, release := p.block(mirror4181)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() {
					_, err := r.Resolve(ctx, release4181)
					done <- err
				}()
				<-entered
				cancel()
				require.ErrorIs(t, <-done, context.Canceled)
				release()
				synctest.Wait() // the detached probe has finished and cached its answer
				res, err := r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, mirror4181, res.Pullspec)
				require.Equal(t, 1, p.callsFor(mirror4181))
			},
		},
		{
			name: "When a mirror probe hangs, it should time out on its own deadline and fall back to the source",
			run: func(t *testing.T, r *releaseinfo.Resolver, p *memProber) {
				p.set(mirror4181, digest4181)
				p.set(release4181, digest4181)
				_, release := p.block(mirror4181)
				defer release()
				start := time.Now()
				res, err := r.Resolve(t.Context(), release4181)
				require.NoError(t, err)
				require.Equal(t, time.Second, time.Since(start), "the probe timeout, in virtual time")
				require.Equal(t, release4181, res.Pullspec)
				require.ErrorIs(t, res.Skipped[0].Err, context.DeadlineExceeded)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := newMemProber(map[string]string{})
				r, err := releaseinfo.NewResolver(releasePolicy(t, false), p, releaseinfo.WithProbeTimeout(time.Second))
				require.NoError(t, err)
				tc.run(t, r, p)
			})
		})
	}
}

func TestZeroValues(t *testing.T) {
	t.Parallel()
	_, err := new(releaseinfo.Resolver).Resolve(t.Context(), release4181)
	require.ErrorContains(t, err, "not made by NewResolver", "When the Resolver is a zero value, it should fail cleanly")
	_, err = (&releaseinfo.Decorator[*ReleaseImage]{Delegate: (&recordingProvider{}).Lookup, Resolver: new(releaseinfo.Resolver)}).
		Lookup(t.Context(), release4181, nil)
	require.ErrorContains(t, err, "not made by NewResolver", "When the Decorator holds a zero Resolver, it should fail cleanly")
}
