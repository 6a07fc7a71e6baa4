package releaseinfo_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
)

// The keychain is what HyperShift passes as the Augmenter.
var _ releaseinfo.Augmenter = (*registryauth.Keychain)(nil)

// hashSimple is HyperShift's support/util.HashSimple: FNV-1a 32 of
// fmt.Sprintf("%v", o), as 8 hex digits.
func hashSimple(o any) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(fmt.Sprintf("%v", o)))
	return fmt.Sprintf("%08x", h.Sum32())
}

// mcoBootstrap stands for the ignition generator's MCO bootstrap step: MCO
// renders --pull-secret verbatim into the node's /var/lib/kubelet/config.json.
func mcoBootstrap(pullSecret []byte) (kubeletConfigJSON []byte) {
	return bytes.Clone(pullSecret)
}

// TestIgnitionRuleAcrossTokenRotations replays HyperShift's ignition flow
// (local_ignitionprovider.GetPayload) over ten ECR token rotations: read the
// pull secret, pass the hash gate, access registries, run MCO bootstrap.
func TestIgnitionRuleAcrossTokenRotations(t *testing.T) {
	t.Parallel()
	const rotations = 10
	clk := clocktesting.NewFakeClock(time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))
	ecrAPI := fakeecr.New(fakeecr.WithClock(clk))
	mirror := fakeregistry.New(t, fakeregistry.WithAuthenticator(ecrAPI.Authenticator()), fakeregistry.WithClock(clk))
	img, err := random.Image(512, 1)
	require.NoError(t, err)
	pinned := mirror.Push(t, mirrorRepo+":4.18.1-x86_64", img)
	release := sourceRepo + "@" + digestOf(t, pinned)

	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(ecrAPI.ClientFactory), registryauth.WithClock(clk))
	require.NoError(t, err)
	t.Cleanup(func() { _ = kc.Close() })
	images, err := releaseinfo.CandidateRefs(releasePolicy(t, false), release)
	require.NoError(t, err)

	// What the HostedCluster's pull secret holds, and the hash the NodePool
	// token secret recorded when it was created.
	secret := []byte(callerPullSecret)
	tokenSecretHash := hashSimple(secret)

	var (
		bootstrapped [][]byte
		hashInputs   []string
		effective    = map[string]bool{}
		prevPassword string
	)
	for rotation := 1; rotation <= rotations; rotation++ {
		clk.Step(12*time.Hour + 30*time.Minute) // every token issued so far has expired

		// 1. read <hcp-ns>/pull-secret; the rule: augment in memory.
		ps, err := releaseinfo.EffectivePullSecret(t.Context(), kc, secret, images...)
		require.NoError(t, err)
		require.NotContains(t, ps.String(), "AWS")

		// 2. the hash gate uses Original.
		hashInputs = append(hashInputs, fmt.Sprintf("%v", ps.Original))
		require.Equal(t, tokenSecretHash, hashSimple(ps.Original), "rotation %d: pull secret does not match hash", rotation)

		// 3. registry access uses Effective: its ECR credential opens the mirror.
		password, ok := authFor(t, ps.Effective, ecrHost)
		require.True(t, ok, "rotation %d: Effective has ECR credentials", rotation)
		require.NotEqual(t, prevPassword, password, "rotation %d: a new token", rotation)
		require.NoError(t, head(t, mirror, pinned, password), "rotation %d: the effective pull secret reads the mirror", rotation)
		if prevPassword != "" {
			err := head(t, mirror, pinned, prevPassword)
			var terr *transport.Error
			require.ErrorAs(t, err, &terr, "rotation %d: the previous token has expired", rotation)
			require.Equal(t, 401, terr.StatusCode)
		}
		_, ok = authFor(t, ps.Original, ecrHost)
		require.False(t, ok, "rotation %d: Original holds no ECR credentials", rotation)
		effective[string(ps.Effective)] = true
		prevPassword = password

		// 4. MCO bootstrap gets Original.
		bootstrapped = append(bootstrapped, mcoBootstrap(ps.Original))
	}

	require.Len(t, effective, rotations, "Effective changes on every rotation")
	for i := range bootstrapped {
		require.Equal(t, bootstrapped[0], bootstrapped[i], "the bytes MCO renders onto nodes never change")
		require.Equal(t, hashInputs[0], hashInputs[i])
	}
	require.Equal(t, callerPullSecret, string(secret), "the stored pull secret is never modified")

	issued := ecrAPI.Calls("us-east-1")
	require.GreaterOrEqual(t, issued, rotations)
	seen := 0
	for n := 1; n <= issued; n++ {
		pw := fakeecr.Password("us-east-1", n)
		for e := range effective {
			if bytes.Contains([]byte(e), []byte(pw)) || bytes.Contains([]byte(e), []byte(b64("AWS:"+pw))) {
				seen++
			}
		}
		for i := range bootstrapped {
			require.NotContains(t, string(bootstrapped[i]), pw)
			require.NotContains(t, string(bootstrapped[i]), b64("AWS:"+pw))
			require.NotContains(t, hashInputs[i], pw)
		}
	}
	require.Equal(t, rotations, seen, "each Effective carried one token the fake issued, so the checks above are not vacuous")
}

func head(t *testing.T, reg *fakeregistry.Registry, ref, password string) error {
	t.Helper()
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	_, err = remote.Head(r, remote.WithContext(t.Context()), remote.WithTransport(reg.Transport()),
		remote.WithAuth(&authn.Basic{Username: "AWS", Password: password}))
	return err
}

func digestOf(t *testing.T, ref string) string {
	t.Helper()
	d, err := name.NewDigest(ref)
	require.NoError(t, err)
	return d.DigestStr()
}

// stubAugmenter returns out (or err) and records its input.
type stubAugmenter struct {
	out  []byte
	err  error
	seen [][]byte
}

func (s *stubAugmenter) Augment(_ context.Context, pullSecret []byte, _ ...string) ([]byte, error) {
	s.seen = append(s.seen, pullSecret)
	if s.out == nil && s.err == nil {
		return pullSecret, nil // returns its input
	}
	return s.out, s.err
}

func TestEffectivePullSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		aug           releaseinfo.Augmenter
		wantEffective string
		wantErr       error
	}{
		{
			name:          "When there is no augmenter, it should return two copies of the original",
			wantEffective: callerPullSecret,
		},
		{
			name:          "When the augmenter adds credentials, it should return them as Effective only",
			aug:           &stubAugmenter{out: []byte(`{"auths":{"quay.io":{},"123456789012.dkr.ecr.us-east-1.amazonaws.com":{}}}`)},
			wantEffective: `{"auths":{"quay.io":{},"123456789012.dkr.ecr.us-east-1.amazonaws.com":{}}}`,
		},
		{
			name:          "When the augmenter returns its input, it should still not alias the caller's bytes",
			aug:           &stubAugmenter{},
			wantEffective: callerPullSecret,
		},
		{
			name:    "When the augmenter fails, it should return its error and no secret",
			aug:     &stubAugmenter{err: registryauth.ErrAccessDenied},
			wantErr: registryauth.ErrAccessDenied,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			original := []byte(callerPullSecret)
			ps, err := releaseinfo.EffectivePullSecret(t.Context(), tc.aug, original, mirror4181)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Nil(t, ps.Original)
				require.Nil(t, ps.Effective)
				return
			}
			require.NoError(t, err)
			require.Equal(t, callerPullSecret, string(ps.Original))
			require.Equal(t, tc.wantEffective, string(ps.Effective))
			// Writing through the results must not reach the caller's bytes or each other.
			ps.Original[0], ps.Effective[0] = 'X', 'Y'
			require.Equal(t, callerPullSecret, string(original))
			require.NotEqual(t, ps.Original[0], ps.Effective[0])
			redacted := fmt.Sprintf("PullSecrets{Original:<%d bytes> Effective:<%d bytes>}", len(ps.Original), len(ps.Effective))
			require.Equal(t, redacted, fmt.Sprintf("%v", ps))
			require.Equal(t, redacted, fmt.Sprintf("%#v", ps))
		})
	}
}

func b64(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(s))
}
