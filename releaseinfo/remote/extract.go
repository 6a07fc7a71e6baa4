package remote

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Paths of the release files inside the image's file system, as HyperShift's
// RegistryClientProvider names them.
const (
	ImageReferencesPath = "release-manifests/image-references"
	BootImagesPath      = "release-manifests/0000_50_installer_coreos-bootimages.yaml"
)

// releaseFiles is the order in which missing files are reported.
var releaseFiles = []string{ImageReferencesPath, BootImagesPath}

// extraction is the state of one lookup's layer scan.
type extraction struct {
	files    map[string][]byte // path -> content; a path is wanted until it has a value
	maxFile  int64
	maxScan  int64
	scanLeft int64 // decompressed bytes this lookup may still read
	layers   int   // layers opened
}

func newExtraction(maxFile, maxScan int64) *extraction {
	return &extraction{files: make(map[string][]byte, len(releaseFiles)), maxFile: maxFile, maxScan: maxScan, scanLeft: maxScan}
}

func (x *extraction) done() bool { return len(x.files) == len(releaseFiles) }

func (x *extraction) missing() []string {
	var out []string
	for _, f := range releaseFiles {
		if _, ok := x.files[f]; !ok {
			out = append(out, f)
		}
	}
	return out
}

// layerError is a failure inside one layer, before the reader adds the
// pullspec: the layer's digest and, for a limit, the file.
type layerError struct {
	digest v1.Hash
	file   string
	err    error
}

func (e *layerError) Error() string { return e.err.Error() }
func (e *layerError) Unwrap() error { return e.err }

// scan reads layers last to first, as a container runtime stacks them, so
// that a file in an upper layer wins over a stale copy below, and stops as
// soon as every release file is found: a release image carries its metadata in
// its last layer, and the layers below it (the OS and the
// cluster-version-operator binary, hundreds of MiB) are never requested.
func (x *extraction) scan(img v1.Image, layers []v1.Descriptor) error {
	for i := len(layers) - 1; i >= 0 && !x.done(); i-- {
		if err := x.scanLayer(img, layers[i].Digest); err != nil {
			var le *layerError
			if errors.As(err, &le) {
				return err
			}
			return &layerError{digest: layers[i].Digest, err: err}
		}
	}
	return nil
}

// scanLayer streams one layer through a decompressor and a tar reader,
// keeping only the wanted regular files. It returns as soon as the last
// wanted file is read: the deferred Close drops the rest of the blob on the
// floor (the connection is not reused, which is cheaper than draining it).
// A layer read to its end is digest-verified by go-containerregistry.
func (x *extraction) scanLayer(img v1.Image, digest v1.Hash) error {
	x.layers++
	l, err := img.LayerByDigest(digest)
	if err != nil {
		return err
	}
	rc, err := l.Uncompressed() // sniffs gzip, zstd or plain tar
	if err != nil {
		return err
	}
	defer rc.Close()
	br := &budgetReader{r: rc, left: &x.scanLeft, limit: x.maxScan}
	tr := tar.NewReader(br)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// Read what follows the tar trailer up to the end of the blob, so
			// that the digest of a layer we read whole is checked.
			_, err = io.Copy(io.Discard, br)
			return err
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg { // archive/tar reports old-style TypeRegA entries as TypeReg
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(hdr.Name, "./"), "/")
		if !wanted(name) {
			continue
		}
		if _, seen := x.files[name]; seen {
			continue // an upper copy (or an earlier one in this layer) wins, as in HyperShift
		}
		if hdr.Size > x.maxFile {
			return &layerError{digest: digest, file: name,
				err: fmt.Errorf("%w: %s declares %d bytes, more than %d", ErrLimitExceeded, name, hdr.Size, x.maxFile)}
		}
		data, err := io.ReadAll(tr) // tar stops at hdr.Size
		if err != nil {
			return err
		}
		x.files[name] = data
		if x.done() {
			return nil
		}
	}
}

func wanted(name string) bool { return name == ImageReferencesPath || name == BootImagesPath }

// budgetReader fails once a lookup has decompressed more than its budget.
type budgetReader struct {
	r     io.Reader
	left  *int64 // shared by the layers of one lookup
	limit int64  // for the message
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if *b.left <= 0 {
		// Out of budget: fine if the stream ends here, a limit error if not.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n == 0 {
			return 0, err
		}
		return 0, fmt.Errorf("%w: more than %d decompressed bytes scanned", ErrLimitExceeded, b.limit)
	}
	if int64(len(p)) > *b.left {
		p = p[:*b.left]
	}
	n, err := b.r.Read(p)
	*b.left -= int64(n)
	return n, err
}
