package mirrorpolicy

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImports guards the dependency footprint HyperShift inherits: the
// package must never import HyperShift's main module, only its api module.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"errors": true, "fmt": true, "slices": true, "sort": true, "strings": true,
		"github.com/distribution/reference":                      true,
		"github.com/openshift/api/config/v1":                     true,
		"github.com/openshift/api/operator/v1alpha1":             true,
		"github.com/openshift/hypershift/api/hypershift/v1beta1": true,
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			require.True(t, allowed[path], "%s imports %s; update the allowed list only on purpose", name, path)
		}
	}
}
