package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/openshift/hypershift-ecr/pkg/preflight"
)

func preflightCommand() *command {
	return &command{
		name:    "preflight",
		summary: "check that a release can be pulled from its ECR mirror from here, and why not",
		usage:   "preflight --release IMAGE [flags]",
		description: `
Check, from where it runs, whether a release can be pulled from its Amazon ECR
mirror: the ECR API endpoint, the registry's DNS (private addresses expected in
a zero-egress VPC), the S3 layer bucket, STS when the identity needs it, an ECR
token for the mirror, the release in the mirror, and every component image in
it. A failed check says what to create or grant. The mirror checked is the ECR
registry of the release's first candidate under the mirror rules, given as for
'resolve'.

Credentials come from the AWS SDK's default configuration. Progress goes to
stderr. Exits 0 when every check passed (warnings allowed), 1 when one failed.`,
		example: `hypershift-ecr preflight \
  --release quay.io/openshift-release-dev/ocp-release@sha256:<digest> \
  --ecr-release-mirror 123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4 \
  --api-endpoint https://vpce-0abc-xyz.api.ecr.us-east-1.vpce.amazonaws.com`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			release := fs.String("release", "", "release `image`, by digest or tag (required)")
			var pf policyFlags
			pf.register(fs)
			var af awsFlags
			af.register(fs)
			region := fs.String("region", "", "`region` whose endpoints are checked (default: the mirror's)")
			useSTS := fs.Bool("use-sts", c.stsFromEnv(), "check the STS endpoint too; the default is true when AWS_ROLE_ARN or AWS_WEB_IDENTITY_TOKEN_FILE is set")
			stsEndpoint := fs.String("sts-endpoint", "", "custom STS endpoint `url` (an interface VPC endpoint)")
			allowPublic := fs.Bool("allow-public", false, "the cluster has internet egress: public addresses are not warnings")
			platform := fs.String("platform", "linux/amd64", "`os/arch` of the image read from a manifest list")
			concurrency := fs.Int("concurrency", preflight.DefaultConcurrency, "component checks in flight")
			timeout := fs.Duration("timeout", preflight.DefaultTimeout, "bound of each network operation")
			out := newOutputFlag(fs, "text", "text", "json")
			return func(ctx context.Context, args []string) error {
				if err := noArgs(args); err != nil {
					return err
				}
				if *release == "" {
					return usagef("--release is required")
				}
				if *concurrency < 1 {
					return usagef("--concurrency %d: want at least 1", *concurrency)
				}
				if *timeout <= 0 {
					return usagef("--timeout %v: want a positive duration", *timeout)
				}
				plat, err := parsePlatform(*platform)
				if err != nil {
					return err
				}
				policy, err := pf.policy(c.stdin)
				if err != nil {
					return err
				}
				kc, cfg, err := c.keychain(ctx, &af)
				if err != nil {
					return err
				}
				defer kc.Close()
				rep, err := preflight.Run(ctx, preflight.Config{
					Release:     *release,
					Policy:      policy,
					Keychain:    kc,
					Region:      *region,
					APIEndpoint: customEndpoint(cfg, af.apiEndpoint), // the one the keychain calls
					UseSTS:      *useSTS,
					STSEndpoint: *stsEndpoint,
					AllowPublic: *allowPublic,
					Transport:   c.transport,
					Dialer:      c.dialer,
					LookupHost:  c.lookupHost,
					Concurrency: *concurrency,
					Timeout:     *timeout,
					Progress:    c.stderr,
					Platform:    plat,
				})
				var cerr *preflight.ConfigError
				if errors.As(err, &cerr) {
					return usagef("%v", err)
				}
				if err != nil && rep == nil {
					return err
				}
				if werr := c.writePreflight(rep, out.value); werr != nil {
					return werr
				}
				if err != nil {
					return err // the context ended; the partial report is out
				}
				if !rep.OK() {
					return &exitError{code: exitFailure}
				}
				return nil
			}
		},
	}
}

func (c *cli) writePreflight(rep *preflight.Report, format string) error {
	if format == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(c.stdout)
}

// stsFromEnv reports whether the SDK will need STS before it can call ECR:
// IRSA (web identity) or an assumed role configured in the environment.
func (c *cli) stsFromEnv() bool {
	if c.getenv == nil {
		return false
	}
	return c.getenv("AWS_ROLE_ARN") != "" || c.getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != ""
}

func parsePlatform(s string) (*v1.Platform, error) {
	os, arch, ok := strings.Cut(s, "/")
	if !ok || os == "" || arch == "" {
		return nil, usagef("--platform %q: want os/arch[/variant]", s)
	}
	p := &v1.Platform{OS: os, Architecture: arch}
	if a, variant, ok := strings.Cut(arch, "/"); ok {
		p.Architecture, p.Variant = a, variant
	}
	return p, nil
}
