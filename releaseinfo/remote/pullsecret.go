package remote

import (
	"net"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/openshift/hypershift-ecr/pkg/dockerconfig"
)

// pullSecretKeychain serves credentials from a dockerconfigjson pull secret
// the way HyperShift's keyring (the kubelet's BasicDockerKeyring behind
// dockercredentials.NewFromBytes) matches them:
//
//   - a key is a host, host:port or host/path; a path matches the repository
//     at a segment boundary ("quay.io/openshift" matches
//     quay.io/openshift/ocp-release, not quay.io/openshift-release-dev/...);
//   - a host may be a glob, "*" matching exactly one DNS label
//     ("*.dkr.ecr.us-east-1.amazonaws.com");
//   - a port must be the same on both sides;
//   - docker.io, index.docker.io and registry-1.docker.io are one registry.
//
// The most specific key wins: a literal host over a glob, then the longest
// path. No match, or an entry without a user name and password, is
// authn.Anonymous. Only "auths" is read (credHelpers and credsStore are
// ignored), as in HyperShift.
type pullSecretKeychain struct {
	cfg  *dockerconfig.Config
	keys []psKey
}

type psKey struct {
	written string // as in the pull secret, for Config.Lookup
	host    string // lower case, with port, docker hub canonicalised
	path    string // "" or a repository prefix without slashes around it
	glob    bool
}

func newPullSecretKeychain(pullSecret []byte) (*pullSecretKeychain, error) {
	cfg, err := dockerconfig.Parse(pullSecret)
	if err != nil {
		return nil, err // a *dockerconfig.ParseError: never holds secret material
	}
	kc := &pullSecretKeychain{cfg: cfg}
	for _, k := range cfg.Hosts() {
		norm := dockerconfig.NormalizeKey(k)
		host, p, _ := strings.Cut(norm, "/")
		if host == "" {
			continue
		}
		kc.keys = append(kc.keys, psKey{written: k, host: canonicalHost(host), path: strings.Trim(p, "/"), glob: strings.Contains(host, "*")})
	}
	return kc, nil
}

func canonicalHost(h string) string {
	h = strings.ToLower(h)
	switch h {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return h
}

// Resolve implements authn.Keychain.
func (kc *pullSecretKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	reg := res.RegistryStr()
	repo := strings.TrimPrefix(res.String(), reg)
	repo = strings.Trim(repo, "/")
	host := canonicalHost(reg)

	var best *psKey
	for i := range kc.keys {
		k := &kc.keys[i]
		if !hostMatches(k, host) || !pathMatches(k.path, repo) {
			continue
		}
		if best == nil || moreSpecific(k, best) {
			best = k
		}
	}
	if best == nil {
		return authn.Anonymous, nil
	}
	e, ok := kc.cfg.Lookup(best.written)
	if !ok || (e.Username == "" && e.Password == "") {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: e.Username, Password: e.Password}), nil
}

func moreSpecific(a, b *psKey) bool {
	if a.glob != b.glob {
		return !a.glob
	}
	if len(a.path) != len(b.path) {
		return len(a.path) > len(b.path)
	}
	return a.written < b.written // deterministic among equals
}

func hostMatches(k *psKey, host string) bool {
	if !k.glob {
		return k.host == host
	}
	kh, kp := splitPort(k.host)
	h, p := splitPort(host)
	if kp != p {
		return false
	}
	kl, hl := strings.Split(kh, "."), strings.Split(h, ".")
	if len(kl) != len(hl) {
		return false
	}
	for i := range kl {
		if ok, err := path.Match(kl[i], hl[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

func splitPort(hostport string) (string, string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return hostport, ""
}

func pathMatches(prefix, repo string) bool {
	return prefix == "" || repo == prefix || strings.HasPrefix(repo, prefix+"/")
}
