package ecrhost

import "strings"

const accountIDLen = 12

// Parse reports whether hostOrImage names an Amazon ECR registry and, if
// so, which one. hostOrImage may be a bare host, "host:port", an http:// or
// https:// URL with or without a path, or an image reference such as
// "host/repo:tag" or "host/repo@sha256:...". The whole host must be one of
// the known forms; anything else, including hosts that merely contain an
// ECR host, is not ECR and yields false.
//
// Parse does not allocate when the host part of hostOrImage is already
// lower case: the returned strings are substrings of hostOrImage.
func Parse(hostOrImage string) (Registry, bool) {
	return (*Parser)(nil).Parse(hostOrImage)
}

// IsECR reports whether Parse accepts s.
func IsECR(s string) bool {
	_, ok := Parse(s)
	return ok
}

// String returns the registry host.
func (r Registry) String() string {
	return r.Host
}

// EndpointVariant names the API endpoint variant the registry's host
// calls for: "fips", "dualstack", "fips+dualstack", or "" for the
// partition's standard endpoint.
func (r Registry) EndpointVariant() string {
	switch {
	case r.FIPS && r.DualStack:
		return "fips+dualstack"
	case r.FIPS:
		return "fips"
	case r.DualStack:
		return "dualstack"
	}
	return ""
}

// PartitionForRegion returns the AWS partition of region, e.g. "aws-cn" for
// "cn-north-1", and false when region is not shaped like an AWS region
// ("us-east-1", "us-gov-west-1", "eusc-de-east-1"). The region need not
// exist yet: new regions keep their partition's prefix, and a registry in
// a region AWS has not opened simply fails to resolve.
func PartitionForRegion(region string) (string, bool) {
	if !validRegion(region) {
		return "", false
	}
	// Dispatch on the first letter: most lookups are commercial regions,
	// which then cost one comparison instead of seven.
	switch region[0] {
	case 'c':
		if strings.HasPrefix(region, "cn-") {
			return "aws-cn", true
		}
	case 'u':
		switch {
		case strings.HasPrefix(region, "us-gov-"):
			return "aws-us-gov", true
		case strings.HasPrefix(region, "us-iso-"):
			return "aws-iso", true
		case strings.HasPrefix(region, "us-isob-"):
			return "aws-iso-b", true
		case strings.HasPrefix(region, "us-isof-"):
			return "aws-iso-f", true
		}
	case 'e':
		switch {
		case strings.HasPrefix(region, "eu-isoe-"):
			return "aws-iso-e", true
		case strings.HasPrefix(region, "eusc-"):
			return "aws-eusc", true
		}
	}
	return "aws", true
}

// matchHost returns the form of host with its account and region, or a
// nil form. Only a valid lower-case host can match: every byte of it is
// either a form's fixed label text, an account digit or part of a
// well-formed region.
func matchHost(host string) (f *form, account, region string) {
	account, rest := cutAccount(host)
	if account == "" {
		for _, row := range fixedForms {
			if host == row.suffix {
				return row, "", row.region
			}
		}
		return nil, "", ""
	}
	// Rows sharing affixes (commercial and GovCloud) see the same region;
	// work its partition out once.
	var checked, partition string
	regionOK := false
	for _, row := range accountForms {
		if len(rest) <= len(row.head)+len(row.tail) ||
			rest[:len(row.head)] != row.head || rest[len(rest)-len(row.tail):] != row.tail {
			continue
		}
		region = rest[len(row.head) : len(rest)-len(row.tail)]
		if region != checked {
			checked = region
			partition, regionOK = PartitionForRegion(region)
		}
		if regionOK && row.servesRegion(region, partition) {
			return row, account, region
		}
	}
	return nil, "", ""
}

// cutAccount splits "<12 digits>.<rest>"; both are empty when host does not
// start with an account label, so "evil-123456789012.dkr.ecr..." never
// reaches the table's account forms.
func cutAccount(host string) (account, rest string) {
	if len(host) <= accountIDLen || host[accountIDLen] != '.' || !isAccountID(host[:accountIDLen]) {
		return "", ""
	}
	return host[:accountIDLen], host[accountIDLen+1:]
}

// rawHost returns the host named by a bare host, host:port, URL or image
// reference, as written: not yet validated, not lower-cased. It checks the
// port and refuses whitespace and control bytes after the host (in the
// host they fail matching).
//
// Hosts are validated by matching, not by a character scan: a host equal
// to an alias, or made of a form's fixed labels plus a 12-digit account and
// a well-formed region, is a valid lower-case host. That keeps the hot path
// (an already lower-case ECR host) to a few comparisons.
func rawHost(s string) (string, bool) {
	rest := s
	isURL := false
	if len(rest) > 0 && (rest[0]|0x20) == 'h' {
		switch {
		case hasPrefixFold(rest, "https://"):
			rest, isURL = rest[len("https://"):], true
		case hasPrefixFold(rest, "http://"):
			rest, isURL = rest[len("http://"):], true
		}
	}
	hostPort := rest
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hostPort = rest[:i]
	}
	if isURL {
		// Only a URL may end its host with a query or fragment; in an
		// image reference '?' and '#' are invalid and stay in the host,
		// which then matches nothing.
		if i := strings.IndexAny(hostPort, "?#"); i >= 0 {
			hostPort = hostPort[:i]
		}
	}
	host := hostPort
	if i := strings.IndexByte(hostPort, ':'); i >= 0 {
		host = hostPort[:i]
		if !validPort(hostPort[i+1:]) {
			return "", false // also "host:443:443", "user:secret@host"
		}
	}
	// Whitespace or control bytes in the host fail matching; refusing them
	// in the path too keeps "host/team\n..." out of logs and cache keys.
	if hasControlOrSpace(rest[len(hostPort):]) {
		return "", false
	}
	return host, host != ""
}

// hasControlOrSpace reports whether s has a byte <= ' ' or DEL. Image
// references end in a 71-byte digest, so it tests 8 bytes per step: a word
// has a byte below n when (w - n*0x01..) & ^w & 0x80.. is non-zero, and a
// byte equal to DEL when w^0x7f.. has a zero byte (a byte below 1).
func hasControlOrSpace(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := le64(s[i : i+8])
		del := w ^ (0x7f * ones)
		if (w-0x21*ones)&^w&highs != 0 || (del-ones)&^del&highs != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// lowerHost returns host lower-cased when it has upper-case letters and
// only the characters of a DNS name. A host without upper case yields
// false: lower-casing would not change it, and it has already failed to
// match.
func lowerHost(host string) (string, bool) {
	hasUpper := false
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '-':
		case 'A' <= c && c <= 'Z':
			hasUpper = true
		default:
			// '@' (userinfo), '[' (IPv6 literal), '_', non-ASCII: never
			// part of an ECR or alias host, and ToLower must not see
			// non-ASCII (the Kelvin sign lower-cases to 'k').
			return "", false
		}
	}
	if !hasUpper {
		return "", false
	}
	return strings.ToLower(host), true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// validPort accepts 1..65535 written in at most five digits.
func validPort(p string) bool {
	if p == "" || len(p) > 5 || !allDigits(p) {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		n = n*10 + int(p[i]-'0')
	}
	return n >= 1 && n <= 65535
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i]-'0' > 9 { // unsigned: bytes below '0' wrap around
			return false
		}
	}
	return true
}

// isAccountID reports whether s is 12 ASCII digits. It checks two
// overlapping 8-byte words instead of 12 bytes because it runs on every
// lookup: a byte is a digit when its high nibble is 3 and stays 3 after
// adding 6 (0x39+6 = 0x3f, 0x3a+6 = 0x40). A carry out of a byte only
// happens for bytes >= 0xfa, whose high nibble already fails.
func isAccountID(s string) bool {
	if len(s) != accountIDLen {
		return false
	}
	return eightDigits(le64(s[:8])) && eightDigits(le64(s[4:12]))
}

func eightDigits(w uint64) bool {
	const hi, six, threes = 0xf0f0f0f0f0f0f0f0, 0x0606060606060606, 0x3333333333333333
	return (w&hi)|((w+six)&hi)>>4 == threes
}

// le64 loads 8 bytes; the compiler turns it into a single load.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// validRegion accepts the shape of every AWS region name: a 2-4 letter
// area, one to three words of two or more letters, and a number from 1 to
// 99 without a leading zero ("us-east-1", "us-gov-west-1",
// "eusc-de-east-1", "ap-southeast-10").
func validRegion(region string) bool {
	const maxRegionLen = 32
	if len(region) > maxRegionLen {
		return false
	}
	i, words := 0, 0
	for {
		start := i
		for i < len(region) && region[i]-'a' < 26 { // unsigned: one compare per letter
			i++
		}
		n := i - start
		if n == 0 {
			break // the number, or garbage the number check refuses
		}
		if n < 2 || (words == 0 && n > 4) || i == len(region) || region[i] != '-' {
			return false
		}
		words++
		i++
	}
	number := region[i:]
	switch {
	case words < 2 || words > 4:
		return false
	case len(number) == 1:
		return number[0]-'1' < 9
	case len(number) == 2:
		return number[0]-'1' < 9 && number[1]-'0' < 10
	}
	return false
}
