// Command hypershift-ecr shows, checks and serves what this module does for
// HyperShift: resolving OpenShift release images to their Amazon ECR mirrors
// and handing out ECR credentials that live in memory only.
//
// It is one binary with subcommands, in the style of oc and kubectl:
//
//	hypershift-ecr demo                     the whole story, offline, against in-process fakes
//	hypershift-ecr resolve IMAGE            which mirror serves a release, and why
//	hypershift-ecr preflight --release IMG  can this cluster pull the release from its mirrors
//	hypershift-ecr credentials HOST         which identity, region and endpoint serve an ECR host
//	hypershift-ecr credential-provider      a kubelet image credential provider (KEP-2133)
//	hypershift-ecr node-config              the kubelet CredentialProviderConfig for every ECR host form;
//	                                        with --machineconfig, the worker MachineConfig (in a ConfigMap
//	                                        for NodePool.spec.config) that lets CRI-O pull through ECR
//	                                        mirrors with the instance role; --ignition, the bare fragment
//
// demo needs neither AWS nor a network: it starts a fake EC2 metadata
// service, a fake ECR API spoken to by the real AWS SDK, and two registries
// ("quay.io" and an ECR registry that only accepts the fake API's tokens) on
// 127.0.0.1, mirrors a release built from real release metadata the way
// `oc adm release mirror` does, resolves it through the mirror and rotates
// the ECR token twice on a fake clock. What it prints is what a design
// review needs: the candidates, the mirror chosen and why, the release read
// from ECR, and that the pull secret HyperShift hashes never changes while
// the credentials used to reach ECR do.
//
// The AWS-backed subcommands load the SDK's default configuration (IRSA,
// EKS Pod Identity, the EC2 instance role, environment, shared files), so
// they run with the identity the operator or the kubelet would have. Mirror
// rules come from flags (--mirror, --tag-mirror, --overrides in HyperShift's
// OPENSHIFT_IMG_OVERRIDES form, --ecr-release-mirror, --pull-through-cache)
// or from YAML or JSON files (-f) holding ImageDigestMirrorSets,
// ImageTagMirrorSets, ImageContentSourcePolicies or HostedClusters.
//
// Conventions: results go to stdout, in a stable text form or as JSON with
// -o json; progress goes to stderr; a usage error prints one line on stderr
// and exits 2; a failure prints one line and exits 1. No token, password or
// pull-secret content is ever printed: credentials are described by their
// expiry and, in the demo, by a short SHA-256 fingerprint.
//
// main only wires the process to run; everything else is in-process and
// tested that way, with the AWS configuration loader, the STS client and the
// registry transport replaced by fakes.
package main
