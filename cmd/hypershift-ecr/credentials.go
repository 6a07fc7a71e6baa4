package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/openshift/hypershift-ecr/registryauth"
)

func credentialsCommand() *command {
	return &command{
		name:    "credentials",
		summary: "show which identity, region and API endpoint would serve an ECR host",
		usage:   "credentials [flags] HOST",
		description: `
Show what the ECR keychain would do for a registry host or image, with the AWS
SDK's default configuration (IRSA, EKS Pod Identity, the EC2 instance role,
environment, shared files): the registry's account, region and partition, the
ECR API endpoint and its variant (standard, fips, dualstack, or a custom
endpoint), where the AWS credentials come from, the caller's identity
(sts:GetCallerIdentity, or "unknown" and why), and the expiry of the ECR token
it fetched. The token itself is never printed.

Exits 1 when no token could be had, after printing what is known.`,
		example: `hypershift-ecr credentials 123456789012.dkr.ecr.us-east-1.amazonaws.com
hypershift-ecr credentials -o json 123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/ocp4/openshift4`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			var af awsFlags
			af.register(fs)
			timeout := fs.Duration("timeout", 30*time.Second, "give up after this long")
			out := newOutputFlag(fs, "text", "text", "json")
			return func(ctx context.Context, args []string) error {
				if len(args) != 1 {
					return usagef("want exactly one HOST (an ECR registry host or image), got %d arguments", len(args))
				}
				return c.credentials(ctx, args[0], &af, *timeout, out.value)
			}
		},
	}
}

// credentialsReport is the output of `credentials`. It holds no secret.
type credentialsReport struct {
	Registry         string     `json:"registry"`
	Account          string     `json:"account,omitempty"`
	Region           string     `json:"region"`
	Partition        string     `json:"partition"`
	Public           bool       `json:"public,omitempty"`
	EndpointVariant  string     `json:"endpointVariant"`
	APIEndpoint      string     `json:"apiEndpoint,omitempty"`
	CredentialSource string     `json:"credentialSource,omitempty"`
	Identity         string     `json:"identity"`
	IdentityError    string     `json:"identityError,omitempty"`
	TokenExpiresAt   *time.Time `json:"tokenExpiresAt,omitempty"`
	TokenError       string     `json:"tokenError,omitempty"`
}

func (c *cli) credentials(ctx context.Context, host string, af *awsFlags, timeout time.Duration, format string) error {
	if err := af.validate(); err != nil {
		return err
	}
	_, parser, err := af.aliases.aliases()
	if err != nil {
		return err
	}
	reg, ok := parser.Parse(host)
	if !ok {
		return usagef("%q is not an Amazon ECR registry host (nor an --alias)", host)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	kc, cfg, err := c.keychain(ctx, af)
	if err != nil {
		return err
	}
	defer kc.Close()

	rep := credentialsReport{
		Registry: reg.Host, Account: reg.AccountID, Region: reg.Region, Partition: reg.Partition,
		Public: reg.Public, EndpointVariant: variantName(reg),
	}
	if !reg.Public {
		ep, variant, err := apiEndpoint(ctx, cfg, reg, af.apiEndpoint)
		rep.EndpointVariant = variant
		if err == nil {
			rep.APIEndpoint = ep
		}
	}
	rep.CredentialSource, rep.Identity, rep.IdentityError = c.identity(ctx, cfg, reg.Region)

	var tokenErr error
	switch cred, err := kc.Credential(ctx, host); {
	case err == nil:
		exp := cred.ExpiresAt.UTC()
		rep.TokenExpiresAt = &exp
	case errors.Is(err, registryauth.ErrPublicRegistry):
		rep.TokenError = "none needed: ECR Public serves pulls anonymously"
	default:
		rep.TokenError = err.Error()
		tokenErr = err
	}

	if format == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := writeCredentials(c.stdout, rep); err != nil {
		return err
	}
	if tokenErr != nil {
		return &exitError{code: exitFailure, err: fmt.Errorf("no ECR token for %s: %w", reg.Host, tokenErr)}
	}
	return nil
}

// identity says where the SDK's credentials come from and whose they are.
func (c *cli) identity(ctx context.Context, cfg aws.Config, region string) (source, arn, reason string) {
	if cfg.Credentials == nil {
		return "none", "unknown", "the AWS configuration has no credentials provider"
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return "none", "unknown", "no AWS credentials: " + err.Error()
	}
	source = creds.Source
	if source == "" {
		source = "unnamed provider"
	}
	out, err := c.newSTS(cfg, region).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return source, "unknown", "sts:GetCallerIdentity failed: " + err.Error()
	}
	if out == nil || out.Arn == nil {
		return source, "unknown", "sts:GetCallerIdentity returned no ARN"
	}
	return source, *out.Arn, ""
}

func writeCredentials(w io.Writer, r credentialsReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k+":", v) }
	row("registry", r.Registry)
	if r.Account != "" {
		row("account", r.Account)
	}
	row("region", r.Region)
	row("partition", r.Partition)
	if r.Public {
		row("api endpoint", "none (ECR Public)")
	} else {
		ep := r.APIEndpoint
		if ep == "" {
			ep = "unknown"
		}
		row("api endpoint", ep+" ("+r.EndpointVariant+")")
	}
	row("credentials", r.CredentialSource)
	id := r.Identity
	if r.IdentityError != "" {
		id += " (" + oneLine(r.IdentityError) + ")"
	}
	row("identity", id)
	switch {
	case r.TokenExpiresAt != nil:
		left := time.Until(*r.TokenExpiresAt).Round(time.Minute)
		row("token", fmt.Sprintf("expires %s (in %s)", r.TokenExpiresAt.Format(time.RFC3339), shortDuration(left)))
	default:
		row("token", oneLine(r.TokenError))
	}
	return tw.Flush()
}
