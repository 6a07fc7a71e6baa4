package releasepayload

import (
	"compress/gzip"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	imagev1 "github.com/openshift/api/image/v1"
)

// Components returns one small, deterministic linux/amd64 image per tag of is, keyed by tag
// name: a single layer of a few hundred bytes naming the component, so that a test can push a
// whole release's components (about 150) cheaply. Different tags give different digests; the
// same tag always gives the same digest.
func Components(is *imagev1.ImageStream) (map[string]v1.Image, error) {
	out := make(map[string]v1.Image, len(is.Spec.Tags))
	zw := compressors{}
	for _, tag := range is.Spec.Tags {
		if _, dup := out[tag.Name]; dup {
			return nil, fmt.Errorf("releasepayload: tag %q appears twice", tag.Name)
		}
		img, err := component(zw, tag.Name)
		if err != nil {
			return nil, fmt.Errorf("releasepayload: component %q: %w", tag.Name, err)
		}
		out[tag.Name] = img
	}
	return out, nil
}

func component(zw compressors, tag string) (v1.Image, error) {
	l, err := zw.newLayer([]file{{"usr/share/openshift/component", []byte("component " + tag + "\n")}}, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config:       v1.Config{Labels: map[string]string{"io.openshift.release.component": tag}},
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "COPY component " + tag}})
}
