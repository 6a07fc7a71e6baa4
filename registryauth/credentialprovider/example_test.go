package credentialprovider_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// A plugin binary's main: read the kubelet's request on stdin, answer on
// stdout. Here the keychain runs over the fake ECR on a fixed clock; a
// real binary passes registryauth.WithAWSConfig(cfg), os.Stdin and
// os.Stdout, and prints a returned error to stderr before exiting 1.
func ExampleServe() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	kc, err := registryauth.NewKeychain(
		registryauth.WithClientFactory(fakeecr.New(fakeecr.WithClock(clk)).ClientFactory),
		registryauth.WithClock(clk),
	)
	if err != nil {
		panic(err)
	}
	defer kc.Close()

	request := `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release"}`
	if err := credentialprovider.Serve(context.Background(), kc, strings.NewReader(request), os.Stdout, credentialprovider.WithServeClock(clk)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Output:
	// {"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","cacheKeyType":"Registry","cacheDuration":"6h0m0s","auth":{"123456789012.dkr.ecr.us-east-1.amazonaws.com":{"username":"AWS","password":"fake-ecr-password-us-east-1-0001"}}}
}

// Taking credentials from the plugin a node's kubelet is configured with,
// wherever a registryauth.CredentialSource fits.
func ExampleNewPluginSource() {
	src, err := credentialprovider.NewPluginSource(
		"/usr/libexec/kubelet-image-credential-provider-plugins/ecr-credential-provider",
		credentialprovider.WithMatchImages("*.dkr.ecr.*.amazonaws.com", "*.dkr.ecr-fips.*.amazonaws.com"),
		credentialprovider.WithDefaultCacheDuration(12*time.Hour),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	cred, err := src.Credential(context.Background(), "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift/release:4.18.0-x86_64")
	switch {
	case errors.Is(err, registryauth.ErrNotECR):
		fmt.Println("not for this plugin: use other credentials")
	case err != nil:
		fmt.Println(err) // never holds the password
	default:
		fmt.Println("logging in to", cred.Registry, "as", cred.Username)
	}
}
