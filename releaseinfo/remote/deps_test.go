package remote_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDependencyFootprint guards what the reader brings into HyperShift: a new module must be a
// decision made by editing this list. Most come with go-containerregistry (docker/cli for
// authn's config file, klauspost/compress for zstd) and openshift/api (k8s.io/apimachinery);
// pkg/mirrorpolicy brings hypershift/api. The reader needs no AWS SDK: ECR tokens come in
// through the keychain.
func TestDependencyFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	allowed := []string{
		"github.com/containerd/stargz-snapshotter/estargz",
		"github.com/coreos/stream-metadata-go",
		"github.com/distribution/reference",
		"github.com/docker/cli",
		"github.com/docker/distribution",
		"github.com/docker/docker-credential-helpers",
		"github.com/fxamacker/cbor/v2",
		"github.com/go-logr/logr",
		"github.com/google/go-containerregistry",
		"github.com/json-iterator/go",
		"github.com/klauspost/compress",
		"github.com/mitchellh/go-homedir",
		"github.com/modern-go/concurrent",
		"github.com/modern-go/reflect2",
		"github.com/opencontainers/go-digest",
		"github.com/opencontainers/image-spec",
		"github.com/openshift/api",
		"github.com/openshift/hypershift-ecr",
		"github.com/openshift/hypershift/api",
		"github.com/sirupsen/logrus",
		"github.com/vbatts/tar-split",
		"github.com/x448/float16",
		"go.yaml.in/yaml/v2",
		"golang.org/x/net",
		"golang.org/x/sync",
		"golang.org/x/sys",
		"golang.org/x/text",
		"gopkg.in/inf.v0",
		"k8s.io/api",
		"k8s.io/apimachinery",
		"k8s.io/klog/v2",
		"k8s.io/kube-openapi",
		"k8s.io/utils",
		"sigs.k8s.io/json",
		"sigs.k8s.io/randfill",
		"sigs.k8s.io/structured-merge-diff/v6",
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}",
		"github.com/openshift/hypershift-ecr/releaseinfo/remote").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	for _, m := range strings.Fields(string(out)) {
		require.True(t, slices.Contains(allowed, m), "module %s entered releaseinfo/remote; add it to the allowed list only on purpose", m)
	}
	for _, m := range []string{"github.com/aws/aws-sdk-go-v2", "github.com/prometheus/client_golang"} {
		require.NotContains(t, strings.Fields(string(out)), m)
	}
}
