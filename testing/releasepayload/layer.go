package releasepayload

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is the fixed time stamped on every file, history entry and config, so that builds are
// reproducible. It is the creation time of the 4.10 fixture's ImageStream.
var epoch = time.Date(2021, 11, 14, 18, 51, 28, 0, time.UTC)

type file struct {
	name string
	data []byte
}

// memLayer is a gzip-compressed tar layer held in memory with its digests computed once.
// (tarball.LayerFromOpener would compress again on every read.)
type memLayer struct {
	compressed []byte
	digest     v1.Hash
	diffID     v1.Hash
}

var _ v1.Layer = (*memLayer)(nil)

// compressors hands out one reusable gzip writer per level: a flate compressor allocates about
// 1 MB, which dominated building ~150 tiny component layers. Not safe for concurrent use; each
// Build or Components call has its own.
type compressors map[int]*gzip.Writer

func (c compressors) get(level int, w io.Writer) (*gzip.Writer, error) {
	if zw, ok := c[level]; ok {
		zw.Reset(w)
		return zw, nil
	}
	zw, err := gzip.NewWriterLevel(w, level)
	if err != nil {
		return nil, err
	}
	c[level] = zw
	return zw, nil
}

// newLayer builds a layer holding files, with the parent directories they need. level is a
// compress/gzip level: NoCompression for incompressible filler, BestSpeed for the rest (cheap, also under -race).
// The output depends only on the input (fixed times, owners, modes, sorted names), and on the
// Go release's compress/flate for compressed levels.
func (c compressors) newLayer(files []file, level int) (*memLayer, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	dirs := map[string]bool{}
	for _, f := range files {
		var parents []string
		for d := path.Dir(f.name); d != "." && d != "/" && !dirs[d]; d = path.Dir(d) {
			parents = append(parents, d)
			dirs[d] = true
		}
		for i := len(parents) - 1; i >= 0; i-- {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: parents[i] + "/",
				Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Size: int64(len(f.data)),
			Mode: 0o644, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}

	var gzBuf bytes.Buffer
	zw, err := c.get(level, &gzBuf)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tarBuf.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	l := &memLayer{compressed: gzBuf.Bytes()}
	if l.digest, _, err = v1.SHA256(bytes.NewReader(l.compressed)); err != nil {
		return nil, err
	}
	if l.diffID, _, err = v1.SHA256(bytes.NewReader(tarBuf.Bytes())); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *memLayer) Digest() (v1.Hash, error) { return l.digest, nil }
func (l *memLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }
func (l *memLayer) Size() (int64, error)     { return int64(len(l.compressed)), nil }
func (l *memLayer) MediaType() (types.MediaType, error) {
	return types.DockerLayer, nil
}
func (l *memLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l.compressed)), nil
}
func (l *memLayer) Uncompressed() (io.ReadCloser, error) {
	return gzip.NewReader(bytes.NewReader(l.compressed))
}

// pseudoRandom returns size deterministic, incompressible bytes derived from seed, so that
// filler layers have realistic sizes on the wire and stable digests.
func pseudoRandom(seed string, size int64) []byte {
	key := sha256.Sum256([]byte("releasepayload filler\x00" + seed + "\x00" + string(binary.BigEndian.AppendUint64(nil, uint64(size)))))
	b := make([]byte, size)
	_, _ = rand.NewChaCha8(key).Read(b) // never fails
	return b
}
