package ecrhost

import (
	"fmt"
	"strings"
)

// Alias declares a host name that reaches an ECR registry through a DNS
// CNAME (e.g. "registry.example.com" pointing at
// "123456789012.dkr.ecr.us-east-1.amazonaws.com"). An alias is never
// inferred: its host says nothing about the account or region, so the
// caller states them.
type Alias struct {
	// Host is the alias host name, without scheme, port or path. It is
	// matched case-insensitively.
	Host string
	// AccountID is the 12-digit account owning the registry behind Host.
	AccountID string
	// Region is the region of the registry behind Host, e.g. "us-east-1".
	Region string
	// FIPS and DualStack describe the ECR host the CNAME points at; the
	// combination must exist in Region's partition.
	FIPS, DualStack bool
}

// AliasError reports why NewParser refused an alias.
type AliasError struct {
	// Index is the position of the alias in NewParser's arguments.
	Index int
	// Host is the alias host as given.
	Host string
	// Field is the Alias field at fault: "Host", "AccountID", "Region",
	// "FIPS" or "DualStack".
	Field string
	// Reason says what is wrong with Field.
	Reason string
}

func (e *AliasError) Error() string {
	return fmt.Sprintf("ecrhost: alias %d (host %q): %s %s", e.Index, e.Host, e.Field, e.Reason)
}

// Parser parses ECR hosts like Parse and, first, a set of alias hosts.
// The zero value and a nil *Parser have no aliases and behave like Parse.
// A Parser is immutable and safe for concurrent use.
type Parser struct {
	aliases map[string]Registry // keyed by lower-case host
	hosts   []string            // alias hosts in argument order, for MatchImages
}

// NewParser returns a Parser that recognises aliases in addition to the
// table of ECR host forms. Every alias is validated: Host must be a DNS
// name with at least two labels that is not itself an ECR host, AccountID
// must be 12 digits, Region must be shaped like an AWS region, FIPS and
// DualStack must name a form that exists in Region's partition, and no
// host may appear twice. The first problem found is returned as an
// *AliasError.
func NewParser(aliases ...Alias) (*Parser, error) {
	p := &Parser{aliases: make(map[string]Registry, len(aliases))}
	for i, a := range aliases {
		r, err := aliasRegistry(a)
		if err != nil {
			err.Index = i
			return nil, err
		}
		if _, dup := p.aliases[r.Host]; dup {
			return nil, &AliasError{Index: i, Host: a.Host, Field: "Host", Reason: "is given more than once"}
		}
		p.aliases[r.Host] = r
		p.hosts = append(p.hosts, r.Host)
	}
	return p, nil
}

// Parse is like the package-level Parse, except that a host equal to an
// alias host (ignoring case) yields the alias's registry, whose Host is the
// alias host. Aliases are exact: a subdomain of an alias is not an alias.
func (p *Parser) Parse(hostOrImage string) (Registry, bool) {
	host, ok := rawHost(hostOrImage)
	if !ok {
		return Registry{}, false
	}
	// Match the host as written first: aliases and forms hold only valid
	// lower-case hosts, so a match also validates it, and the common
	// lower-case input costs no character scan. Otherwise retry once,
	// lower-cased; lowerHost refuses a host it would not change.
	for {
		if p != nil {
			if r, ok := p.aliases[host]; ok {
				return r, true
			}
		}
		if f, account, region := matchHost(host); f != nil {
			return f.registry(host, account, region), true
		}
		if host, ok = lowerHost(host); !ok {
			return Registry{}, false
		}
	}
}

// MatchImages returns MatchImages() followed by the alias hosts in the
// order given to NewParser. The slice is new on every call.
func (p *Parser) MatchImages() []string {
	if p == nil {
		return MatchImages()
	}
	return append(MatchImages(), p.hosts...)
}

func aliasRegistry(a Alias) (Registry, *AliasError) {
	fail := func(field, reason string) (Registry, *AliasError) {
		return Registry{}, &AliasError{Host: a.Host, Field: field, Reason: reason}
	}
	// Validate before lower-casing: ToLower maps some non-ASCII letters
	// (the Kelvin sign) onto ASCII ones.
	if reason := dnsHostProblem(a.Host); reason != "" {
		return fail("Host", reason)
	}
	host := strings.ToLower(a.Host)
	if f, _, _ := matchHost(host); f != nil {
		return fail("Host", "is an ECR registry host; aliases are for other names")
	}
	if !isAccountID(a.AccountID) {
		return fail("AccountID", "must be 12 digits")
	}
	partition, ok := PartitionForRegion(a.Region)
	if !ok {
		return fail("Region", "is not an AWS region name")
	}
	// The alias must point at a form the table has, so an alias can never
	// claim what no real ECR host could (FIPS in eu-west-1, dual-stack ISO).
	fipsExists, formExists := false, false
	for i := range forms {
		f := &forms[i]
		if f.layout != layoutAccountRegion || f.fips != a.FIPS || !f.acceptsRegion(a.Region) {
			continue
		}
		fipsExists = true
		if f.dualStack == a.DualStack {
			formExists = true
		}
	}
	if !fipsExists {
		return fail("FIPS", fmt.Sprintf("is %t but region %s has no such registry endpoint", a.FIPS, a.Region))
	}
	if !formExists {
		return fail("DualStack", fmt.Sprintf("is %t but region %s has no such registry endpoint", a.DualStack, a.Region))
	}
	return Registry{
		Host:      host,
		AccountID: a.AccountID,
		Region:    a.Region,
		Partition: partition,
		FIPS:      a.FIPS,
		DualStack: a.DualStack,
	}, nil
}

// dnsHostProblem returns why host, in any case, is not a usable alias
// host, or "". It wants two labels at least: a single-label name in an
// image reference is read as a Docker Hub namespace, never as a registry.
func dnsHostProblem(host string) string {
	const maxHostLen, maxLabelLen = 253, 63
	switch {
	case host == "":
		return "is empty"
	case len(host) > maxHostLen:
		return "is longer than 253 characters"
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return "must have at least two DNS labels"
	}
	for _, l := range labels {
		switch {
		case l == "":
			return "has an empty DNS label"
		case len(l) > maxLabelLen:
			return "has a DNS label longer than 63 characters"
		case l[0] == '-' || l[len(l)-1] == '-':
			return "has a DNS label starting or ending with '-'"
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return fmt.Sprintf("has %q, which is not allowed in a DNS name (give the host without scheme, port or path)", c)
			}
		}
	}
	if allDigits(labels[len(labels)-1]) {
		return "is an IP address or has a numeric top-level label"
	}
	return ""
}
