package registryauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/testing/fakeecr"
)

// A HyperShift-shaped use: the operator holds one Keychain for its life and
// augments the pull secret in memory right before a registry call. In
// production the option is registryauth.WithAWSConfig(cfg) with cfg from
// config.LoadDefaultConfig (IRSA, Pod Identity or the instance role).
func ExampleKeychain_Augment() {
	ecr := fakeecr.New()
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(ecr.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer kc.Close()

	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`)
	release := "quay.io/openshift-release-dev/ocp-release@sha256:6b3b1a8b2d2a2b1f0c9b1d6a7e1f1f6a4f0e1c2d3b4a5968778695a4b3c2d1e0"
	mirror := "123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:6b3b1a8b2d2a2b1f0c9b1d6a7e1f1f6a4f0e1c2d3b4a5968778695a4b3c2d1e0"

	effective, err := kc.Augment(context.Background(), pullSecret, mirror, release)
	if err != nil {
		panic(err)
	}
	var doc struct{ Auths map[string]json.RawMessage }
	_ = json.Unmarshal(effective, &doc)
	var hosts []string
	for h := range doc.Auths {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	fmt.Println(hosts)
	fmt.Println("GetAuthorizationToken calls:", ecr.TotalCalls())
	// Output:
	// [123456789012.dkr.ecr.us-east-1.amazonaws.com quay.io]
	// GetAuthorizationToken calls: 1
}

func ExampleKeychain_Credential() {
	ecr := fakeecr.New()
	kc, err := registryauth.NewKeychain(registryauth.WithClientFactory(ecr.ClientFactory))
	if err != nil {
		panic(err)
	}
	defer kc.Close()
	ctx := context.Background()

	for _, host := range []string{
		"123456789012.dkr.ecr.eu-west-1.amazonaws.com",
		"210987654321.dkr.ecr.eu-west-1.amazonaws.com", // same region: same token
		"quay.io",
	} {
		c, err := kc.Credential(ctx, host)
		switch {
		case errors.Is(err, registryauth.ErrNotECR):
			fmt.Println(host, "-> not ECR, use other credentials")
		case err != nil:
			fmt.Println(host, "->", err)
		default:
			fmt.Println(host, "->", c.Username, "valid for", time.Until(c.ExpiresAt).Round(time.Hour))
		}
	}
	fmt.Println("GetAuthorizationToken calls:", ecr.TotalCalls())
	// Output:
	// 123456789012.dkr.ecr.eu-west-1.amazonaws.com -> AWS valid for 12h0m0s
	// 210987654321.dkr.ecr.eu-west-1.amazonaws.com -> AWS valid for 12h0m0s
	// quay.io -> not ECR, use other credentials
	// GetAuthorizationToken calls: 1
}
