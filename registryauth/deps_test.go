package registryauth_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDependencyFootprint guards what HyperShift vendors for the keychain
// path: a new module here must be a deliberate decision, made by editing
// this list, not an accident of an import.
func TestDependencyFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	allowed := []string{
		"github.com/aws/aws-sdk-go-v2",
		"github.com/aws/aws-sdk-go-v2/credentials",
		"github.com/aws/aws-sdk-go-v2/feature/ec2/imds",
		"github.com/aws/aws-sdk-go-v2/internal/configsources",
		"github.com/aws/aws-sdk-go-v2/internal/endpoints/v2",
		"github.com/aws/aws-sdk-go-v2/internal/v4a",
		"github.com/aws/aws-sdk-go-v2/service/ecr",
		"github.com/aws/aws-sdk-go-v2/service/internal/presigned-url",
		"github.com/aws/aws-sdk-go-v2/service/signin",
		"github.com/aws/aws-sdk-go-v2/service/sts",
		"github.com/aws/aws-sdk-go-v2/service/internal/accept-encoding",
		"github.com/aws/smithy-go",
		"github.com/go-logr/logr",
		"github.com/openshift/hypershift-ecr",
		"k8s.io/utils",
	}
	forbidden := []string{
		"github.com/google/go-containerregistry",
		"github.com/docker/distribution",
		"github.com/prometheus/client_golang",
		"github.com/openshift/hypershift",
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}",
		"github.com/openshift/hypershift-ecr/pkg/ecrhost",
		"github.com/openshift/hypershift-ecr/pkg/dockerconfig",
		"github.com/openshift/hypershift-ecr/pkg/awsapi",
		"github.com/openshift/hypershift-ecr/registryauth",
	).CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	var modules []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(modules, m) {
			modules = append(modules, m)
		}
	}
	slices.Sort(modules)
	for _, m := range modules {
		require.Contains(t, allowed, m, "module %s entered the HyperShift-facing packages; add it to the allowed list only on purpose", m)
	}
	for _, m := range forbidden {
		require.NotContains(t, modules, m)
	}
}
