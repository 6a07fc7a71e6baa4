// Package releasepayload builds synthetic OpenShift release images for tests, around real
// release metadata embedded from HyperShift's fixtures (see testdata/README.md).
//
// A release reader opens a release image's layers last layer first and stops once it has found
// release-manifests/image-references (an image.openshift.io/v1 ImageStream with one tag per
// component) and release-manifests/0000_50_installer_coreos-bootimages.yaml (a ConfigMap with
// the CoreOS stream). Build produces images with those two files at ImageReferencesPath and
// BootImagesPath, plus what a real payload has around them: filler base layers of chosen sizes,
// and a layer of other manifests with release-manifests/release-metadata.
//
// By default Build returns a single linux/amd64 image (Docker schema 2 media types) with the
// 4.10 image-references and boot images, three filler layers of 256, 128 and 64 KiB and the
// metadata in the last layer. Options choose the fixtures (WithImageReferences: 4.8 or 4.10;
// WithBootImages: 4.10 or 5.0), the version (WithVersion), a manifest list of several
// architectures (WithArchitectures), filler sizes (WithBaseLayers), where the metadata sits
// (WithLayout: last, not last, split over two layers, or shadowing stale copies), missing files
// (WithoutImageReferences, WithoutBootImages) and the component pullspecs (WithPullspecRewrite,
// WithComponents, which also builds a tiny image per component for mirror preflight tests).
//
// Builds are deterministic: fixed timestamps, owners and modes, sorted tar entries, and filler
// bytes from a ChaCha8 stream seeded by architecture, index and size. The same options give the
// same digests, which tests may rely on within one Go release (the compressed manifest layers
// depend on compress/flate, which Go may change).
//
// The embedded fixtures are also available directly (ImageReferences, ImageReferencesJSON,
// BootImagesYAML), to compare with what a reader returns. Payload carries the exact bytes
// placed in the image.
package releasepayload
