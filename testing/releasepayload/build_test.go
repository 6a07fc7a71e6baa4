package releasepayload_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	imagev1 "github.com/openshift/api/image/v1"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// layerFiles returns, per layer in manifest order, the regular files it holds.
func layerFiles(t *testing.T, img v1.Image) []map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	require.NoError(t, err)
	out := make([]map[string][]byte, 0, len(layers))
	for _, l := range layers {
		rc, err := l.Uncompressed()
		require.NoError(t, err)
		files := map[string][]byte{}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if h.Typeflag == tar.TypeReg {
				b, err := io.ReadAll(tr)
				require.NoError(t, err)
				files[h.Name] = b
			}
		}
		require.NoError(t, rc.Close())
		out = append(out, files)
	}
	return out
}

// readLikeAReader scans layers last first and stops when both files are found, as the release
// reader under test will; it returns the files and the index of the last layer it opened.
func readLikeAReader(t *testing.T, img v1.Image) (refs, boot []byte, stoppedAt int) {
	t.Helper()
	layers := layerFiles(t, img)
	for i := len(layers) - 1; i >= 0; i-- {
		if b, ok := layers[i][releasepayload.ImageReferencesPath]; ok && refs == nil {
			refs = b
		}
		if b, ok := layers[i][releasepayload.BootImagesPath]; ok && boot == nil {
			boot = b
		}
		if refs != nil && boot != nil {
			return refs, boot, i
		}
	}
	return refs, boot, -1
}

func TestBuild(t *testing.T) {
	t.Parallel()
	small := releasepayload.WithBaseLayers(4096, 2048)
	tests := []struct {
		name          string
		opts          []releasepayload.Option
		wantLayers    int
		wantStoppedAt int // layer index where a last-first reader has both files; -1: never
		wantRefs      []byte
		wantBoot      []byte
	}{
		{
			name:          "When built with defaults, it should hold the 4.10 fixtures verbatim in the last layer",
			opts:          nil,
			wantLayers:    5,
			wantStoppedAt: 4,
			wantRefs:      releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10),
			wantBoot:      releasepayload.BootImagesYAML(releasepayload.Fixture4_10),
		},
		{
			name:          "When 4.8 image references and 5.0 boot images are chosen, it should embed those fixtures",
			opts:          []releasepayload.Option{small, releasepayload.WithImageReferences(releasepayload.Fixture4_8), releasepayload.WithBootImages(releasepayload.Fixture5_0)},
			wantLayers:    4,
			wantStoppedAt: 3,
			wantRefs:      releasepayload.ImageReferencesJSON(releasepayload.Fixture4_8),
			wantBoot:      releasepayload.BootImagesYAML(releasepayload.Fixture5_0),
		},
		{
			name:          "When the metadata layer is not last, it should be found one layer below the top",
			opts:          []releasepayload.Option{small, releasepayload.WithLayout(releasepayload.LayoutNotLast)},
			wantLayers:    4,
			wantStoppedAt: 2,
			wantRefs:      releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10),
			wantBoot:      releasepayload.BootImagesYAML(releasepayload.Fixture4_10),
		},
		{
			name:          "When the files are split, it should take a reader past the other manifests to the boot images",
			opts:          []releasepayload.Option{small, releasepayload.WithLayout(releasepayload.LayoutSplit)},
			wantLayers:    5,
			wantStoppedAt: 2,
			wantRefs:      releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10),
			wantBoot:      releasepayload.BootImagesYAML(releasepayload.Fixture4_10),
		},
		{
			name:          "When stale copies are shadowed, it should give a last-first reader the current files",
			opts:          []releasepayload.Option{small, releasepayload.WithLayout(releasepayload.LayoutShadowed)},
			wantLayers:    5,
			wantStoppedAt: 4,
			wantRefs:      releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10),
			wantBoot:      releasepayload.BootImagesYAML(releasepayload.Fixture4_10),
		},
		{
			name:          "When boot images are omitted, it should never let a reader find both files",
			opts:          []releasepayload.Option{releasepayload.WithBaseLayers(), releasepayload.WithoutBootImages()},
			wantLayers:    2,
			wantStoppedAt: -1,
			wantRefs:      releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10),
		},
		{
			name:          "When both files are omitted, it should hold only the other manifests",
			opts:          []releasepayload.Option{releasepayload.WithBaseLayers(), releasepayload.WithoutBootImages(), releasepayload.WithoutImageReferences()},
			wantLayers:    1,
			wantStoppedAt: -1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := releasepayload.Build(tc.opts...)
			require.NoError(t, err)
			require.Nil(t, p.Index)
			require.Equal(t, tc.wantRefs, p.ImageReferences)
			require.Equal(t, tc.wantBoot, p.BootImages)

			layers, err := p.Image.Layers()
			require.NoError(t, err)
			require.Len(t, layers, tc.wantLayers)
			refs, boot, stoppedAt := readLikeAReader(t, p.Image)
			require.Equal(t, tc.wantStoppedAt, stoppedAt)
			if tc.wantStoppedAt >= 0 {
				require.Equal(t, tc.wantRefs, refs)
				require.Equal(t, tc.wantBoot, boot)
			}

			m, err := p.Image.Manifest()
			require.NoError(t, err)
			require.Equal(t, types.DockerManifestSchema2, m.MediaType)
		})
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []releasepayload.Option
	}{
		{name: "When a single-arch payload is built twice, it should have the same digests"},
		{name: "When a multi-arch payload is built twice, it should have the same digests",
			opts: []releasepayload.Option{releasepayload.WithArchitectures("amd64", "arm64"), releasepayload.WithVersion("4.10.3")}},
		{name: "When a payload with components is built twice, it should have the same digests",
			opts: []releasepayload.Option{releasepayload.WithComponents("quay.io/openshift-release-dev/ocp-v4.0-art-dev"), releasepayload.WithLayout(releasepayload.LayoutShadowed)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			digests := func() []string {
				p, err := releasepayload.Build(tc.opts...)
				require.NoError(t, err)
				var out []string
				if p.Index != nil {
					d, err := p.Index.Digest()
					require.NoError(t, err)
					out = append(out, d.String())
				}
				d, err := p.Image.Digest()
				require.NoError(t, err)
				out = append(out, d.String())
				layers, err := p.Image.Layers()
				require.NoError(t, err)
				for _, l := range layers {
					d, err := l.Digest()
					require.NoError(t, err)
					out = append(out, d.String())
				}
				return out
			}
			require.Equal(t, digests(), digests())
		})
	}
}

func TestBuildOptions(t *testing.T) {
	t.Parallel()

	t.Run("When two architectures are requested, it should return a Docker manifest list whose images differ only below the metadata", func(t *testing.T) {
		t.Parallel()
		p, err := releasepayload.Build(releasepayload.WithArchitectures("amd64", "arm64"))
		require.NoError(t, err)
		require.NotNil(t, p.Index)
		im, err := p.Index.IndexManifest()
		require.NoError(t, err)
		require.Equal(t, types.DockerManifestList, im.MediaType)
		require.Len(t, im.Manifests, 2)
		var tops []v1.Hash
		for i, arch := range []string{"amd64", "arm64"} {
			require.Equal(t, arch, im.Manifests[i].Platform.Architecture)
			img, err := p.Index.Image(im.Manifests[i].Digest)
			require.NoError(t, err)
			cfg, err := img.ConfigFile()
			require.NoError(t, err)
			require.Equal(t, arch, cfg.Architecture)
			layers, err := img.Layers()
			require.NoError(t, err)
			base, err := layers[0].Digest()
			require.NoError(t, err)
			top, err := layers[len(layers)-1].Digest()
			require.NoError(t, err)
			tops = append(tops, top)
			if i == 1 {
				first, _ := p.Image.Layers()
				firstBase, _ := first[0].Digest()
				require.NotEqual(t, firstBase, base, "filler must be per architecture")
			}
		}
		require.Equal(t, tops[0], tops[1])
	})

	t.Run("When a version is set, it should name the ImageStream and label the image", func(t *testing.T) {
		t.Parallel()
		p, err := releasepayload.Build(releasepayload.WithVersion("4.10.3"), releasepayload.WithBaseLayers())
		require.NoError(t, err)
		var is imagev1.ImageStream
		require.NoError(t, json.Unmarshal(p.ImageReferences, &is))
		require.Equal(t, "4.10.3", is.Name)
		require.Equal(t, "4.10.3", p.ImageStream.Name)
		require.Len(t, is.Spec.Tags, len(releasepayload.ImageReferences(releasepayload.Fixture4_10).Spec.Tags))
		cfg, err := p.Image.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, "4.10.3", cfg.Config.Labels["io.openshift.release"])
	})

	t.Run("When pullspecs are rewritten, it should point every component at the mirror", func(t *testing.T) {
		t.Parallel()
		const mirror = "123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift-release-dev/ocp-v4.0-art-dev"
		p, err := releasepayload.Build(releasepayload.WithBaseLayers(), releasepayload.WithPullspecRewrite(func(_, pullspec string) string {
			return strings.Replace(pullspec, "quay.io/openshift-release-dev/ocp-v4.0-art-dev", mirror, 1)
		}))
		require.NoError(t, err)
		for _, tag := range p.ImageStream.Spec.Tags {
			require.True(t, strings.HasPrefix(tag.From.Name, mirror+"@sha256:"), tag.From.Name)
		}
	})

	t.Run("When components are requested, it should build one image per tag whose digest the tag references", func(t *testing.T) {
		t.Parallel()
		const repo = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
		p, err := releasepayload.Build(releasepayload.WithBaseLayers(), releasepayload.WithComponents(repo))
		require.NoError(t, err)
		require.Len(t, p.Components, len(p.ImageStream.Spec.Tags))
		seen := map[v1.Hash]bool{}
		for _, tag := range p.ImageStream.Spec.Tags {
			d, err := p.Components[tag.Name].Digest()
			require.NoError(t, err)
			require.Equal(t, repo+"@"+d.String(), tag.From.Name)
			require.False(t, seen[d], "component digests must differ")
			seen[d] = true
		}
	})

	t.Run("When filler sizes are given, it should produce layers of about that size", func(t *testing.T) {
		t.Parallel()
		p, err := releasepayload.Build(releasepayload.WithBaseLayers(1<<20, 0))
		require.NoError(t, err)
		layers, err := p.Image.Layers()
		require.NoError(t, err)
		size, err := layers[0].Size()
		require.NoError(t, err)
		require.InDelta(t, 1<<20, size, 8<<10)
		files := layerFiles(t, p.Image)
		require.Len(t, files[1]["usr/share/releasepayload/base-1.bin"], 0)
	})

	for _, bad := range []struct {
		name string
		opt  releasepayload.Option
	}{
		{"When image references of a release without that fixture are asked for, it should fail", releasepayload.WithImageReferences(releasepayload.Fixture5_0)},
		{"When boot images of a release without that fixture are asked for, it should fail", releasepayload.WithBootImages(releasepayload.Fixture4_8)},
		{"When an unknown architecture is asked for, it should fail", releasepayload.WithArchitectures("amd64", "mips")},
		{"When an architecture is repeated, it should fail", releasepayload.WithArchitectures("arm64", "arm64")},
		{"When a layer size is negative, it should fail", releasepayload.WithBaseLayers(-1)},
	} {
		t.Run(bad.name, func(t *testing.T) {
			t.Parallel()
			_, err := releasepayload.Build(bad.opt)
			require.Error(t, err)
		})
	}
}

func TestFixtures(t *testing.T) {
	t.Parallel()
	t.Run("When the fixtures are decoded, it should give the known component counts", func(t *testing.T) {
		require.Len(t, releasepayload.ImageReferences(releasepayload.Fixture4_10).Spec.Tags, 146)
		require.Len(t, releasepayload.ImageReferences(releasepayload.Fixture4_8).Spec.Tags, 140)
	})
	t.Run("When a caller modifies returned bytes, it should not change the fixture", func(t *testing.T) {
		b := releasepayload.BootImagesYAML(releasepayload.Fixture5_0)
		b[0] = 'X'
		require.True(t, bytes.HasPrefix(releasepayload.BootImagesYAML(releasepayload.Fixture5_0), []byte("apiVersion")))
	})
	t.Run("When a fixture does not exist, it should panic", func(t *testing.T) {
		require.Panics(t, func() { releasepayload.ImageReferences(releasepayload.Fixture5_0) })
	})
}
