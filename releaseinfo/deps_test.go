package releaseinfo_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImports guards what HyperShift vendors with this package: its direct
// imports are listed here, and a new one must be added on purpose.
func TestImports(t *testing.T) {
	t.Parallel()
	allowed := []string{
		"bytes", "context", "errors", "fmt", "regexp", "strconv", "strings", "sync", "time",
		"github.com/distribution/reference",
		"github.com/go-logr/logr",
		"golang.org/x/sync/singleflight",
		"k8s.io/utils/clock",
		"github.com/openshift/hypershift-ecr/pkg/ecrhost",
		"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy",
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			require.Contains(t, allowed, path, "%s imports %s; add it to the allowed list only on purpose", file, path)
		}
	}
}

// TestDependencyFootprint checks the whole import graph: no registry client,
// no AWS SDK, no HyperShift (its api module is fine: mirrorpolicy reads its
// types).
func TestDependencyFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}",
		"github.com/openshift/hypershift-ecr/releaseinfo").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	modules := strings.Fields(string(out))
	for _, m := range []string{
		"github.com/google/go-containerregistry",
		"github.com/docker/distribution",
		"github.com/openshift/hypershift",
		"github.com/aws/aws-sdk-go-v2",
		"github.com/prometheus/client_golang",
	} {
		require.False(t, slices.Contains(modules, m), "releaseinfo depends on %s", m)
	}
}
