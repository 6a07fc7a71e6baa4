package registryauth_test

// Examples for docs/upstream-integration.md: the lines HyperShift adds, with
// HyperShift's own types replaced by local stand-ins of the same shape (this
// module never imports github.com/openshift/hypershift). Fakes (fakeecr)
// replace AWS; everything else is the production call.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/docker/distribution/registry/client/auth"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/distributionauth"
	"github.com/openshift/hypershift-ecr/registryauth/prommetrics"
	ecrreleaseinfo "github.com/openshift/hypershift-ecr/releaseinfo"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// One keychain per HyperShift process, built next to the other clients in
// the component's main. The AWS identity comes from the SDK's default chain:
// IRSA or EKS Pod Identity for the hypershift-operator, the web-identity
// credentials file (AWS_SHARED_CREDENTIALS_FILE) for control-plane pods.
func ExampleNewKeychain_hypershiftComponent() {
	ctx := context.Background()
	fake := fakeecr.New()                       // fake set-up: no AWS endpoint is called
	metricsRegistry := prometheus.NewRegistry() // HyperShift: sigs.k8s.io/controller-runtime/pkg/metrics.Registry
	log := logr.Discard()                       // HyperShift: ctrl.Log.WithName("ecr-credentials")

	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		panic(err)
	}
	ecrMetrics, err := prommetrics.New(metricsRegistry)
	if err != nil {
		panic(err)
	}
	keychain, err := registryauth.NewKeychain(
		registryauth.WithAWSConfig(cfg), // the client's region is each registry's, not cfg.Region
		registryauth.WithLogger(log),
		registryauth.WithMetrics(ecrMetrics),
		registryauth.WithClientFactory(fake.ClientFactory), // fake set-up: replaces the real ECR clients
	)
	if err != nil {
		panic(err)
	}
	defer keychain.Close()

	for range 2 {
		if _, err := keychain.Credential(ctx, "123456789012.dkr.ecr.us-east-1.amazonaws.com"); err != nil {
			panic(err)
		}
	}
	printCounters(metricsRegistry)
	// Output:
	// hypershift_ecr_cache_hits_total{partition="aws",region="us-east-1"} 1
	// hypershift_ecr_cache_misses_total{partition="aws",region="us-east-1"} 1
	// hypershift_ecr_token_fetches_total{outcome="ok",partition="aws",region="us-east-1"} 1
}

// printCounters prints every counter series of reg, sorted.
func printCounters(reg *prometheus.Registry) {
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	var lines []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetCounter() == nil {
				continue
			}
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %g", f.GetName(), strings.Join(labels, ","), m.GetCounter().GetValue()))
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
}

// DockerImageConfig stands for HyperShift's dockerv1client.DockerImageConfig.
type DockerImageConfig struct{ Architecture string }

// RegistryClientImageMetadataProvider has the shape of HyperShift's
// support/util.RegistryClientImageMetadataProvider plus the two additions
// the guide asks for: the ECR field and withECR. Only ImageMetadata is
// shown; GetOverride, GetDigest, GetManifest and GetMetadata get the same
// first statement.
type RegistryClientImageMetadataProvider struct {
	OpenShiftImageRegistryOverrides map[string][]string
	// ECR adds in-memory ECR credentials to the pull secret before any
	// registry call. Nil leaves the pull secret as it is.
	ECR ecrreleaseinfo.Augmenter

	// registry stands for what the method does today with the pull secret:
	// seekOverride's mirror checks, then getRepository and the manifest reads.
	registry func(ctx context.Context, imageRef string, pullSecret []byte) (*DockerImageConfig, error)
}

// withECR returns pullSecret with fresh ECR entries for imageRef and every
// mirror seekOverride may try. The result is for registry access only: it
// is never cached, stored or logged.
func (r *RegistryClientImageMetadataProvider) withECR(ctx context.Context, imageRef string, pullSecret []byte) ([]byte, error) {
	if r.ECR == nil {
		return pullSecret, nil
	}
	refs := []string{imageRef}
	for _, mirrors := range r.OpenShiftImageRegistryOverrides {
		refs = append(refs, mirrors...)
	}
	slices.Sort(refs[1:]) // map order is random; a stable order keeps Augment's memo warm
	return r.ECR.Augment(ctx, pullSecret, refs...)
}

func (r *RegistryClientImageMetadataProvider) ImageMetadata(ctx context.Context, imageRef string, pullSecret []byte) (*DockerImageConfig, error) {
	var err error // HyperShift: `parsedImageRef, err := reference.Parse(imageRef)` and its check
	if pullSecret, err = r.withECR(ctx, imageRef, pullSecret); err != nil {
		return nil, err
	}
	// Unchanged from here on: seekOverride, the caches, getRepository(ctx, *ref, pullSecret).
	return r.registry(ctx, imageRef, pullSecret)
}

// The image metadata provider of every component, given ECR credentials for
// the image and for the management cluster's ECR mirrors in one Augment call.
func ExampleKeychain_Augment_imageMetadataProvider() {
	fake := fakeecr.New()
	keychain, err := registryauth.NewKeychain(registryauth.WithClientFactory(fake.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer keychain.Close()
	seen := func(_ context.Context, imageRef string, pullSecret []byte) (*DockerImageConfig, error) {
		cfg, err := dockerconfig.Parse(pullSecret)
		if err != nil {
			return nil, err
		}
		fmt.Println("registry call for", imageRef, "with credentials for", cfg.Hosts())
		return &DockerImageConfig{Architecture: "amd64"}, nil
	}

	provider := &RegistryClientImageMetadataProvider{
		OpenShiftImageRegistryOverrides: map[string][]string{
			"quay.io/openshift-release-dev/ocp-v4.0-art-dev": {"123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4"},
		},
		ECR:      keychain, // the process's *registryauth.Keychain
		registry: seen,
	}

	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`) // <hcp-namespace>/pull-secret
	cfg, err := provider.ImageMetadata(context.Background(),
		"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0b2e5d1c7f4a3e6b9d8c7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d", pullSecret)
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Architecture, "| caller's pull secret unchanged:", string(pullSecret) == `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`)
	// Output:
	// registry call for quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0b2e5d1c7f4a3e6b9d8c7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d with credentials for [123456789012.dkr.ecr.us-east-1.amazonaws.com quay.io]
	// amd64 | caller's pull secret unchanged: true
}

// staticStore stands for the auth.CredentialStore HyperShift builds from the
// pull secret with dockercredentials.NewFromBytes.
type staticStore map[string][2]string

func (s staticStore) Basic(u *url.URL) (string, string)      { c := s[u.Host]; return c[0], c[1] }
func (staticStore) RefreshToken(*url.URL, string) string     { return "" }
func (staticStore) SetRefreshToken(*url.URL, string, string) {}

// The alternative seam: the docker/distribution credential store that
// HyperShift's registry clients are built with. ECR hosts are answered from
// the keychain at request time; every other host from the pull secret.
func ExampleKeychain_Credential_credentialStore() {
	fake := fakeecr.New()
	keychain, err := registryauth.NewKeychain(registryauth.WithClientFactory(fake.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer keychain.Close()
	credStore := staticStore{"quay.io": {"openshift-release-dev+ocm", "quay-robot-token"}} // dockercredentials.NewFromBytes(pullSecret)

	var ecrCredentials registryauth.CredentialSource = keychain // HyperShift: set once in main
	store := distributionauth.NewCredentialStore(ecrCredentials, credStore)
	// HyperShift: registryclient.NewContext(rt, insecureRT).WithCredentials(store)

	for _, host := range []string{"123456789012.dkr.ecr.us-east-1.amazonaws.com", "quay.io"} {
		user, pass := store.Basic(&url.URL{Scheme: "https", Host: host})
		fmt.Println(host, "->", user, pass == fakeecr.Password("us-east-1", 1))
	}
	fmt.Println("failures:", store.Err())

	fake.SetError("us-east-1", fakeecr.AccessDeniedError())
	keychain.Forget("123456789012.dkr.ecr.us-east-1.amazonaws.com")
	user, _ := store.Basic(&url.URL{Scheme: "https", Host: "123456789012.dkr.ecr.us-east-1.amazonaws.com"})
	fmt.Printf("after AccessDenied: user %q, access denied: %t\n", user, errors.Is(store.Err(), registryauth.ErrAccessDenied))
	// Output:
	// 123456789012.dkr.ecr.us-east-1.amazonaws.com -> AWS true
	// quay.io -> openshift-release-dev+ocm false
	// failures: <nil>
	// after AccessDenied: user "", access denied: true
}

var _ auth.CredentialStore = staticStore{}
