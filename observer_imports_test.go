package mcs_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The observers of outcomes (hooks and tracing) tell denials, challenges and
// approvals from mcs.CodeOf, not from the packages that make them: they import
// neither permission nor auth, so that each concern can change on its own.
func TestObserverImports(t *testing.T) {
	forbidden := []string{
		"github.com/mcs-go/mcs/middleware/permission",
		"github.com/mcs-go/mcs/middleware/auth",
	}
	for _, dir := range []string{"middleware/hooks", "middleware/tracing"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("%s has no Go files", dir)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range ast.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if path == bad || strings.HasPrefix(path, bad+"/") {
						t.Errorf("%s imports %s; observers tell outcomes with mcs.CodeOf", f, path)
					}
				}
			}
		}
	}
}
