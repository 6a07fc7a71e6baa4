package releasepayload

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	imagev1 "github.com/openshift/api/image/v1"
)

// Layout says where the release metadata files sit among the image's layers. Readers scan the
// last layer first and stop once both files are found, so each layout exercises a different path.
type Layout int

const (
	// LayoutLast: base layers, other manifests, then one layer with both files. Like real
	// release images, and the cheapest case for a last-layer-first reader.
	LayoutLast Layout = iota
	// LayoutNotLast: base layers, one layer with both files, then the other manifests: a reader
	// must look past the last layer.
	LayoutNotLast
	// LayoutSplit: base layers, boot images, other manifests, then image-references: a reader
	// must keep going after finding one file.
	LayoutSplit
	// LayoutShadowed: base layers, stale copies of both files, other manifests, then the current
	// files. A reader that scans first layer first returns the stale copies.
	LayoutShadowed
)

// defaultBaseLayers are the sizes of the filler layers when WithBaseLayers is not given: small,
// so that tests under -race stay fast.
var defaultBaseLayers = []int64{256 << 10, 128 << 10, 64 << 10}

// Payload is a synthetic release image and what it contains. Its fields are for reading;
// Build returns a new Payload each time.
type Payload struct {
	// Index is the manifest list (Docker media type) when more than one architecture was
	// requested, otherwise nil.
	Index v1.ImageIndex
	// Image is the release image when one architecture was requested, otherwise the image of
	// the first architecture in Index.
	Image v1.Image
	// ImageStream is the content of ImageReferencesPath, decoded; nil with WithoutImageReferences.
	ImageStream *imagev1.ImageStream
	// ImageReferences is the exact content of ImageReferencesPath: the fixture byte for byte
	// unless WithVersion, WithPullspecRewrite or WithComponents changed it. Nil when omitted.
	ImageReferences []byte
	// BootImages is the exact content of BootImagesPath (the fixture byte for byte); nil when omitted.
	BootImages []byte
	// Components holds, with WithComponents, one small image per image-references tag, keyed by
	// tag name; each tag's from.name is "<repository>@<digest of that image>".
	Components map[string]v1.Image
}

type config struct {
	imageRefs, bootImages Fixture
	version               string
	archs                 []string
	baseLayers            []int64
	layout                Layout
	omitRefs, omitBoot    bool
	rewrite               func(tag, pullspec string) string
	componentRepo         string
}

// Option configures Build. Options are applied in order and validated together.
type Option func(*config) error

// WithImageReferences selects the image-references fixture: Fixture4_8 or Fixture4_10 (the default).
func WithImageReferences(f Fixture) Option {
	return func(c *config) error {
		if _, err := imageReferencesFile(f); err != nil {
			return err
		}
		c.imageRefs = f
		return nil
	}
}

// WithBootImages selects the boot images fixture: Fixture4_10 (the default) or Fixture5_0.
func WithBootImages(f Fixture) Option {
	return func(c *config) error {
		if _, err := bootImagesFile(f); err != nil {
			return err
		}
		c.bootImages = f
		return nil
	}
}

// WithVersion sets the release version: the ImageStream's metadata.name, the image label
// io.openshift.release and release-manifests/release-metadata. The default is the fixture's
// metadata.name (for example "4.10.0-0.nightly-2021-11-14-184249").
func WithVersion(version string) Option {
	return func(c *config) error {
		if version == "" {
			return fmt.Errorf("releasepayload: empty version")
		}
		c.version = version
		return nil
	}
}

// WithArchitectures sets the architectures (GOARCH names: amd64, arm64, ppc64le, s390x). One
// architecture gives a single image; more give a manifest list with one image per architecture,
// which differ in their base layers. The default is amd64.
func WithArchitectures(archs ...string) Option {
	return func(c *config) error {
		if len(archs) == 0 {
			return fmt.Errorf("releasepayload: no architectures")
		}
		for i, a := range archs {
			switch a {
			case "amd64", "arm64", "ppc64le", "s390x":
			default:
				return fmt.Errorf("releasepayload: unknown architecture %q", a)
			}
			if slices.Contains(archs[:i], a) {
				return fmt.Errorf("releasepayload: architecture %q given twice", a)
			}
		}
		c.archs = slices.Clone(archs)
		return nil
	}
}

// WithBaseLayers sets one filler layer per size, in bytes of deterministic incompressible data
// (so compressed size is about size). No sizes means no filler. The default is three layers of
// 256, 128 and 64 KiB.
func WithBaseLayers(sizes ...int64) Option {
	return func(c *config) error {
		for _, s := range sizes {
			if s < 0 {
				return fmt.Errorf("releasepayload: negative layer size %d", s)
			}
		}
		c.baseLayers = slices.Clone(sizes)
		if c.baseLayers == nil {
			c.baseLayers = []int64{}
		}
		return nil
	}
}

// WithLayout sets where the release metadata files sit. The default is LayoutLast.
func WithLayout(l Layout) Option {
	return func(c *config) error {
		if l < LayoutLast || l > LayoutShadowed {
			return fmt.Errorf("releasepayload: unknown layout %d", l)
		}
		c.layout = l
		return nil
	}
}

// WithoutImageReferences leaves release-manifests/image-references out of every layer.
func WithoutImageReferences() Option {
	return func(c *config) error { c.omitRefs = true; return nil }
}

// WithoutBootImages leaves release-manifests/0000_50_installer_coreos-bootimages.yaml out of
// every layer.
func WithoutBootImages() Option {
	return func(c *config) error { c.omitBoot = true; return nil }
}

// WithPullspecRewrite replaces every tag's from.name with fn(tag name, from.name), for
// example to point components at a mirror. It runs after WithComponents.
func WithPullspecRewrite(fn func(tag, pullspec string) string) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("releasepayload: nil rewrite function")
		}
		c.rewrite = fn
		return nil
	}
}

// WithComponents builds one small image per image-references tag (see Components) and points
// each tag at "<repository>@<its digest>", so that a test can push the components and check that
// every one of them resolves. repository is a pullspec without tag or digest, such as
// "quay.io/openshift-release-dev/ocp-v4.0-art-dev".
func WithComponents(repository string) Option {
	return func(c *config) error {
		if repository == "" {
			return fmt.Errorf("releasepayload: empty component repository")
		}
		c.componentRepo = repository
		return nil
	}
}

// Build returns a synthetic release image. The same options give the same digests (with the
// same Go release, whose compress/flate output the manifest layers depend on).
func Build(opts ...Option) (*Payload, error) {
	c := config{imageRefs: Fixture4_10, bootImages: Fixture4_10, archs: []string{"amd64"}}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	if c.baseLayers == nil {
		c.baseLayers = defaultBaseLayers
	}
	if c.omitRefs && (c.componentRepo != "" || c.rewrite != nil) {
		return nil, fmt.Errorf("releasepayload: WithComponents and WithPullspecRewrite need image-references")
	}

	p := &Payload{}
	refsRaw := ImageReferencesJSON(c.imageRefs)
	is := &imagev1.ImageStream{}
	if err := json.Unmarshal(refsRaw, is); err != nil {
		return nil, fmt.Errorf("releasepayload: decoding %s image-references: %w", c.imageRefs, err)
	}
	version := is.Name
	changed := false
	if c.version != "" {
		is.Name, version, changed = c.version, c.version, true
	}
	if c.componentRepo != "" {
		comps, err := Components(is)
		if err != nil {
			return nil, err
		}
		for i := range is.Spec.Tags {
			tag := &is.Spec.Tags[i]
			d, err := comps[tag.Name].Digest()
			if err != nil {
				return nil, err
			}
			tag.From.Name = c.componentRepo + "@" + d.String()
		}
		p.Components, changed = comps, true
	}
	if c.rewrite != nil {
		for i := range is.Spec.Tags {
			tag := &is.Spec.Tags[i]
			if tag.From != nil {
				tag.From.Name = c.rewrite(tag.Name, tag.From.Name)
			}
		}
		changed = true
	}
	if changed {
		b, err := json.MarshalIndent(is, "", "  ")
		if err != nil {
			return nil, err
		}
		refsRaw = append(b, '\n')
	}
	if !c.omitRefs {
		p.ImageStream, p.ImageReferences = is, refsRaw
	}
	if !c.omitBoot {
		p.BootImages = BootImagesYAML(c.bootImages)
	}

	zw := compressors{}
	top, err := metadataLayers(zw, c, p, version)
	if err != nil {
		return nil, err
	}

	images := make([]v1.Image, 0, len(c.archs))
	for _, arch := range c.archs {
		img, err := archImage(zw, c, arch, version, top)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	p.Image = images[0]
	if len(images) > 1 {
		idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
		for i, img := range images {
			idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
				Add:        img,
				Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: c.archs[i]}},
			})
		}
		p.Index = idx
	}
	return p, nil
}

type namedLayer struct {
	layer     v1.Layer
	createdBy string
}

// metadataLayers returns the architecture-independent layers, in order, per c.layout.
func metadataLayers(zw compressors, c config, p *Payload, version string) ([]namedLayer, error) {
	var current []file
	if p.ImageReferences != nil {
		current = append(current, file{ImageReferencesPath, p.ImageReferences})
	}
	if p.BootImages != nil {
		current = append(current, file{BootImagesPath, p.BootImages})
	}
	mk := func(createdBy string, files ...file) (namedLayer, error) {
		l, err := zw.newLayer(files, gzip.BestSpeed)
		return namedLayer{l, createdBy}, err
	}
	other, err := mk("COPY other release manifests /release-manifests/", otherManifests(version)...)
	if err != nil {
		return nil, err
	}
	if len(current) == 0 {
		return []namedLayer{other}, nil
	}

	var out []namedLayer
	add := func(createdBy string, files ...file) error {
		if len(files) == 0 {
			return nil
		}
		l, err := mk(createdBy, files...)
		out = append(out, l)
		return err
	}
	switch c.layout {
	case LayoutLast:
		out = append(out, other)
		err = add("COPY release metadata /release-manifests/", current...)
	case LayoutNotLast:
		err = add("COPY release metadata /release-manifests/", current...)
		out = append(out, other)
	case LayoutSplit:
		var refs, boot []file
		for _, f := range current {
			if f.name == ImageReferencesPath {
				refs = append(refs, f)
			} else {
				boot = append(boot, f)
			}
		}
		if err = add("COPY boot images /release-manifests/", boot...); err == nil {
			out = append(out, other)
			err = add("COPY image references /release-manifests/", refs...)
		}
	case LayoutShadowed:
		var stale []file
		for _, f := range current {
			stale = append(stale, file{f.name, staleCopy(f)})
		}
		if err = add("COPY stale release metadata /release-manifests/", stale...); err == nil {
			out = append(out, other)
			err = add("COPY release metadata /release-manifests/", current...)
		}
	}
	return out, err
}

// staleCopy returns a different but well-formed version of a metadata file, for LayoutShadowed.
func staleCopy(f file) []byte {
	if f.name == ImageReferencesPath {
		var is imagev1.ImageStream
		if err := json.Unmarshal(f.data, &is); err == nil {
			is.Name = "0.0.0-stale-shadowed-by-a-later-layer"
			if b, err := json.Marshal(&is); err == nil {
				return b
			}
		}
	}
	return append([]byte("# stale copy, shadowed by a later layer\n"), f.data...)
}

// otherManifests returns the rest of a release's manifests directory: a few representative,
// generated files and release-metadata, enough for a reader to skip over.
func otherManifests(version string) []file {
	names := []string{
		"0000_00_cluster-version-operator_01_clusterversion.crd.yaml",
		"0000_03_config-operator_01_proxy.crd.yaml",
		"0000_30_machine-api-operator_00_namespace.yaml",
		"0000_50_cluster-ingress-operator_02-deployment.yaml",
		"0000_80_machine-config-operator_01_machineconfig.crd.yaml",
		"0000_90_cluster-monitoring-operator_00-prometheusrule.yaml",
	}
	files := make([]file, 0, len(names)+1)
	for i, n := range names {
		var b bytes.Buffer
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: synthetic-%d\n  namespace: openshift-config\n  annotations:\n    release.openshift.io/version: %q\ndata:\n", i, version)
		for j := 0; j < 64; j++ {
			fmt.Fprintf(&b, "  key-%02d: \"synthetic manifest %d line %d of a generated release payload\"\n", j, i, j)
		}
		files = append(files, file{"release-manifests/" + n, b.Bytes()})
	}
	meta, _ := json.Marshal(map[string]any{
		"kind": "cincinnati-metadata-v0", "version": version, "previous": []string{}, "metadata": map[string]string{},
	})
	return append(files, file{"release-manifests/release-metadata", meta})
}

// archImage assembles the image of one architecture: its own filler layers, then top.
func archImage(zw compressors, c config, arch, version string, top []namedLayer) (v1.Image, error) {
	cfg := &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config: v1.Config{
			Entrypoint: []string{"/usr/bin/cluster-version-operator"},
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Labels: map[string]string{
				"io.openshift.release":          version,
				"io.openshift.release.operator": "true",
				"io.k8s.display-name":           "OpenShift release " + version + " (synthetic)",
			},
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img, err := mutate.ConfigFile(empty.Image, cfg)
	if err != nil {
		return nil, err
	}
	adds := make([]mutate.Addendum, 0, len(c.baseLayers)+len(top))
	for i, size := range c.baseLayers {
		data := pseudoRandom(fmt.Sprintf("%s/%d", arch, i), size)
		l, err := zw.newLayer([]file{{fmt.Sprintf("usr/share/releasepayload/base-%d.bin", i), data}}, gzip.NoCompression)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.Addendum{Layer: l, History: v1.History{
			Created: v1.Time{Time: epoch}, CreatedBy: fmt.Sprintf("ADD base layer %d (%d bytes)", i, size)}})
	}
	for _, t := range top {
		adds = append(adds, mutate.Addendum{Layer: t.layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: t.createdBy}})
	}
	return mutate.Append(img, adds...)
}
