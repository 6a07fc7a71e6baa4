package remote_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	ggcrremote "github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

// Read the metadata of a release image from a registry. Here the registry is an in-process one
// on 127.0.0.1 holding a synthetic 4.10.3 release; against ECR, pass
// remote.WithKeychain(authn.NewMultiKeychain(ggcrauth.NewKeychain(keychain))).
func ExampleReader_Lookup() {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	payload, err := releasepayload.Build(releasepayload.WithVersion("4.10.3"))
	if err != nil {
		panic(err)
	}
	image := strings.TrimPrefix(srv.URL, "http://") + "/openshift-release-dev/ocp-release:4.10.3-x86_64"
	ref, _ := name.ParseReference(image)
	if err := ggcrremote.Write(ref, payload.Image); err != nil {
		panic(err)
	}

	r, err := remote.NewReader()
	if err != nil {
		panic(err)
	}
	rel, err := r.Lookup(context.Background(), image)
	if err != nil {
		panic(err)
	}
	fmt.Println("version:", rel.ImageStream.Name)
	fmt.Println("CoreOS stream:", rel.StreamMetadata.Stream)
	mco, _, _ := strings.Cut(rel.ComponentImages["machine-config-operator"], "@")
	fmt.Println("machine-config-operator from:", mco)
	fmt.Println("pinned by digest:", strings.Contains(rel.Pullspec, "/openshift-release-dev/ocp-release@sha256:"))
	fmt.Println("layers read:", rel.Stats.LayersRead)
	// Output:
	// version: 4.10.3
	// CoreOS stream: rhcos-4.10
	// machine-config-operator from: quay.io/openshift-release-dev/ocp-v4.0-art-dev
	// pinned by digest: true
	// layers read: 1
}
