package releaseinfo_test

// Examples for docs/upstream-integration.md: the lines HyperShift adds, with
// HyperShift's own types replaced by local stand-ins of the same shape (this
// module never imports github.com/openshift/hypershift). ReleaseImage and
// Provider are the stand-ins declared in decorator_test.go. Fakes (fakeecr)
// replace AWS; everything else is the production call.

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/registryauth"
	ecrreleaseinfo "github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

const (
	upRelease = "quay.io/openshift-release-dev/ocp-release@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1"
	upMirror  = "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"
	upECRHost = "123456789012.dkr.ecr.us-east-1.amazonaws.com"
	// upPullSecret is what <hcp-namespace>/pull-secret holds: no ECR entry.
	upPullSecret = `{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K29jbTpxdWF5LXJvYm90LXRva2Vu"}}}`
)

// RegistryClientProvider stands for HyperShift's leaf provider: it reads the
// release from a registry with the pull secret it is given. The registry is
// a map here, and an ECR host refuses a pull secret without an entry for it.
type RegistryClientProvider struct {
	releases map[string]string // pullspec -> version
	read     []string
}

func (p *RegistryClientProvider) Lookup(_ context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	host, _, _ := strings.Cut(image, "/")
	cfg, err := dockerconfig.Parse(pullSecret)
	if err != nil {
		return nil, err
	}
	if _, ok := cfg.Lookup(host); !ok && strings.Contains(host, ".dkr.ecr.") {
		return nil, fmt.Errorf("failed to extract release metadata: unauthorized: authentication required")
	}
	version, ok := p.releases[image]
	if !ok {
		return nil, fmt.Errorf("failed to extract release metadata: manifest unknown")
	}
	p.read = append(p.read, image)
	is := &imagev1.ImageStream{}
	is.Name = version
	return &ReleaseImage{ImageStream: is}, nil
}

// CachedProvider has the shape of HyperShift's releaseinfo.CachedProvider.
type CachedProvider struct {
	Cache map[string]*ReleaseImage
	Inner Provider
}

func (p *CachedProvider) Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	if r, ok := p.Cache[image]; ok {
		return r, nil
	}
	r, err := p.Inner.Lookup(ctx, image, pullSecret)
	if err != nil {
		return nil, err
	}
	p.Cache[image] = r
	return r, nil
}

// ProviderWithOpenShiftImageRegistryOverrides is HyperShift's interface of
// the same name.
type ProviderWithOpenShiftImageRegistryOverrides interface {
	Provider
	GetRegistryOverrides() map[string]string
	GetOpenShiftImageRegistryOverrides() map[string][]string
	GetMirroredReleaseImage() string
}

// ProviderWithOpenShiftImageRegistryOverridesDecorator stands for HyperShift's
// decorator of the same name: for each source found in the image (substring),
// it tries each mirror, with the same pull secret, then the image itself.
// RegistryMirrorProviderDecorator, between it and the cache, is left out.
type ProviderWithOpenShiftImageRegistryOverridesDecorator struct {
	Delegate                        Provider
	OpenShiftImageRegistryOverrides map[string][]string
}

func (p *ProviderWithOpenShiftImageRegistryOverridesDecorator) Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	for source, mirrors := range p.OpenShiftImageRegistryOverrides {
		if !strings.Contains(image, source) {
			continue
		}
		for _, mirror := range mirrors {
			r, err := p.Delegate.Lookup(ctx, strings.Replace(image, source, mirror, 1), pullSecret)
			if err == nil {
				return r, nil
			}
			fmt.Println("  mirror failed:", err)
		}
	}
	return p.Delegate.Lookup(ctx, image, pullSecret)
}

func (p *ProviderWithOpenShiftImageRegistryOverridesDecorator) GetRegistryOverrides() map[string]string {
	return nil
}

func (p *ProviderWithOpenShiftImageRegistryOverridesDecorator) GetOpenShiftImageRegistryOverrides() map[string][]string {
	return p.OpenShiftImageRegistryOverrides
}

func (p *ProviderWithOpenShiftImageRegistryOverridesDecorator) GetMirroredReleaseImage() string {
	return ""
}

// The release provider chain of every component, with the leaf wrapped: each
// pullspec the mirror decorators try reaches the registry with ECR
// credentials for its own host, added in memory on a cache miss.
func ExampleDecorator_registryClientProvider() {
	fake := fakeecr.New()
	keychain, err := registryauth.NewKeychain(registryauth.WithClientFactory(fake.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer keychain.Close()
	mirrored := strings.Replace(upRelease, "quay.io/openshift-release-dev/ocp-release", upMirror, 1)
	registry := map[string]string{mirrored: "4.18.1", upRelease: "4.18.1"}
	imageRegistryOverrides := map[string][]string{"quay.io/openshift-release-dev/ocp-release": {upMirror}}

	for _, withECR := range []bool{true, false} {
		var kc ecrreleaseinfo.Augmenter
		if withECR {
			kc = keychain // the process's *registryauth.Keychain
		}
		leaf := &RegistryClientProvider{releases: registry}

		releaseProvider := &ProviderWithOpenShiftImageRegistryOverridesDecorator{
			Delegate: &CachedProvider{
				Inner: &ecrreleaseinfo.Decorator[*ReleaseImage]{
					Delegate: leaf.Lookup, // HyperShift: (&releaseinfo.RegistryClientProvider{}).Lookup
					Keychain: kc,
				},
				Cache: map[string]*ReleaseImage{},
			},
			OpenShiftImageRegistryOverrides: imageRegistryOverrides,
		}

		fmt.Println("keychain:", withECR)
		img, err := releaseProvider.Lookup(context.Background(), upRelease, []byte(upPullSecret))
		if err != nil {
			panic(err)
		}
		fmt.Println("  read", strings.Join(leaf.read, ", "), "->", img.Name)
	}
	// Output:
	// keychain: true
	//   read 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1 -> 4.18.1
	// keychain: false
	//   mirror failed: failed to extract release metadata: unauthorized: authentication required
	//   read quay.io/openshift-release-dev/ocp-release@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1 -> 4.18.1
}

// The karpenter operator's karpenter.Reconciler looks releases up with a bare
// RegistryClientProvider: no mirrors at all. One Decorator gives it the
// management cluster's mirrors (the map run() already builds from
// OPENSHIFT_IMG_OVERRIDES and --registry-overrides) and ECR credentials.
func ExampleDecorator_karpenterOperator() {
	fake := fakeecr.New()
	keychain, err := registryauth.NewKeychain(registryauth.WithClientFactory(fake.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer keychain.Close()
	leaf := &RegistryClientProvider{releases: map[string]string{
		strings.Replace(upRelease, "quay.io/openshift-release-dev/ocp-release", upMirror, 1): "4.18.1",
	}}
	imageRegistryOverrides, err := mirrorpolicy.ParseOverrides( // HyperShift: the map run() builds
		"quay.io/openshift-release-dev/ocp-release=" + upMirror + ",quay.io/openshift-release-dev/ocp-v4.0-art-dev=" + upMirror)
	if err != nil {
		panic(err)
	}

	rules, err := mirrorpolicy.FromOverrides(imageRegistryOverrides)
	if err != nil {
		panic(err)
	}
	policy, err := mirrorpolicy.New(rules...)
	if err != nil {
		panic(err)
	}
	var releaseProvider Provider = &ecrreleaseinfo.Decorator[*ReleaseImage]{
		Delegate: leaf.Lookup, // HyperShift: (&releaseinfo.RegistryClientProvider{}).Lookup
		Policy:   policy,
		Keychain: keychain,
	}

	img, err := releaseProvider.Lookup(context.Background(), upRelease, []byte(upPullSecret))
	if err != nil {
		panic(err)
	}
	fmt.Println("read", leaf.read[0], "->", img.Name)
	// Output:
	// read 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1 -> 4.18.1
}

// HashSimple is HyperShift's support/util.HashSimple.
func HashSimple(o any) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(fmt.Sprintf("%v", o)))
	return fmt.Sprintf("%08x", h.Sum32())
}

// LocalIgnitionProvider stands for the ignition server's generator with the
// field the guide adds (ECR). Its function fields stand for what GetPayload
// does today.
type LocalIgnitionProvider struct {
	ReleaseProvider ProviderWithOpenShiftImageRegistryOverrides
	// ECR adds in-memory ECR credentials for registry access. Nil: unchanged.
	ECR ecrreleaseinfo.Augmenter

	fetchPullSecret func(ctx context.Context) ([]byte, error)                        // <hcp-namespace>/pull-secret
	extract         func(ctx context.Context, image string, pullSecret []byte) error // resolveMCOImage, ExtractImageFilesToDir, extractMCOBinaries, ...
	runMCO          func(ctx context.Context, pullSecret []byte) ([]byte, error)     // runMCO (--pull-secret), runMCC, runMCSAndFetchPayload
}

// ecrRefs lists what payload generation may pull from: the release image
// and every mirror and override destination it may be rewritten to.
func ecrRefs(releaseImage string, mirrors map[string][]string, registryOverrides map[string]string) []string {
	refs := []string{releaseImage}
	for _, ms := range mirrors {
		refs = append(refs, ms...)
	}
	for _, dst := range registryOverrides {
		refs = append(refs, dst)
	}
	slices.Sort(refs[1:]) // map order is random; a stable order keeps Augment's memo warm
	return refs
}

func (p *LocalIgnitionProvider) GetPayload(ctx context.Context, releaseImage, pullSecretHash string) ([]byte, error) {
	pullSecret, err := p.fetchPullSecret(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to get pull secret: %w", err)
	}
	// The hash gate: original bytes, unchanged.
	if pullSecretHash != "" && HashSimple(pullSecret) != pullSecretHash {
		return nil, fmt.Errorf("pull secret does not match hash")
	}
	// New: Effective for registry access only, Original for everything else.
	secrets, err := ecrreleaseinfo.EffectivePullSecret(ctx, p.ECR, pullSecret, ecrRefs(releaseImage,
		p.ReleaseProvider.GetOpenShiftImageRegistryOverrides(), p.ReleaseProvider.GetRegistryOverrides())...)
	if err != nil {
		return nil, err
	}

	if _, err := p.ReleaseProvider.Lookup(ctx, releaseImage, secrets.Effective); err != nil {
		return nil, fmt.Errorf("failed to look up release image metadata: %w", err)
	}
	if err := p.extract(ctx, releaseImage, secrets.Effective); err != nil {
		return nil, err
	}
	return p.runMCO(ctx, secrets.Original)
}

// The ignition server's GetPayload: the hash gate and MCO bootstrap see the
// stored pull secret, registry access sees it plus ECR credentials, so a
// token rotation changes neither the hash nor the payload.
func ExampleEffectivePullSecret_ignitionServer() {
	ctx := context.Background()
	fake := fakeecr.New()
	keychain, err := registryauth.NewKeychain(registryauth.WithClientFactory(fake.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer keychain.Close()
	mirrored := strings.Replace(upRelease, "quay.io/openshift-release-dev/ocp-release", upMirror, 1)
	hasECR := func(pullSecret []byte) bool {
		cfg, err := dockerconfig.Parse(pullSecret)
		if err != nil {
			panic(err)
		}
		_, ok := cfg.Lookup(upECRHost)
		return ok
	}

	p := &LocalIgnitionProvider{
		ReleaseProvider: &ProviderWithOpenShiftImageRegistryOverridesDecorator{
			Delegate: &CachedProvider{
				Inner: &RegistryClientProvider{releases: map[string]string{mirrored: "4.18.1"}},
				Cache: map[string]*ReleaseImage{},
			},
			OpenShiftImageRegistryOverrides: map[string][]string{"quay.io/openshift-release-dev/ocp-release": {upMirror}},
		},
		ECR:             keychain,
		fetchPullSecret: func(context.Context) ([]byte, error) { return []byte(upPullSecret), nil },
		extract: func(_ context.Context, _ string, pullSecret []byte) error {
			fmt.Println("registry access with ECR credentials:", hasECR(pullSecret))
			return nil
		},
		runMCO: func(_ context.Context, pullSecret []byte) ([]byte, error) {
			// MCO renders --pull-secret verbatim into /var/lib/kubelet/config.json.
			return append([]byte("config.json: "), pullSecret...), nil
		},
	}
	tokenSecretHash := HashSimple([]byte(upPullSecret)) // the NodePool token secret's pull-secret-hash

	first, err := p.GetPayload(ctx, upRelease, tokenSecretHash)
	if err != nil {
		panic(err)
	}
	keychain.Forget(upECRHost) // the 12-hour token rotates
	second, err := p.GetPayload(ctx, upRelease, tokenSecretHash)
	if err != nil {
		panic(err)
	}
	fmt.Println("payload holds an ECR entry:", hasECR(bytes.TrimPrefix(first, []byte("config.json: "))))
	fmt.Println("same payload across the rotation:", bytes.Equal(first, second))
	fmt.Println("GetAuthorizationToken calls:", fake.TotalCalls())
	// Output:
	// registry access with ECR credentials: true
	// registry access with ECR credentials: true
	// payload holds an ECR entry: false
	// same payload across the rotation: true
	// GetAuthorizationToken calls: 2
}
