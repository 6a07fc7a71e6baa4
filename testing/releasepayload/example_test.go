package releasepayload_test

import (
	"fmt"

	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// A two-architecture 4.10 payload whose components point at an ECR mirror, with the metadata
// split over two layers.
func ExampleBuild() {
	p, err := releasepayload.Build(
		releasepayload.WithVersion("4.10.3"),
		releasepayload.WithArchitectures("amd64", "arm64"),
		releasepayload.WithBaseLayers(1<<20),
		releasepayload.WithLayout(releasepayload.LayoutSplit),
		releasepayload.WithComponents("123456789012.dkr.ecr.us-east-1.amazonaws.com/openshift-release-dev/ocp-v4.0-art-dev"),
	)
	if err != nil {
		panic(err)
	}
	im, _ := p.Index.IndexManifest()
	layers, _ := p.Image.Layers()
	fmt.Println("manifests:", len(im.Manifests), "layers per image:", len(layers))
	fmt.Println("release:", p.ImageStream.Name, "components:", len(p.Components))
	fmt.Println("first component:", p.ImageStream.Spec.Tags[0].Name)
	// Output:
	// manifests: 2 layers per image: 4
	// release: 4.10.3 components: 146
	// first component: aws-cloud-controller-manager
}
