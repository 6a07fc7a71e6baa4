package releaseinfo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
	"github.com/openshift/hypershift-ecr/releaseinfo"
)

// A regional ECR mirror written by `oc adm release mirror` that holds 4.18.1
// but not yet 4.18.2. The prober here is an in-memory registry; in
// production it is ggcrprobe.New(ggcrauth.NewKeychain(keychain)).
func ExampleResolver() {
	const (
		mirror  = "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"
		release = "quay.io/openshift-release-dev/ocp-release"
		d4181   = "sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1"
		d4182   = "sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"
	)
	registry := map[string]string{
		mirror + "@" + d4181:  d4181,
		release + "@" + d4181: d4181,
		release + "@" + d4182: d4182,
	}
	prober := releaseinfo.ProbeFunc(func(_ context.Context, ref string) (string, error) {
		if d, ok := registry[ref]; ok {
			return d, nil
		}
		return "", releaseinfo.ErrManifestUnknown
	})
	rules, err := mirrorpolicy.ECRReleaseMirror(mirror)
	if err != nil {
		panic(err)
	}
	policy, err := mirrorpolicy.New(rules...)
	if err != nil {
		panic(err)
	}
	resolver, err := releaseinfo.NewResolver(policy, prober)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	res, err := resolver.Resolve(ctx, release+"@"+d4181)
	if err != nil {
		panic(err)
	}
	fmt.Print(res.Explain())

	res, err = resolver.Resolve(ctx, release+"@"+d4182)
	if err != nil {
		panic(err)
	}
	fmt.Print(res.Explain())

	// The same mirror with mirrorSourcePolicy: NeverContactSource.
	for i := range rules {
		rules[i].NeverContactSource = true
	}
	strict, err := mirrorpolicy.New(rules...)
	if err != nil {
		panic(err)
	}
	resolver, err = releaseinfo.NewResolver(strict, prober)
	if err != nil {
		panic(err)
	}
	_, err = resolver.Resolve(ctx, release+"@"+d4182)
	fmt.Println(errors.Is(err, releaseinfo.ErrNotMirrored))
	fmt.Println(err)
	// Output:
	// image:    quay.io/openshift-release-dev/ocp-release@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1
	// pullspec: 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1
	// from:     mirror (ECRReleaseMirror/123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4)
	// image:    quay.io/openshift-release-dev/ocp-release@sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8
	// pullspec: quay.io/openshift-release-dev/ocp-release@sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8
	// from:     source (ECRReleaseMirror/123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4)
	// skipped:  123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8: manifest unknown
	// true
	// release quay.io/openshift-release-dev/ocp-release@sha256:a7b4d2ce7cda3e4d5c3a4e8ff2e1b0c9c1d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8 is not yet in 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 (manifest unknown) and the policy forbids contacting quay.io
}

// HyperShift's release Provider wrapped: a few lines where the operator
// composes its providers. ReleaseImage and Provider stand for HyperShift's
// support/releaseinfo types; the keychain (a *registryauth.Keychain) is
// left out here.
func ExampleDecorator() {
	rules, _ := mirrorpolicy.ECRReleaseMirror("123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4")
	policy, _ := mirrorpolicy.New(rules...)
	prober := releaseinfo.ProbeFunc(func(_ context.Context, ref string) (string, error) {
		return "sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1", nil
	})
	resolver, _ := releaseinfo.NewResolver(policy, prober)

	var inner Provider = &recordingProvider{images: map[string]string{
		"123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1": "4.18.1",
	}}

	var provider Provider = &releaseinfo.Decorator[*ReleaseImage]{
		Delegate: inner.Lookup,
		Resolver: resolver,
		// Keychain: keychain, // adds ECR credentials to the pull secret in memory
	}

	img, err := provider.Lookup(context.Background(),
		"quay.io/openshift-release-dev/ocp-release@sha256:3ff5ee9ff7f7ba2a0f2d95c3f4a4f2fa35ce2a9eb1b4c2ed4c3ee6bb47d5a6e1",
		[]byte(`{"auths":{}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(img.Name)
	// Output:
	// 4.18.1
}

// DockerImageConfig and ImageMetadataProvider stand for HyperShift's
// support/util types; only ImageMetadata is shown.
type DockerImageConfig struct{ Architecture string }

type ImageMetadataProvider interface {
	ImageMetadata(ctx context.Context, imageRef string, pullSecret []byte) (*DockerImageConfig, error)
}

type registryMetadata struct{}

func (registryMetadata) ImageMetadata(_ context.Context, imageRef string, _ []byte) (*DockerImageConfig, error) {
	fmt.Println("reading config of", imageRef)
	return &DockerImageConfig{Architecture: "amd64"}, nil
}

// mirroredMetadata overrides one method of an ImageMetadataProvider with a
// Decorator over a different T; the other methods are wrapped the same way.
type mirroredMetadata struct {
	ImageMetadataProvider
	imageMetadata releaseinfo.Decorator[*DockerImageConfig]
}

func (m *mirroredMetadata) ImageMetadata(ctx context.Context, imageRef string, pullSecret []byte) (*DockerImageConfig, error) {
	return m.imageMetadata.Lookup(ctx, imageRef, pullSecret)
}

// An ImageMetadataProvider made mirror-aware: component images resolve to
// the ECR mirror too.
func ExampleDecorator_imageMetadataProvider() {
	rules, _ := mirrorpolicy.ECRReleaseMirror("123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4")
	policy, _ := mirrorpolicy.New(rules...)
	prober := releaseinfo.ProbeFunc(func(_ context.Context, ref string) (string, error) {
		return "sha256:0b2e5d1c7f4a3e6b9d8c7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d", nil
	})
	resolver, _ := releaseinfo.NewResolver(policy, prober, releaseinfo.WithNoun("image"))

	leaf := registryMetadata{}
	var provider ImageMetadataProvider = &mirroredMetadata{
		ImageMetadataProvider: leaf,
		imageMetadata:         releaseinfo.Decorator[*DockerImageConfig]{Delegate: leaf.ImageMetadata, Resolver: resolver},
	}

	cfg, err := provider.ImageMetadata(context.Background(),
		"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0b2e5d1c7f4a3e6b9d8c7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Architecture)
	// Output:
	// reading config of 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:0b2e5d1c7f4a3e6b9d8c7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d
	// amd64
}
