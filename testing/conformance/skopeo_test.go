//go:build conformance

package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// skopeoPolicy accepts any image: signature policy is not what is tested.
const skopeoPolicy = `{"default":[{"type":"insecureAcceptAnything"}]}`

// TestSkopeoWithAugmentedPullSecret proves that a real registry client takes
// what Augment produces as its auth file: skopeo pushes the fixture release
// (written as an OCI layout by go-containerregistry) to docker-registry with
// it, inspects it, and our reader reads what skopeo pushed. After a rotation
// the stale auth file is refused and a freshly augmented one works.
func TestSkopeoWithAugmentedPullSecret(t *testing.T) {
	skopeo.need(t)
	ctx := t.Context()
	reg := startRegistry(t)
	e := startECR(t, reg)
	kc := newKeychain(t, e)
	payload := buildPayload(t)
	// skopeo 1.9 reads only OCI media types from an OCI layout.
	image := ociImage(t, payload.Image)
	digest, err := image.Digest()
	harness.must(t, "digest of the OCI fixture", err)

	home := t.TempDir()
	policy := filepath.Join(home, "policy.json")
	harness.must(t, "write skopeo policy", os.WriteFile(policy, []byte(skopeoPolicy), 0o600))
	skopeoCmd := func(args ...string) []string {
		return append([]string{skopeo.path, "--policy", policy}, args...)
	}

	// The fixture as an OCI layout directory.
	ociDir := filepath.Join(home, "release-oci")
	lp, err := layout.Write(ociDir, empty.Index)
	harness.must(t, "write OCI layout (go-containerregistry layout)", err)
	harness.must(t, "add the fixture to the OCI layout", lp.AppendImage(image,
		layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "4.10"})))

	// A HyperShift pull secret with an unrelated entry, augmented in memory.
	pullSecret := []byte(`{"auths":{"quay.io":{"auth":"b3BlbnNoaWZ0LXJlbGVhc2UtZGV2K2NpOnNlY3JldA==","email":"ci@example.com"}}}`)
	writeAuthFile := func(step, file string) (string, []byte) {
		t.Helper()
		effective, err := kc.Augment(ctx, pullSecret, releaseTag)
		augment.must(t, step, err)
		path := filepath.Join(home, file)
		harness.must(t, "write auth file", os.WriteFile(path, effective, 0o600))
		return path, effective
	}
	authFile1, effective1 := writeAuthFile("augment the pull secret", "auth-1.json")
	var doc struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	augment.must(t, "decode the augmented pull secret", json.Unmarshal(effective1, &doc))
	augment.check(t, "augmented pull secret", doc.Auths["quay.io"] != nil && doc.Auths[registryHost] != nil,
		"entries %v, want quay.io kept and %s added", keys(doc.Auths), registryHost)

	res := runWithHosts(ctx, t, home, skopeoCmd("copy", "--retry-times", "0",
		"--dest-authfile", authFile1, "--dest-cert-dir", reg.ca.certDir,
		"oci:"+ociDir+":4.10", "docker://"+releaseTag)...)
	skopeo.with(dockerRegistry).must(t, "push the fixture release (skopeo copy oci: -> docker://) with the augmented auth file", res.failure())

	inspect := func(authFile string) runResult {
		return runWithHosts(ctx, t, home, skopeoCmd("inspect", "--retry-times", "0",
			"--authfile", authFile, "--cert-dir", reg.ca.certDir, "docker://"+releaseTag)...)
	}
	res = inspect(authFile1)
	skopeo.with(dockerRegistry).must(t, "inspect with the augmented auth file", res.failure())
	var info struct {
		Digest string
		Labels map[string]string
	}
	skopeo.must(t, "decode inspect output", json.Unmarshal(res.stdout, &info))
	skopeo.check(t, "inspect with the augmented auth file", info.Digest == digest.String(),
		"digest %s, want the fixture's %s: skopeo rewrote the manifest", info.Digest, digest)

	// Our reader reads what skopeo pushed, with the same pull secret.
	rel, err := newReader(t, reg, nil).LookupWithPullSecret(ctx, releaseTag, effective1)
	reader.with(dockerRegistry).must(t, "release lookup of what skopeo pushed", err)
	checkRelease(t, reader.with(dockerRegistry), "release lookup of what skopeo pushed", rel, payload, digest)

	// Rotation: a fresh token replaces the registry's password.
	kc.Forget(releaseTag)
	authFile2, effective2 := writeAuthFile("augment the pull secret after rotation", "auth-2.json")
	augment.check(t, "augment after rotation", !bytes.Equal(effective1, effective2), "same pull secret after a new token")

	res = inspect(authFile1)
	skopeo.with(dockerRegistry).check(t, "inspect with the stale auth file after rotation", res.err != nil,
		"succeeded with the previous token: the registry did not rotate")
	skopeo.with(dockerRegistry).check(t, "inspect with the stale auth file after rotation",
		bytes.Contains(bytes.ToLower(res.stderr), []byte("unauthorized")) || bytes.Contains(bytes.ToLower(res.stderr), []byte("authentication required")),
		"failed for another reason than authentication: %s", res.stderr)

	res = inspect(authFile2)
	skopeo.with(dockerRegistry).must(t, "inspect with the auth file augmented after rotation", res.failure())
}

// ociImage is img with OCI media types (manifest, config and layers), the
// same layers and configuration.
func ociImage(t *testing.T, img v1.Image) v1.Image {
	t.Helper()
	layers, err := img.Layers()
	harness.must(t, "layers of the fixture", err)
	cfg, err := img.ConfigFile()
	harness.must(t, "config of the fixture", err)
	adds := make([]mutate.Addendum, 0, len(layers))
	for _, l := range layers {
		adds = append(adds, mutate.Addendum{Layer: l, MediaType: types.OCILayer})
	}
	out, err := mutate.Append(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), adds...)
	harness.must(t, "convert the fixture to OCI media types", err)
	out, err = mutate.ConfigFile(out, cfg)
	harness.must(t, "convert the fixture to OCI media types", err)
	return out
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
