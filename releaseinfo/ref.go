package releaseinfo

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
)

// repository returns ref without its tag or digest. ref is a normalised
// pullspec as mirrorpolicy produces them.
func repository(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref
}

// digestOf returns the digest of a digest reference, "" for a tag reference.
func digestOf(ref string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		return ref[i+1:]
	}
	return ""
}

// pin returns the digest-pinned form of ref given the digest a prober
// reported. A digest reference stays as it is (a different reported digest
// is an error: the registry served something else); a tag reference becomes
// <repository>@<digest>.
func pin(ref, digest string) (string, error) {
	if want := digestOf(ref); want != "" {
		if digest != "" && digest != want {
			return "", fmt.Errorf("registry reported digest %s for %s", digest, ref)
		}
		return ref, nil
	}
	if !validDigest(digest) {
		return "", fmt.Errorf("prober reported no valid digest for tag reference %s (got %q)", ref, digest)
	}
	return repository(ref) + "@" + digest, nil
}

// validDigest accepts the digests registries use: sha256, sha384 and sha512
// in lower-case hex.
func validDigest(d string) bool {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok {
		return false
	}
	var n int
	switch alg {
	case "sha256":
		n = 64
	case "sha384":
		n = 96
	case "sha512":
		n = 128
	default:
		return false
	}
	if len(hex) != n {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// sourceHost returns the registry host of image ("docker.io" for a Docker
// Hub short name), or "" when it does not parse.
func sourceHost(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return ""
	}
	return reference.Domain(named)
}

// sourceRepository returns the normalised repository of image.
func sourceRepository(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return repository(image)
	}
	return named.Name()
}
