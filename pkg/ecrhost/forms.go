package ecrhost

import (
	"slices"
	"strings"
)

// layout says how the labels of a registry host are arranged.
type layout uint8

const (
	// layoutAccountRegion is "<account>.<service>.<region>.<suffix>".
	layoutAccountRegion layout = iota + 1
	// layoutFixed is one fixed host name: it names no account and no region.
	layoutFixed
)

// form is one row of the host table. Parse, MatchImages and alias
// validation all read this table and nothing else, so a form added here is
// parsed, matched by the kubelet and accepted for aliases at once.
type form struct {
	name   string
	layout layout
	// service is the label(s) between account and region, e.g. "dkr.ecr";
	// empty for layoutFixed.
	service string
	// suffix is the DNS suffix after the region; for layoutFixed the whole host.
	suffix    string
	partition string
	// regionPrefix narrows the partition's regions to those that serve this
	// form. FIPS endpoints exist only in US regions, so "us-" on commercial
	// FIPS rows; empty means every region of the partition.
	regionPrefix string
	// region is the fixed region of layoutFixed rows.
	region                  string
	fips, dualStack, public bool
	example                 string

	// head and tail are service+"." and "."+suffix, computed once so the hot
	// path compares substrings and never concatenates.
	head, tail string
}

// forms is the single table of Amazon ECR registry host forms. Commercial
// and GovCloud share DNS suffixes but not partitions, so each has its own
// row; their kubelet globs coincide and MatchImages emits each glob once.
var forms = withAffixes([]form{
	{name: "commercial", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "amazonaws.com", partition: "aws",
		example: "123456789012.dkr.ecr.us-east-1.amazonaws.com"},
	{name: "GovCloud", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "amazonaws.com", partition: "aws-us-gov",
		example: "123456789012.dkr.ecr.us-gov-west-1.amazonaws.com"},
	{name: "commercial FIPS", layout: layoutAccountRegion, service: "dkr.ecr-fips", suffix: "amazonaws.com", partition: "aws", regionPrefix: "us-", fips: true,
		example: "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com"},
	{name: "GovCloud FIPS", layout: layoutAccountRegion, service: "dkr.ecr-fips", suffix: "amazonaws.com", partition: "aws-us-gov", fips: true,
		example: "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com"},
	{name: "commercial dual-stack", layout: layoutAccountRegion, service: "dkr-ecr", suffix: "on.aws", partition: "aws", dualStack: true,
		example: "123456789012.dkr-ecr.us-east-1.on.aws"},
	{name: "GovCloud dual-stack", layout: layoutAccountRegion, service: "dkr-ecr", suffix: "on.aws", partition: "aws-us-gov", dualStack: true,
		example: "123456789012.dkr-ecr.us-gov-east-1.on.aws"},
	{name: "commercial dual-stack FIPS", layout: layoutAccountRegion, service: "dkr-ecr-fips", suffix: "on.aws", partition: "aws", regionPrefix: "us-", fips: true, dualStack: true,
		example: "123456789012.dkr-ecr-fips.us-west-2.on.aws"},
	{name: "GovCloud dual-stack FIPS", layout: layoutAccountRegion, service: "dkr-ecr-fips", suffix: "on.aws", partition: "aws-us-gov", fips: true, dualStack: true,
		example: "123456789012.dkr-ecr-fips.us-gov-west-1.on.aws"},
	{name: "China", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "amazonaws.com.cn", partition: "aws-cn",
		example: "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn"},
	{name: "China dual-stack", layout: layoutAccountRegion, service: "dkr-ecr", suffix: "on.amazonwebservices.com.cn", partition: "aws-cn", dualStack: true,
		example: "123456789012.dkr-ecr.cn-northwest-1.on.amazonwebservices.com.cn"},
	{name: "EU sovereign cloud", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "amazonaws.eu", partition: "aws-eusc",
		example: "123456789012.dkr.ecr.eusc-de-east-1.amazonaws.eu"},
	{name: "ISO", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "c2s.ic.gov", partition: "aws-iso",
		example: "123456789012.dkr.ecr.us-iso-east-1.c2s.ic.gov"},
	{name: "ISO-B", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "sc2s.sgov.gov", partition: "aws-iso-b",
		example: "123456789012.dkr.ecr.us-isob-east-1.sc2s.sgov.gov"},
	{name: "ISO-E", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "cloud.adc-e.uk", partition: "aws-iso-e",
		example: "123456789012.dkr.ecr.eu-isoe-west-1.cloud.adc-e.uk"},
	{name: "ISO-F", layout: layoutAccountRegion, service: "dkr.ecr", suffix: "csp.hci.ic.gov", partition: "aws-iso-f",
		example: "123456789012.dkr.ecr.us-isof-south-1.csp.hci.ic.gov"},
	{name: "ECR Public", layout: layoutFixed, suffix: "public.ecr.aws", partition: "aws", region: "us-east-1", public: true,
		example: "public.ecr.aws"},
	{name: "ECR Public dual-stack", layout: layoutFixed, suffix: "ecr-public.aws.com", partition: "aws", region: "us-east-1", dualStack: true, public: true,
		example: "ecr-public.aws.com"},
})

// tableGlobs is computed once; MatchImages hands out copies.
var tableGlobs = globsOf(forms)

// accountForms and fixedForms split the table by layout, in table order,
// so matching a host tries only the rows its first label allows.
var accountForms, fixedForms = splitByLayout(forms)

func splitByLayout(rows []form) (account, fixed []*form) {
	for i := range rows {
		if rows[i].layout == layoutFixed {
			fixed = append(fixed, &rows[i])
		} else {
			account = append(account, &rows[i])
		}
	}
	return account, fixed
}

func withAffixes(rows []form) []form {
	for i := range rows {
		if rows[i].layout == layoutAccountRegion {
			rows[i].head = rows[i].service + "."
			rows[i].tail = "." + rows[i].suffix
		}
	}
	return rows
}

// glob is the kubelet matchImages entry for the form. The kubelet matches a
// '*' against exactly one DNS label, which is what account and region are.
func (f *form) glob() string {
	if f.layout == layoutFixed {
		return f.suffix
	}
	return "*." + f.service + ".*." + f.suffix
}

// acceptsRegion reports whether region is served by the form: the region's
// partition must be the form's, so "cn-north-1" on amazonaws.com is refused.
func (f *form) acceptsRegion(region string) bool {
	partition, ok := PartitionForRegion(region)
	return ok && f.servesRegion(region, partition)
}

// servesRegion is acceptsRegion for a region whose partition is known.
func (f *form) servesRegion(region, partition string) bool {
	return partition == f.partition && strings.HasPrefix(region, f.regionPrefix)
}

func (f *form) registry(host, account, region string) Registry {
	return Registry{
		Host:      host,
		AccountID: account,
		Region:    region,
		Partition: f.partition,
		FIPS:      f.fips,
		DualStack: f.dualStack,
		Public:    f.public,
	}
}

func globsOf(rows []form) []string {
	var globs []string
	for i := range rows {
		if g := rows[i].glob(); !slices.Contains(globs, g) {
			globs = append(globs, g)
		}
	}
	return globs
}

// MatchImages returns the kubelet CredentialProviderConfig matchImages
// globs for every Amazon ECR host form, in table order, e.g.
// "*.dkr.ecr.*.amazonaws.com", "*.dkr-ecr.*.on.aws", "public.ecr.aws".
// Forms that differ only in partition (commercial and GovCloud) share one
// glob. The globs are looser than Parse ('*' is any label): the kubelet may
// run the provider for a host Parse refuses, never the other way round. The kubelet does not match an image that names a port
// against a glob without one; ECR hosts are never addressed with a port.
// The slice is new on every call; the caller may modify it.
func MatchImages() []string {
	return slices.Clone(tableGlobs)
}
