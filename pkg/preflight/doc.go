// Package preflight answers the question an SRE asks before pointing a
// zero-egress cluster at a release: can this release be pulled from its
// Amazon ECR mirror right now, and if not, why?
//
// Run takes the release as users give it (by digest or by tag), the mirror
// policy and the process's registryauth keychain, finds the release's ECR
// mirror (the registry of its first candidate on an ECR host, see
// mirrorpolicy.Policy.Candidates), and runs seven checks in a fixed order.
// The result is a Report: one Check per step with a status ("pass", "fail",
// "warn", "skip"), a detail, and for failures a hint naming what to create
// or grant. Report.WriteText prints it for a terminal; the Report marshals
// to JSON with stable lower-camel-case names for `-o json`. Run returns an
// error only for input it cannot use (a *ConfigError matching
// ErrInvalidRelease, ErrNoECRMirror or ErrInvalidConfig) or when its
// context ends; a failed check is a result, not an error.
//
// # The checks
//
// The four reachability checks run concurrently, so that several dead
// endpoints cost one timeout; the registry checks then run in order.
//
//   - ecr-api-endpoint: a TCP connection to the ECR API endpoint the keychain
//     calls (Config.APIEndpoint, or the SDK's default for the mirror host:
//     api.ecr.<region>.amazonaws.com, FIPS and dual-stack variants, China's
//     .amazonaws.com.cn). It proves a route and a listener. The hint names the
//     interface endpoint com.amazonaws.<region>.ecr.api
//     (cn.com.amazonaws.<region>.ecr.api in China).
//   - registry-dns: the registry host resolves. With the ecr.dkr interface
//     endpoint and private DNS, the VPC's resolver answers with private
//     addresses; any public address is a warning (a client may pick it and
//     leave the VPC), unless Config.AllowPublic says the cluster has internet
//     egress. Private means 10/8, 172.16/12, 192.168/16, 100.64/10 and IPv6
//     unique local addresses (fc00::/7); loopback counts as private so that
//     tests on 127.0.0.1 behave like a VPC.
//   - s3-layer-bucket: a TCP connection to
//     prod-<region>-starport-layer-bucket.s3.<region>.amazonaws.com, where ECR
//     redirects layer downloads. An S3 gateway endpoint has no DNS name or
//     private address of its own (it is a route), so a public address here
//     is expected and no warning.
//   - sts-endpoint (when Config.UseSTS): a TCP connection to
//     sts.<region>.amazonaws.com, which IRSA's AssumeRoleWithWebIdentity and
//     assumed roles need before any ECR call; hint com.amazonaws.<region>.sts.
//     A connection to a public address on ecr-api-endpoint or sts-endpoint is
//     a warning, as for registry-dns.
//   - get-authorization-token: the keychain's Credential for the mirror host,
//     exactly what a pull does. Pass reports the token's expiry, never the
//     token; failure reports the *registryauth.TokenError's kind and cause,
//     with its hint on its own line (an IAM statement for access denied, VPC
//     endpoints for an unreachable API, the credential chain for no
//     credentials). Check.Err keeps the error for errors.Is.
//   - release-in-mirror: an authenticated manifest HEAD of each ECR candidate
//     of the release, in policy order, through go-containerregistry (ggcrprobe
//     over ggcrauth over the keychain); pass gives the digest-pinned mirror
//     pullspec. Failure carries a *releaseinfo.NotMirroredError naming the
//     mirror and its answer (manifest unknown, or ECR's 403 for a missing or
//     unreadable repository, or unreachable). Candidates off ECR, such as
//     quay.io, are never contacted. A tag under digest-only mirrors (what
//     `oc adm release mirror` configures) is looked up as the same tag in the
//     mirror repository; found, it is a warning, since a node sends tag pulls
//     to the source, and the hint gives the digest to use instead.
//   - components-in-mirror: the release metadata is read from the mirror
//     (releaseinfo/remote, with the policy rewriting component pullspecs to
//     their first candidate), then every distinct component image gets a
//     manifest HEAD, Config.Concurrency at a time, each bounded by
//     Config.Timeout, with progress lines on Config.Progress. Report.Missing
//     lists the images the mirror does not hold, or that the policy sends off
//     ECR; Report.Unchecked those that could not be asked. This is the
//     mirror-lag question: `oc adm release mirror` copies components first and
//     the release last, but an interrupted or filtered copy leaves holes.
//
// A check whose prerequisite failed is skipped, naming the failed check:
// the token check needs the API endpoint (and STS when used), the release
// check needs the token and the registry's DNS, the component check needs
// the release and the S3 bucket (reading the release metadata downloads a
// layer through S3).
//
// # What these checks cannot prove
//
// They prove what the process running them can do, from where it runs. Run
// from a laptop or a management cluster, they say nothing about the worker
// nodes' subnets, route tables and security groups. The token comes from
// the process's identity, not from the nodes' instance role that the
// kubelet's ecr-credential-provider uses. A TCP connection does not prove that
// a VPC endpoint policy or the S3 gateway endpoint's policy allows the
// request; only the release metadata read proves one S3 layer download.
// Component checks are manifest HEADs: they prove the manifests are in the
// mirror, not that every layer can be downloaded. Nothing here checks that
// the nodes' kubelet credential provider matches the mirror's host, or that
// CRI-O's mirror configuration (ImageDigestMirrorSet) is in place; only
// pulls on a node prove that. The S3 host checked is the IPv4 one, also for
// dual-stack registry hosts. Other ECR mirrors of the same release, on other
// registries, are not checked.
package preflight
