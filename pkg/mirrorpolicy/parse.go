package mirrorpolicy

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// imageRef is an image reference normalised the way a node pulls it.
// full is "name:tag" or "name@digest" (never both); full[:nameLen] is the
// repository name and full[:hostLen] its registry host[:port].
type imageRef struct {
	full     string
	nameLen  int
	hostLen  int
	digested bool
}

func (r imageRef) name() string { return r.full[:r.nameLen] }
func (r imageRef) host() string { return r.full[:r.hostLen] }

// parseImage normalises s like reference.ParseDockerRef (what CRI-O does
// since cri-o/cri-o#3060): familiar names get docker.io[/library], a bare
// name gets ":latest", and "name:tag@digest" drops the tag.
//
// distribution/reference is regexp based and costs ~7 µs a call, most of
// the Candidates budget, so canonical pullspecs on an explicit registry
// are recognised by parseFast; everything else (familiar and docker.io
// names, upper case hosts, IPv6, other digest algorithms, errors) goes to
// reference.ParseDockerRef, the authority. FuzzParseImage checks that
// parseFast never disagrees with it.
func parseImage(s string) (imageRef, error) {
	if r, ok := parseFast(s); ok {
		return r, nil
	}
	named, err := reference.ParseDockerRef(s)
	if err != nil {
		return imageRef{}, err
	}
	_, digested := named.(reference.Canonical)
	return imageRef{
		full:     named.String(),
		nameLen:  len(named.Name()),
		hostLen:  len(reference.Domain(named)),
		digested: digested,
	}, nil
}

// parseFast accepts a strict subset of the reference grammar: a lower
// case host[:port] containing '.' or ':' (or "localhost"), other than the
// Docker Hub names that need normalising; lower case path components; an
// optional tag; an optional sha256 digest. ok=false means "ask
// distribution/reference", never "invalid".
func parseFast(s string) (r imageRef, ok bool) {
	slash := strings.IndexByte(s, '/')
	if slash <= 0 {
		return r, false
	}
	host := s[:slash]
	if !fastHost(host) {
		return r, false
	}
	n := len(s)
	j := slash + 1
	for {
		if j >= n || !isAlnum(s[j]) {
			return r, false
		}
		for j < n && isAlnum(s[j]) {
			j++
		}
		for j < n {
			k := j
			switch s[j] {
			case '.':
				k++
			case '_':
				k++
				if k < n && s[k] == '_' {
					k++
				}
			case '-':
				for k < n && s[k] == '-' {
					k++
				}
			}
			if k == j {
				break // not a separator: end of this path component
			}
			if k >= n || !isAlnum(s[k]) {
				return r, false
			}
			for j = k; j < n && isAlnum(s[j]); j++ {
			}
		}
		if j < n && s[j] == '/' {
			j++
			continue
		}
		break
	}
	nameLen := j
	if nameLen-slash-1 > reference.RepositoryNameTotalLengthMax {
		return r, false
	}
	tagged := false
	if j < n && s[j] == ':' {
		start := j + 1
		j = start
		if j >= n || !isWord(s[j]) {
			return r, false
		}
		for j < n && (isWord(s[j]) || s[j] == '.' || s[j] == '-') {
			j++
		}
		if j-start > 128 {
			return r, false
		}
		tagged = true
	}
	digested := false
	digestAt := j
	if j < n && s[j] == '@' {
		d := s[j+1:]
		if len(d) != len("sha256:")+64 || !strings.HasPrefix(d, "sha256:") {
			return r, false
		}
		for i := len("sha256:"); i < len(d); i++ {
			if c := d[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return r, false
			}
		}
		j = n
		digested = true
	}
	if j != n {
		return r, false
	}
	full := s
	switch {
	case digested && tagged:
		full = s[:nameLen] + s[digestAt:]
	case !digested && !tagged:
		full = s + ":latest"
	}
	return imageRef{full: full, nameLen: nameLen, hostLen: slash, digested: digested}, true
}

// fastHost reports whether h is a lower case DNS-style host with an
// optional port that ParseNormalizedNamed would keep as the domain
// unchanged.
func fastHost(h string) bool {
	if h == "docker.io" || h == "index.docker.io" {
		return false // normalised (library/, index.docker.io) by the slow path
	}
	hostPart, port, hasPort := strings.Cut(h, ":")
	if hasPort {
		if port == "" {
			return false
		}
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return false
			}
		}
	} else if hostPart != "localhost" && strings.IndexByte(hostPart, '.') < 0 {
		return false // a namespace on Docker Hub, not a host
	}
	return validDomainName(hostPart, false)
}

// validDomainName checks dot-separated labels of [a-z0-9] (and A-Z when
// upper is set) with inner '-', as in reference's domainNameComponent.
func validDomainName(h string, upper bool) bool {
	if h == "" {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(isAlnum(c) || c == '-' || upper && c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isWord(c byte) bool  { return isAlnum(c) || c >= 'A' && c <= 'Z' || c == '_' }

// checkLocation validates an exact source or a mirror:
// host[:port][/namespace...][/repo] with no tag, digest, scheme or
// wildcard, in the canonical form reference.ParseNamed accepts (what a
// node needs to parse the rewritten pullspec). It returns a reason, or "".
func checkLocation(s string) string {
	switch {
	case s == "":
		return "is empty"
	case strings.Contains(s, "://"):
		return "must not have a URL scheme"
	case strings.Contains(s, "*"):
		return "may use a wildcard only as a leading \"*.\" of a source host"
	case strings.Contains(s, "@"):
		return "must not contain a digest"
	case strings.HasSuffix(s, "/"):
		return "must not end with \"/\""
	}
	if i := strings.LastIndexByte(s, '/'); i > 0 && strings.IndexByte(s[i+1:], ':') >= 0 {
		return "must not contain a tag"
	}
	// Probe with two extra path components so that a bare host ("quay.io",
	// "docker.io") is checked as a registry, not as a familiar name.
	probe := s + "/x/y"
	named, err := reference.ParseNamed(probe)
	if err != nil {
		if err == reference.ErrNameNotCanonical {
			return fmt.Sprintf("is not a canonical repository prefix: %q does not start with a registry host (one with a \".\", a \":port\" or \"localhost\"), or is normalised to a different name", s)
		}
		return fmt.Sprintf("is not a valid host[:port][/namespace...] (%v)", err)
	}
	if !strings.HasPrefix(named.Name(), reference.Domain(named)+"/") {
		return "has no registry host"
	}
	return ""
}

// checkWildcard validates a "*.example.com" source: a leading "*." then a
// domain name with no port, path, or further wildcard
// (runtime-utils IsValidRegistriesConfScope, the IDMS source pattern).
func checkWildcard(s string) string {
	if !strings.HasPrefix(s, "*.") {
		return "may use a wildcard only as a leading \"*.\" of a source host"
	}
	rest := s[2:]
	if strings.ContainsAny(rest, "/@:*") {
		return "is a wildcard source and must be \"*.\" followed by a domain, without port, path, tag or digest"
	}
	if !validDomainName(rest, true) {
		return "is a wildcard source whose domain is not a valid host name"
	}
	return ""
}

// hostOf returns the host[:port] part of a location.
func hostOf(loc string) string {
	if i := strings.IndexByte(loc, '/'); i >= 0 {
		return loc[:i]
	}
	return loc
}

// stripPort returns host without a trailing ":port" (IPv6 brackets kept).
func stripPort(hostport string) string {
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && strings.IndexByte(hostport[i:], ']') < 0 {
		return hostport[:i]
	}
	return hostport
}
