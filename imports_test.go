package mcs_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// eachImport calls f with every import of the non-test Go files of dir; a dir
// without Go files fails t.
func eachImport(t *testing.T, dir string, f func(file, path string)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s has no Go files", dir)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			f(file, path)
		}
	}
}

// The kernel imports only the standard library and a TOML decoder: nothing of this
// module, so that every other package can depend on it and it on nothing.
func TestKernelImports(t *testing.T) {
	eachImport(t, ".", func(file, path string) {
		first, _, _ := strings.Cut(path, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(path, "github.com/pelletier/go-toml/v2") {
			t.Errorf("%s imports %s; the kernel may import only the standard library and go-toml", file, path)
		}
	})
}

// The observers of outcomes (hooks and tracing) tell denials, challenges and
// approvals from mcs.CodeOf, not from the packages that make them: they import
// neither permission nor auth, so that each concern can change on its own.
func TestObserverImports(t *testing.T) {
	forbidden := []string{
		"github.com/mcs-go/mcs/middleware/permission",
		"github.com/mcs-go/mcs/middleware/auth",
	}
	for _, dir := range []string{"middleware/hooks", "middleware/tracing"} {
		eachImport(t, dir, func(file, path string) {
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s; observers tell outcomes with mcs.CodeOf", file, path)
				}
			}
		})
	}
}
