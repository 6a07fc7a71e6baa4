// Package ecrhost recognises Amazon ECR registry hosts and generates the
// kubelet credential provider globs that match them.
//
// # Host forms
//
// A private ECR registry host is "<account>.<service>.<region>.<suffix>":
// a 12-digit account, the service labels "dkr.ecr" (IPv4), "dkr.ecr-fips"
// (FIPS), "dkr-ecr" (dual-stack) or "dkr-ecr-fips" (dual-stack FIPS), the
// region, and the DNS suffix of the region's partition: "amazonaws.com"
// (commercial and GovCloud), "on.aws" (dual-stack), "amazonaws.com.cn" and
// "on.amazonwebservices.com.cn" (China), "amazonaws.eu" (EU sovereign
// cloud), "c2s.ic.gov", "sc2s.sgov.gov", "cloud.adc-e.uk" and
// "csp.hci.ic.gov" (ISO, ISO-B, ISO-E, ISO-F). ECR Public is the fixed host
// "public.ecr.aws", or "ecr-public.aws.com" for dual-stack; it has no
// account, and its API lives only in us-east-1, which is the region Parse
// reports for it.
//
// # Anchoring
//
// Parse accepts a host only when the whole host is one of these forms. A
// look-alike such as "123456789012.dkr.ecr.us-east-1.amazonaws.com.attacker.example"
// or "evil-123456789012.dkr.ecr.us-east-1.amazonaws.com" is not ECR: handing
// it AWS credentials would give them to whoever owns that DNS name. The
// region must also belong to the suffix's partition ("cn-north-1" is never
// on "amazonaws.com"), and FIPS hosts are accepted only in the US
// commercial and GovCloud regions, the only ones that serve FIPS endpoints.
// A region is checked for its shape, not against a list of regions, so a
// newly opened region works without a new release.
//
// # Normalisation
//
// Parse takes what callers have at hand: a bare host, "host:port", an
// http:// or https:// URL, or an image reference such as
// "123456789012.dkr.ecr.us-east-1.amazonaws.com/team/app@sha256:...". The
// scheme, port and path are dropped and the host is lower-cased, so the
// returned Registry.Host is the same for every spelling of one registry and
// can serve as a cache key. Input that is already lower case is parsed
// without allocating, because Parse sits on every credential lookup.
//
// # One table
//
// Parse, MatchImages and alias validation are all derived from a single
// table of host forms. A form added to the table is at once parsed, covered
// by a kubelet matchImages glob and allowed as an alias target, so the
// parser and the kubelet configuration cannot disagree about which images
// get ECR credentials. In the kubelet each '*' of a glob matches exactly
// one DNS label, so MatchImages returns one glob per distinct form, e.g.
// "*.dkr.ecr.*.amazonaws.com" and "*.dkr-ecr.*.on.aws".
//
// # Aliases
//
// A registry reached through a DNS CNAME cannot be recognised from its
// name. Such hosts are opt-in: NewParser takes Alias values that state the
// account and region behind each host, validates them against the table,
// and returns a Parser that matches those exact hosts (case-insensitively)
// before the table. The package-level Parse and MatchImages never consult
// aliases, and the zero Parser behaves like them.
package ecrhost
