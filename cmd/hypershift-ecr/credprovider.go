package main

import (
	"context"
	"flag"

	"github.com/openshift/hypershift-ecr/registryauth/credentialprovider"
)

func credentialProviderCommand() *command {
	return &command{
		name:    "credential-provider",
		summary: "answer one kubelet image credential provider request (KEP-2133)",
		usage:   "credential-provider [flags] < request.json",
		description: `
Run as a kubelet image credential provider plugin: read one
credentialprovider.kubelet.k8s.io/v1 CredentialProviderRequest on stdin and
write the CredentialProviderResponse on stdout, with a token from the ECR
keychain and the AWS SDK's default configuration (the node's instance role,
usually). The answer is what ecr-credential-provider answers: cacheKeyType
Registry and a cacheDuration of half the token's remaining life. An image that
is not on ECR gets a valid, empty answer, so the kubelet uses its other
credentials. On failure nothing is written to stdout, one line goes to stderr
and the exit status is 1, which the kubelet logs.

Configure the kubelet with the output of 'hypershift-ecr node-config'.`,
		example: `hypershift-ecr credential-provider < request.json
echo '{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest",' \
  '"image":"123456789012.dkr.ecr.us-east-1.amazonaws.com/ocp4/openshift4@sha256:..."}' \
  | hypershift-ecr credential-provider`,
		setup: func(c *cli, fs *flag.FlagSet) func(context.Context, []string) error {
			var af awsFlags
			af.register(fs)
			return func(ctx context.Context, args []string) error {
				if err := noArgs(args); err != nil {
					return err
				}
				kc, _, err := c.keychain(ctx, &af)
				if err != nil {
					return err
				}
				defer kc.Close()
				return credentialprovider.Serve(ctx, kc, c.stdin, c.stdout)
			}
		},
	}
}
