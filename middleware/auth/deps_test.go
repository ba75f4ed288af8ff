package auth_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Package auth stays light: the database drivers of the token stores are
// linked in only by the programs that import a store package.
func TestLightDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	list := func(pkg string) []string {
		cmd := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	heavy := func(p string) bool {
		return strings.HasPrefix(p, "modernc.org/") || strings.HasPrefix(p, "github.com/jackc/") || strings.HasPrefix(p, "github.com/redis/")
	}
	for _, p := range list("./middleware/auth") {
		if heavy(p) {
			t.Errorf("package auth depends on %s; a store's database driver belongs in the store's package", p)
		}
	}
	for _, pkg := range []string{"./middleware/auth/sqlite", "./middleware/auth/postgres", "./middleware/auth/redis"} {
		if !slices.ContainsFunc(list(pkg), heavy) {
			t.Errorf("%s links no database driver: the check above cannot fail", pkg)
		}
	}
}
