package releaseinfo_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/secretcheck"
)

// augmentOnly hides Forget: a Keychain that cannot drop a token.
type augmentOnly struct{ releaseinfo.Augmenter }

// revokingProvider is a leaf whose ECR mirror rejects some passwords the
// way ECR rejects a revoked token, and otherwise serves what it holds.
type revokingProvider struct {
	recordingProvider
	t *testing.T
	// rejects maps a password to the error the mirror answers it with.
	rejects map[string]error
	// onReject runs when a password is rejected (to break ECR afterwards).
	onReject func()
}

func (p *revokingProvider) Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	pass, _ := authFor(p.t, pullSecret, ecrHost)
	if err, ok := p.rejects[pass]; ok && image == mirror4181 {
		p.mu.Lock()
		p.calls = append(p.calls, providerCall{image: image, pullSecret: pullSecret})
		p.mu.Unlock()
		if p.onReject != nil {
			p.onReject()
		}
		return nil, err
	}
	return p.recordingProvider.Lookup(ctx, image, pullSecret)
}

var (
	errTokenRevoked = registryError(http.StatusUnauthorized, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
	// ECR's answer to a token it no longer accepts; distribution keeps the code, not the 401.
	errNotAuthorized = registryError(http.StatusUnauthorized, `{"errors":[{"code":"DENIED","message":"Not Authorized"}]}`)
	errTokenExpired  = registryError(http.StatusForbidden, `{"errors":[{"code":"DENIED","message":"Your authorization token has expired. Reauthenticate and try again."}]}`)
	errNoPermission  = registryError(http.StatusForbidden, `{"errors":[{"code":"DENIED","message":"User: arn:aws:sts::123456789012:assumed-role/worker is not authorized to perform: ecr:BatchGetImage"}]}`)
)

// TestFaultDecoratorTokenRevokedEarly: an ECR mirror answers 401 with a
// token the keychain still holds as valid. The Decorator forgets it,
// augments the pull secret again (one new ECR call) and retries that
// candidate once before moving on.
func TestFaultDecoratorTokenRevokedEarly(t *testing.T) {
	t.Parallel()
	p1, p2 := fakeecr.Password("us-east-1", 1), fakeecr.Password("us-east-1", 2)
	tests := []struct {
		name          string
		never         bool
		rejects       map[string]error
		cannotForget  bool
		denyAfter     bool // ECR denies the identity once the first token is rejected
		wantRelease   string
		wantCalls     []string
		wantPasswords []string // the ECR password each leaf call got
		wantECRCalls  int
		wantErr       []error
	}{
		{
			name:          "When the mirror rejects the cached token, it should forget it, augment again and read the mirror",
			rejects:       map[string]error{p1: errTokenRevoked},
			wantRelease:   "4.18.1",
			wantCalls:     []string{mirror4181, mirror4181},
			wantPasswords: []string{p1, p2},
			wantECRCalls:  2,
		},
		{
			name:          "When ECR answers 401 DENIED Not Authorized, it should retry the mirror once with a new token",
			rejects:       map[string]error{p1: errNotAuthorized},
			wantRelease:   "4.18.1",
			wantCalls:     []string{mirror4181, mirror4181},
			wantPasswords: []string{p1, p2},
			wantECRCalls:  2,
		},
		{
			name:          "When ECR says the token has expired with a 403, it should retry the mirror once with a new token",
			rejects:       map[string]error{p1: errTokenExpired},
			wantRelease:   "4.18.1",
			wantCalls:     []string{mirror4181, mirror4181},
			wantPasswords: []string{p1, p2},
			wantECRCalls:  2,
		},
		{
			name:          "When the new token is rejected too, it should move on to the source after one retry",
			rejects:       map[string]error{p1: errTokenRevoked, p2: errTokenRevoked},
			wantRelease:   "4.18.1",
			wantCalls:     []string{mirror4181, mirror4181, release4181},
			wantPasswords: []string{p1, p2, p2},
			wantECRCalls:  2,
		},
		{
			name:          "When the policy forbids the source and the new token is rejected too, it should fail with ErrNotMirrored and ErrUnauthorized",
			never:         true,
			rejects:       map[string]error{p1: errTokenRevoked, p2: errTokenRevoked},
			wantCalls:     []string{mirror4181, mirror4181},
			wantPasswords: []string{p1, p2},
			wantECRCalls:  2,
			wantErr:       []error{releaseinfo.ErrNotMirrored, releaseinfo.ErrUnauthorized},
		},
		{
			name:          "When the mirror denies a permission, it should not retry: a new token would not help",
			rejects:       map[string]error{p1: errNoPermission},
			wantRelease:   "4.18.1",
			wantCalls:     []string{mirror4181, release4181},
			wantPasswords: []string{p1, p1},
			wantECRCalls:  1,
		},
		{
			name:          "When the Keychain cannot forget tokens, it should move on without a retry",
			rejects:       map[string]error{p1: errTokenRevoked},
			cannotForget:  true,
			wantRelease:   "4.18.1",
			wantCalls:     []string{mirror4181, release4181},
			wantPasswords: []string{p1, p1},
			wantECRCalls:  1,
		},
		{
			name:          "When ECR denies the identity on the refresh, it should fail with ErrAccessDenied",
			rejects:       map[string]error{p1: errTokenRevoked},
			denyAfter:     true,
			wantCalls:     []string{mirror4181},
			wantPasswords: []string{p1},
			wantECRCalls:  2,
			wantErr:       []error{registryauth.ErrAccessDenied},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := secretcheck.New(t)
			sc.Watch(p1, p2)
			f := fakeecr.New()
			leaf := &revokingProvider{t: t, rejects: tc.rejects,
				recordingProvider: recordingProvider{images: map[string]string{mirror4181: "4.18.1", release4181: "4.18.1"}}}
			if tc.denyAfter {
				leaf.onReject = func() { f.SetError("us-east-1", fakeecr.AccessDeniedError()) }
			}
			r, err := releaseinfo.NewResolver(releasePolicy(t, tc.never),
				newMemProber(map[string]string{mirror4181: digest4181, release4181: digest4181}))
			require.NoError(t, err)
			var kc releaseinfo.Augmenter = newKeychain(t, f)
			if tc.cannotForget {
				kc = augmentOnly{kc}
			}
			var p Provider = &releaseinfo.Decorator[*ReleaseImage]{Delegate: leaf.Lookup, Resolver: r, Keychain: kc}

			got, err := p.Lookup(logr.NewContext(t.Context(), sc.Logger()), release4181, []byte(callerPullSecret))
			sc.CheckError(err)

			require.Equal(t, tc.wantCalls, leaf.called())
			var passwords []string
			for _, c := range leaf.calls {
				pass, _ := authFor(t, c.pullSecret, ecrHost)
				passwords = append(passwords, pass)
			}
			require.Equal(t, tc.wantPasswords, passwords)
			require.Equal(t, tc.wantECRCalls, f.Calls("us-east-1"), "a rejected token costs exactly one new ECR call")
			if tc.wantRelease != "" {
				require.NoError(t, err)
				require.Equal(t, tc.wantRelease, got.Name)
				return
			}
			require.Nil(t, got)
			for _, want := range tc.wantErr {
				require.ErrorIs(t, err, want)
			}
		})
	}
}

// TestFaultDecoratorEndToEnd: the decorated leaf reads the release from
// the ECR-like registry over HTTP, and the registry revokes every token it
// has seen between two lookups.
func TestFaultDecoratorEndToEnd(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sc := secretcheck.New(t)
	sc.WatchFunc(func() []string {
		return []string{fakeecr.Password("us-east-1", 1), fakeecr.Password("us-east-1", 2), fakeecr.Password("us-east-1", 3)}
	})
	leaf := &registryReader{transport: fakeregistry.Transport(w.quay, w.ecr)}
	var provider Provider = &releaseinfo.Decorator[*ReleaseImage]{
		Delegate: leaf.Lookup,
		Resolver: w.resolver(t, ecrReleaseMirror(t, true)),
		Keychain: w.kc,
	}
	ctx := logr.NewContext(t.Context(), sc.Logger())
	_, err := provider.Lookup(ctx, w.mirrored, nil)
	require.NoError(t, err)
	w.ecr.RevokeAll() // the keychain's token has 12 hours left in its eyes

	img, err := provider.Lookup(ctx, w.mirrored, nil)
	sc.CheckError(err)
	require.NoError(t, err, "When the ECR mirror revokes the token, it should read the release with a new one")
	require.Equal(t, w.payload.ImageStream.Name, img.Name)
	mirror := mirrorRepo + "@" + digestOf(t, w.mirrored)
	require.Equal(t, []string{mirror, mirror, mirror}, leaf.read, "one lookup, then the rejected one and its retry")
	require.Equal(t, 2, w.ecrAPI.Calls("us-east-1"), "exactly one new token")
	require.Zero(t, w.quay.Stats(), "the source is never contacted")
}
