package releasepayload

import (
	"embed"
	"encoding/json"
	"fmt"

	imagev1 "github.com/openshift/api/image/v1"
)

// Paths of the two files a release reader looks for, inside the image's file system.
const (
	ImageReferencesPath = "release-manifests/image-references"
	BootImagesPath      = "release-manifests/0000_50_installer_coreos-bootimages.yaml"
)

// Fixture names a release whose metadata is embedded in this package.
type Fixture string

// Embedded fixtures. Image references exist for 4.8 and 4.10, boot images for 4.10 and 5.0.
const (
	Fixture4_8  Fixture = "4.8"  // image-references of a 4.8 CI payload (registry.ci.openshift.org pullspecs)
	Fixture4_10 Fixture = "4.10" // image-references and boot images of a 4.10 nightly (quay.io pullspecs)
	Fixture5_0  Fixture = "5.0"  // boot images of 5.0.0-ec.2, with the multi-stream `data.streams` key
)

//go:embed testdata/*.json testdata/*.yaml
var fixtures embed.FS

func fixtureBytes(file string) ([]byte, error) {
	b, err := fixtures.ReadFile("testdata/" + file)
	if err != nil {
		return nil, fmt.Errorf("no such fixture: %s", file)
	}
	return b, nil
}

func imageReferencesFile(f Fixture) ([]byte, error) {
	switch f {
	case Fixture4_8, Fixture4_10:
		return fixtureBytes(string(f) + "-image-references.json")
	}
	return nil, fmt.Errorf("releasepayload: no image-references fixture for %q (have %q, %q)", f, Fixture4_8, Fixture4_10)
}

func bootImagesFile(f Fixture) ([]byte, error) {
	switch f {
	case Fixture4_10, Fixture5_0:
		return fixtureBytes(string(f) + "-installer-coreos-bootimages.yaml")
	}
	return nil, fmt.Errorf("releasepayload: no boot images fixture for %q (have %q, %q)", f, Fixture4_10, Fixture5_0)
}

// ImageReferencesJSON returns a copy of the embedded image-references file of f, byte for byte.
// It panics if f has none (only Fixture4_8 and Fixture4_10 do).
func ImageReferencesJSON(f Fixture) []byte {
	b, err := imageReferencesFile(f)
	if err != nil {
		panic(err)
	}
	return b
}

// ImageReferences returns the embedded image-references ImageStream of f, freshly decoded, so
// the caller may modify it. It panics if f has none (only Fixture4_8 and Fixture4_10 do).
func ImageReferences(f Fixture) *imagev1.ImageStream {
	is := &imagev1.ImageStream{}
	if err := json.Unmarshal(ImageReferencesJSON(f), is); err != nil {
		panic(fmt.Sprintf("releasepayload: embedded fixture %s does not decode: %v", f, err))
	}
	return is
}

// BootImagesYAML returns a copy of the embedded 0000_50_installer_coreos-bootimages.yaml
// ConfigMap of f, byte for byte. It panics if f has none (only Fixture4_10 and Fixture5_0 do).
func BootImagesYAML(f Fixture) []byte {
	b, err := bootImagesFile(f)
	if err != nil {
		panic(err)
	}
	return b
}
