//go:build conformance

package conformance

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ecr"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// newReader is our release reader over the registry's transport, taking
// credentials from src through ggcrauth.
func newReader(t *testing.T, reg *realRegistry, src registryauth.CredentialSource) *remote.Reader {
	t.Helper()
	tr := reg.Transport()
	t.Cleanup(tr.CloseIdleConnections)
	opts := []remote.Option{remote.WithTransport(tr)}
	if src != nil {
		opts = append(opts, remote.WithKeychain(ggcrauth.NewKeychain(src)))
	}
	r, err := remote.NewReader(opts...)
	reader.must(t, "NewReader", err)
	return r
}

// checkRelease fails unless rel is the fixture payload p, read from the
// registry and pinned by digest (the payload's, or the one given when the
// image was converted before its push).
func checkRelease(t *testing.T, who peer, step string, rel *remote.Release, p *releasepayload.Payload, pushed ...v1.Hash) {
	t.Helper()
	digest, err := p.Image.Digest()
	harness.must(t, "digest of the fixture", err)
	if len(pushed) > 0 {
		digest = pushed[0]
	}
	who.check(t, step, rel.Pullspec == releaseRepo+"@"+digest.String(),
		"pullspec %q, want %s@%s", rel.Pullspec, releaseRepo, digest)
	who.check(t, step, rel.ImageStream != nil && rel.ImageStream.Name == p.ImageStream.Name,
		"image-references is not the fixture's (%s)", p.ImageStream.Name)
	who.check(t, step, len(rel.ImageStream.Spec.Tags) == len(p.ImageStream.Spec.Tags) && len(rel.ComponentImages) > 100,
		"%d tags and %d component images, want the fixture's %d tags", len(rel.ImageStream.Spec.Tags), len(rel.ComponentImages), len(p.ImageStream.Spec.Tags))
	who.check(t, step, rel.StreamMetadata != nil && rel.StreamMetadata.Stream != "",
		"no CoreOS stream from the boot images ConfigMap")
}

// unauthorized reports whether err carries the registry's 401.
func unauthorized(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusUnauthorized
}

// TestRealRegistryRotation proves our keychain and release reader against
// docker-registry whose htpasswd password is the fake ECR's latest token:
// a release pushed and read with keychain credentials, a rotation by
// another ECR caller (a node's credential provider) that the registry
// enforces at once, a stale pull secret's typed 401, the reader recovering
// by itself (Forget, one fresh token, one retry), and HyperShift's
// pull-secret seam (Augment + LookupWithPullSecret).
func TestRealRegistryRotation(t *testing.T) {
	ctx := t.Context()
	reg := startRegistry(t)
	e := startECR(t, reg)
	kc := newKeychain(t, e)
	payload := buildPayload(t)
	registry := dockerRegistry

	registry.must(t, "push the fixture release with the first token", reg.Push(ctx, releaseTag, payload, kc))
	issued := e.Issued()
	keychain.check(t, "one token for push", len(issued) == 1 && reg.Password() == issued[0],
		"%d tokens issued for one push", len(issued))

	r := newReader(t, reg, kc)
	rel, err := r.Lookup(ctx, releaseTag)
	reader.with(registry).must(t, "release lookup before rotation", err)
	checkRelease(t, reader.with(registry), "release lookup before rotation", rel, payload)
	keychain.check(t, "warm keychain makes no second ECR call", e.Calls(region) == 1, "%d ECR calls", e.Calls(region))
	staleSecret, err := kc.Augment(ctx, []byte(`{"auths":{}}`), releaseTag)
	augment.must(t, "augment the pull secret before rotation", err)

	// Another principal's call (a node's ecr-credential-provider) gets a new
	// token; the registry now accepts only that one.
	other := ecr.NewFromConfig(staticConfig(), func(o *ecr.Options) { o.BaseEndpoint = &e.URL })
	_, err = other.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	awsSDK.must(t, "out-of-band GetAuthorizationToken", err)
	stale := issued[0]
	status, err := reg.Ping(ctx, "AWS", stale)
	registry.must(t, "/v2/ with the stale password", err)
	registry.check(t, "/v2/ with the stale password after rotation", status == http.StatusUnauthorized,
		"status %d, want 401: the htpasswd file was not reloaded", status)

	// A pull secret augmented before the rotation now holds a rejected
	// token: the reader has no keychain to refresh it from, so the
	// registry's 401 comes back typed, naming the image, without the token.
	_, err = newReader(t, reg, nil).LookupWithPullSecret(ctx, releaseTag, staleSecret)
	reader.with(registry).check(t, "LookupWithPullSecret with the rotated-out token", unauthorized(err),
		"error %v, want the registry's 401", err)
	var rerr *remote.Error
	reader.check(t, "error of a lookup with the rotated-out token", errors.As(err, &rerr) && rerr.Image == releaseTag,
		"error %v is not a *remote.Error naming the image", err)
	reader.check(t, "error of a lookup with the rotated-out token", !strings.Contains(err.Error(), stale),
		"the error holds the password")

	// With the keychain, the reader answers the 401 itself: it drops the
	// token (Forget), fetches one fresh token and retries once.
	rel, err = r.Lookup(ctx, releaseTag)
	reader.with(registry).must(t, "release lookup after an out-of-band rotation (401, Forget, one retry)", err)
	checkRelease(t, reader.with(registry), "release lookup after an out-of-band rotation", rel, payload)
	issued = e.Issued()
	keychain.check(t, "one fresh token after the registry's 401", len(issued) == 3 && reg.Password() == issued[2],
		"%d tokens issued, want 3", len(issued))

	// HyperShift's seam: Lookup(ctx, image, pullSecret) with the pull secret
	// augmented in memory right before the call.
	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K2NpOnNlY3JldA=="}}}`)
	effective, err := kc.Augment(ctx, pullSecret, releaseTag)
	augment.must(t, "augment the pull secret", err)
	rel, err = newReader(t, reg, nil).LookupWithPullSecret(ctx, releaseTag, effective)
	reader.with(registry).must(t, "LookupWithPullSecret with the augmented pull secret", err)
	checkRelease(t, reader.with(registry), "LookupWithPullSecret with the augmented pull secret", rel, payload)
	_, err = newReader(t, reg, nil).LookupWithPullSecret(ctx, releaseTag, pullSecret)
	reader.with(registry).check(t, "LookupWithPullSecret with the original pull secret", unauthorized(err),
		"error %v, want the registry's 401: the original bytes must hold no ECR token", err)
}

// TestRealRegistryBackgroundRefresh proves that the keychain follows a
// rotation on its own: with short-lived tokens it refreshes in the
// background, the registry's password rotates while it runs, and the next
// lookup succeeds with no Forget and no error, while the previous password
// is refused.
func TestRealRegistryBackgroundRefresh(t *testing.T) {
	ctx := t.Context()
	reg := startRegistry(t)
	// Tokens live 10s; the keychain refreshes at about half (4.5s to 5s) and
	// serves a token until 1s before its expiry.
	e := startECR(t, reg, fakeecr.WithTokenLifetime(10*time.Second))
	kc := newKeychain(t, e, registryauth.WithRefreshFraction(0.5), registryauth.WithExpiryMargin(time.Second))
	payload := buildPayload(t)

	dockerRegistry.must(t, "push the fixture release", reg.Push(ctx, releaseTag, payload, kc))
	r := newReader(t, reg, kc)
	rel, err := r.Lookup(ctx, releaseTag)
	reader.with(dockerRegistry).must(t, "release lookup before the background refresh", err)
	checkRelease(t, reader.with(dockerRegistry), "release lookup before the background refresh", rel, payload)
	first := e.Issued()[0]

	waitCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for e.Calls(region) < 2 {
		select {
		case <-waitCtx.Done():
			t.Fatalf("%s: background refresh: no second GetAuthorizationToken within 15s of a 10s token", keychain)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The fake counts the call when it arrives; the refreshed token reaches
	// the keychain a moment later, after the registry's password has been
	// rotated. Until then the keychain rightly serves the first one.
	var cred registryauth.Credential
	for {
		cred, err = kc.Credential(ctx, releaseTag)
		keychain.must(t, "credential after the background refresh", err)
		if cred.Password != first {
			break
		}
		select {
		case <-waitCtx.Done():
			t.Fatalf("%s: background refresh: still serving the first token 15s into a 10s token's life", keychain)
		case <-time.After(20 * time.Millisecond):
		}
	}
	keychain.check(t, "credential after the background refresh", cred.Password == reg.Password(),
		"the keychain serves a token the registry does not hold")

	rel, err = r.Lookup(ctx, releaseTag)
	reader.with(dockerRegistry).must(t, "release lookup with rotated password (background refresh)", err)
	checkRelease(t, reader.with(dockerRegistry), "release lookup with rotated password (background refresh)", rel, payload)
	status, err := reg.Ping(ctx, "AWS", first)
	dockerRegistry.must(t, "/v2/ with the first password", err)
	dockerRegistry.check(t, "/v2/ with the first password after rotation", status == http.StatusUnauthorized, "status %d, want 401", status)
}
