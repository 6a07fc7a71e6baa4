package remote_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/compression"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/fakeregistry"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

type entry struct {
	name string
	data []byte
	kind byte // tar.TypeReg when zero
}

func tarOf(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: e.kind}
		if e.kind == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if e.kind == tar.TypeSymlink {
			hdr.Size, hdr.Linkname = 0, "elsewhere"
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if hdr.Size > 0 {
			_, err := tw.Write(e.data)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

func layerOf(t testing.TB, comp compression.Compression, entries ...entry) v1.Layer {
	t.Helper()
	raw := tarOf(t, entries...)
	switch comp {
	case compression.None:
		return static.NewLayer(raw, types.OCIUncompressedLayer)
	case compression.ZStd:
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
			tarball.WithCompression(compression.ZStd), tarball.WithMediaType(types.OCILayerZStd))
		require.NoError(t, err)
		return l
	default:
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil })
		require.NoError(t, err)
		return l
	}
}

func TestLookupLayerFormats(t *testing.T) {
	t.Parallel()
	refs := releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10)
	boot := releasepayload.BootImagesYAML(releasepayload.Fixture4_10)
	good := []entry{{name: remote.BootImagesPath, data: boot}, {name: remote.ImageReferencesPath, data: refs}}
	tests := []struct {
		name    string
		layers  func(t testing.TB) []v1.Layer
		wantErr error
		check   func(t *testing.T, rel *remote.Release)
	}{
		{
			name:   "When the layer is zstd-compressed, it should read it",
			layers: func(t testing.TB) []v1.Layer { return []v1.Layer{layerOf(t, compression.ZStd, good...)} },
		},
		{
			name:   "When the layer is an uncompressed tar, it should read it",
			layers: func(t testing.TB) []v1.Layer { return []v1.Layer{layerOf(t, compression.None, good...)} },
		},
		{
			name: "When tar names start with ./, it should still find the files",
			layers: func(t testing.TB) []v1.Layer {
				return []v1.Layer{layerOf(t, compression.GZip, entry{name: "./" + remote.BootImagesPath, data: boot}, entry{name: "./" + remote.ImageReferencesPath, data: refs})}
			},
		},
		{
			name: "When an upper layer has a symbolic link in place of a file, it should skip it as HyperShift does",
			layers: func(t testing.TB) []v1.Layer {
				return []v1.Layer{
					layerOf(t, compression.GZip, good...),
					layerOf(t, compression.GZip, entry{name: remote.ImageReferencesPath, kind: tar.TypeSymlink}),
				}
			},
			check: func(t *testing.T, rel *remote.Release) { require.Equal(t, 2, rel.Stats.LayersRead) },
		},
		{
			name: "When the boot images file is not a ConfigMap, it should fail with ErrInvalidReleaseMetadata naming it",
			layers: func(t testing.TB) []v1.Layer {
				return []v1.Layer{layerOf(t, compression.GZip, entry{name: remote.BootImagesPath, data: []byte("data: [")}, entry{name: remote.ImageReferencesPath, data: refs})}
			},
			wantErr: remote.ErrInvalidReleaseMetadata,
		},
		{
			name: "When image-references is not an ImageStream, it should fail with ErrInvalidReleaseMetadata",
			layers: func(t testing.TB) []v1.Layer {
				return []v1.Layer{layerOf(t, compression.GZip, entry{name: remote.BootImagesPath, data: boot}, entry{name: remote.ImageReferencesPath, data: []byte("<html>")})}
			},
			wantErr: remote.ErrInvalidReleaseMetadata,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img, err := mutate.AppendLayers(empty.Image, tc.layers(t)...)
			require.NoError(t, err)
			reg := fakeregistry.New(t)
			pinned := reg.Push(t, releaseTag, img)
			rel, err := newReader(t, reg).Lookup(t.Context(), releaseTag)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				var rerr *remote.Error
				require.ErrorAs(t, err, &rerr)
				require.NotEmpty(t, rerr.File)
				require.Equal(t, pinned, rerr.Pullspec)
				return
			}
			require.NoError(t, err)
			require.Equal(t, pinned, rel.Pullspec)
			require.Equal(t, releasepayload.ImageReferences(releasepayload.Fixture4_10), rel.ImageStream)
			require.Equal(t, "rhcos-4.10", rel.StreamMetadata.Stream)
			if tc.check != nil {
				tc.check(t, rel)
			}
		})
	}
}

func TestLookupConcurrent(t *testing.T) {
	t.Parallel()
	t.Run("When lookups share a Reader, it should count each lookup's own requests", testLookupConcurrent)
}

func testLookupConcurrent(t *testing.T) {
	reg := fakeregistry.New(t)
	push(t, reg, releaseTag, build(t, releasepayload.WithArchitectures("amd64", "arm64")))
	r := newReader(t, reg)
	reg.Reset()

	const n = 8
	var wg sync.WaitGroup
	stats := make([]remote.ReadStats, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			rel, err := r.Lookup(t.Context(), releaseTag)
			errs[i] = err
			if err == nil {
				stats[i] = rel.Stats
			}
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		// ping, list, image manifest, blob redirect, S3 GET.
		require.Equal(t, 5, stats[i].RoundTrips)
		require.Equal(t, 1, stats[i].LayersRead)
	}
	require.Len(t, reg.Requests(), 5*n)
}

func TestLookupCancelled(t *testing.T) {
	t.Parallel()
	t.Run("When the context is already cancelled, it should fail with context.Canceled", func(t *testing.T) {
		reg := fakeregistry.New(t)
		push(t, reg, releaseTag, build(t))
		r := newReader(t, reg)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := r.Lookup(ctx, releaseTag)
		require.ErrorIs(t, err, context.Canceled)
	})
}
