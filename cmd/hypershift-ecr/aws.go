package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
	"github.com/openshift/hypershift-ecr/registryauth"
	"github.com/openshift/hypershift-ecr/registryauth/ggcrauth"
)

// awsFlags are the flags of every command that calls ECR.
type awsFlags struct {
	apiEndpoint string
	aliases     aliasFlags
}

func (a *awsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.apiEndpoint, "api-endpoint", "", "send every ECR API call to `url`, such as an interface VPC endpoint https://vpce-0abc-xyz.api.ecr.us-east-1.vpce.amazonaws.com; the default is the SDK's choice, AWS_ENDPOINT_URL_ECR included")
	a.aliases.register(fs)
}

func (a *awsFlags) validate() error {
	if a.apiEndpoint == "" {
		return nil
	}
	u, err := url.Parse(a.apiEndpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return usagef("--api-endpoint %q: want an http(s) URL", redactURL(a.apiEndpoint))
	}
	return nil
}

// keychain loads the AWS configuration and returns a Keychain using it.
// The caller closes it.
func (c *cli) keychain(ctx context.Context, a *awsFlags) (*registryauth.Keychain, aws.Config, error) {
	if err := a.validate(); err != nil {
		return nil, aws.Config{}, err
	}
	aliases, _, err := a.aliases.aliases()
	if err != nil {
		return nil, aws.Config{}, err
	}
	cfg, err := c.loadAWSConfig(ctx)
	if err != nil {
		return nil, aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	var copts []registryauth.ClientOption
	if a.apiEndpoint != "" {
		copts = append(copts, registryauth.WithEndpoint(a.apiEndpoint))
	}
	kc, err := registryauth.NewKeychain(registryauth.WithAWSConfig(cfg, copts...), registryauth.WithAliases(aliases...))
	if err != nil {
		return nil, aws.Config{}, err
	}
	return kc, cfg, nil
}

// registryAuth is what registry clients authenticate with: fresh ECR tokens
// first, then the usual credentials for everything else.
func (c *cli) registryAuth(kc registryauth.CredentialSource) authn.Keychain {
	kcs := []authn.Keychain{ggcrauth.NewKeychain(kc)}
	if c.registryKeychain != nil {
		kcs = append(kcs, c.registryKeychain)
	}
	return authn.NewMultiKeychain(kcs...)
}

// apiEndpoint says where ECR API calls for reg go and which variant that
// is, as registryauth's client factory decides: a custom endpoint
// (--api-endpoint, AWS_ENDPOINT_URL_ECR, shared config) wins; otherwise
// FIPS for -fips hosts and dual-stack for dkr-ecr hosts.
func apiEndpoint(ctx context.Context, cfg aws.Config, reg ecrhost.Registry, custom string) (endpoint, variant string, err error) {
	client := ecr.NewFromConfig(cfg, func(o *ecr.Options) {
		o.Region = reg.Region
		if custom != "" {
			o.BaseEndpoint = aws.String(custom)
		}
	})
	if base := client.Options().BaseEndpoint; base != nil {
		return redactURL(*base), "custom", nil
	}
	ep, err := ecr.NewDefaultEndpointResolverV2().ResolveEndpoint(ctx, ecr.EndpointParameters{
		Region:       aws.String(reg.Region),
		UseFIPS:      aws.Bool(reg.FIPS),
		UseDualStack: aws.Bool(reg.DualStack),
	})
	if err != nil {
		return "", variantName(reg), err
	}
	return ep.URI.String(), variantName(reg), nil
}

// customEndpoint returns the custom ECR API endpoint the keychain's
// clients use, if any: --api-endpoint, else what the SDK configuration
// says (AWS_ENDPOINT_URL_ECR, AWS_ENDPOINT_URL, the shared config's
// services section). A custom endpoint does not depend on the region.
func customEndpoint(cfg aws.Config, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if base := ecr.NewFromConfig(cfg).Options().BaseEndpoint; base != nil {
		return *base
	}
	return ""
}

func variantName(reg ecrhost.Registry) string {
	if v := reg.EndpointVariant(); v != "" {
		return v
	}
	return "standard"
}

// redactURL keeps scheme, host and path: a URL may carry credentials in its
// user info or query.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(custom endpoint)"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
