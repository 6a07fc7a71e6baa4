package credentialprovider

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/openshift/hypershift-ecr/pkg/ecrhost"
)

// matchGlob reports whether image matches pattern the way the kubelet
// matches matchImages entries and auth keys: the same number of DNS labels,
// each label matched by a filepath.Match glob ('*' never crosses a dot),
// equal ports (none matches none only), and the pattern's path a prefix of
// the image's path. Unlike the kubelet, hosts are compared without regard
// to case, as DNS does. A pattern or image that does not parse matches
// nothing.
func matchGlob(pattern, image string) bool {
	p, ok := parseGlob(pattern)
	if !ok {
		return false
	}
	t, ok := parseGlob(image)
	return ok && p.match(t)
}

// glob is a parsed pattern or image: parsed once, matched many times.
type glob struct {
	labels     []string
	port, path string
}

func parseGlob(s string) (glob, bool) {
	u, err := url.Parse("https://" + s)
	if err != nil || u.Host == "" {
		return glob{}, false
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	return glob{labels: strings.Split(strings.ToLower(host), "."), port: port, path: u.Path}, true
}

// match reports whether the image t matches the pattern g.
func (g glob) match(t glob) bool {
	if g.port != t.port || len(g.labels) != len(t.labels) || !strings.HasPrefix(t.path, g.path) {
		return false
	}
	for i, label := range g.labels {
		if ok, err := filepath.Match(label, t.labels[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// normalizeAuthKey turns an auth key into the form the kubelet's keyring
// matches: no scheme, and a "/v1/" or "/v2/" path prefix dropped, as
// docker config keys are sometimes written as registry API URLs.
func normalizeAuthKey(key string) string {
	key = trimScheme(key)
	host, path, found := strings.Cut(key, "/")
	if !found {
		return key
	}
	path = "/" + path
	if strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") {
		path = path[3:]
	}
	if path == "/" {
		return host
	}
	return host + path
}

func trimScheme(s string) string {
	for _, scheme := range []string{"https://", "http://"} {
		if len(s) >= len(scheme) && strings.EqualFold(s[:len(scheme)], scheme) {
			return s[len(scheme):]
		}
	}
	return s
}

// normalizeImage turns what a caller has (a host, host:port, URL or image
// reference) into what the kubelet sends a plugin: the repository without
// scheme, tag or digest, e.g. "123456789012.dkr.ecr.us-east-1.amazonaws.com/app".
// The host is lower-cased so that one registry has one cache key.
func normalizeImage(s string) string {
	s = trimScheme(s)
	if i := strings.IndexByte(s, '@'); i >= 0 {
		s = s[:i]
	}
	host, path, hasPath := strings.Cut(s, "/")
	if hasPath {
		// A colon after the last slash starts a tag; one in the host is a port.
		if i := strings.LastIndexByte(path, ':'); i >= 0 {
			path = path[:i]
		}
		path = strings.TrimRight(path, "/")
	}
	host = strings.ToLower(host)
	if path == "" {
		return host
	}
	return host + "/" + path
}

// registryOf returns the registry part of a normalized image, the
// kubelet's Registry cache key: everything before the first slash.
func registryOf(image string) string {
	host, _, _ := strings.Cut(image, "/")
	return host
}

// registryHost names the registry of a normalized image for
// registryauth.Credential.Registry: the ECR host without port when it is
// one, else the registry part as is.
func registryHost(image string) string {
	reg := registryOf(image)
	if r, ok := ecrhost.Parse(reg); ok {
		return r.Host
	}
	return reg
}
