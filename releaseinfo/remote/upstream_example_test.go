package remote_test

// Example for docs/upstream-integration.md: HyperShift's leaf release
// provider, over the wire, against an ECR-like registry that checks every
// request's Basic credentials against a fake ECR API and serves layers by
// redirect to an S3-like host. ReleaseImage and Provider have the shape of
// HyperShift's support/releaseinfo types (this module never imports
// github.com/openshift/hypershift).

import (
	"context"
	"errors"
	"fmt"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	imagev1 "github.com/openshift/api/image/v1"

	"github.com/openshift/hypershift-ecr/registryauth"
	ecrreleaseinfo "github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

type ReleaseImage struct {
	*imagev1.ImageStream `json:",inline"`
	StreamMetadata       *stream.Stream            `json:"streamMetadata"`
	OSStreams            map[string]*stream.Stream `json:"-"`
}

type Provider interface {
	Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error)
}

// ReaderProvider is a HyperShift Provider over remote.Reader, a drop-in for
// releaseinfo.RegistryClientProvider: same files, same layer order.
type ReaderProvider struct{ Reader *remote.Reader }

func (p *ReaderProvider) Lookup(ctx context.Context, image string, pullSecret []byte) (*ReleaseImage, error) {
	rel, err := p.Reader.LookupWithPullSecret(ctx, image, pullSecret)
	if err != nil {
		return nil, err
	}
	return &ReleaseImage{ImageStream: rel.ImageStream, StreamMetadata: rel.StreamMetadata, OSStreams: rel.OSStreams}, nil
}

// The leaf, wrapped as in every component's chain, reading a release from an
// ECR mirror with the stored pull secret (which has no ECR entry): the
// Decorator adds the token in memory, and the registry accepts it.
func ExampleReader_LookupWithPullSecret_registryClientProvider() {
	ctx := context.Background()
	fake := fakeecr.New()
	registry, err := fakeregistry.Start(fakeregistry.WithAuthenticator(fake.Authenticator()))
	if err != nil {
		panic(err)
	}
	defer registry.Close()
	payload, err := releasepayload.Build(releasepayload.WithVersion("4.18.1"))
	if err != nil {
		panic(err)
	}
	mirrored, err := registry.PushImage(ctx, "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4:4.18.1-x86_64", payload.Image)
	if err != nil {
		panic(err)
	}
	keychain, err := registryauth.NewKeychain(registryauth.WithClientFactory(fake.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer keychain.Close()
	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`) // <hcp-namespace>/pull-secret

	reader, err := remote.NewReader(remote.WithTransport(registry.Transport())) // HyperShift: remote.NewReader()
	if err != nil {
		panic(err)
	}
	leaf := &ReaderProvider{Reader: reader}
	var withECR Provider = &ecrreleaseinfo.Decorator[*ReleaseImage]{Delegate: leaf.Lookup, Keychain: keychain}

	img, err := withECR.Lookup(ctx, mirrored, pullSecret)
	if err != nil {
		panic(err)
	}
	fmt.Println("with the keychain:", img.Name, img.StreamMetadata.Stream)

	_, err = leaf.Lookup(ctx, mirrored, pullSecret)
	if terr := (*transport.Error)(nil); errors.As(err, &terr) {
		fmt.Println("without it: HTTP", terr.StatusCode)
	}
	// Output:
	// with the keychain: 4.18.1 rhcos-4.10
	// without it: HTTP 401
}
