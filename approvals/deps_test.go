package approvals_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// goList returns the import paths of the packages outside the standard library
// that pkgs (of this module) depend on, themselves included.
func goList(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = ".." // the module's root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.Fields(string(out))
}

// Package approvals depends on the standard library and the kernel only (and
// internal helpers that need nothing else), and so
// do the permission middleware and the runner through it: the database stores
// live in their own packages, linked in only by the programs that import them.
func TestLightDependencies(t *testing.T) {
	kernel := goList(t, ".")
	for _, p := range goList(t, "./approvals") {
		if p == "github.com/mcs-go/mcs/approvals" || slices.Contains(kernel, p) {
			continue
		}
		// An internal helper of this module that needs nothing but the standard
		// library weighs nothing more.
		if strings.HasPrefix(p, "github.com/mcs-go/mcs/internal/") && slices.Equal(goList(t, p), []string{p}) {
			continue
		}
		t.Errorf("package approvals depends on %s; it may depend on the standard library, the kernel and internal helpers that need only the standard library", p)
	}
	for _, pkg := range []string{"./middleware/permission", "./runner"} {
		for _, p := range goList(t, pkg) {
			if strings.HasPrefix(p, "modernc.org/") || strings.HasPrefix(p, "github.com/jackc/") {
				t.Errorf("%s depends on %s; a database store's weight belongs to the programs that import the store", pkg, p)
			}
		}
	}
	// The stores do link their databases: the check above can fail.
	if deps := goList(t, "./approvals/sqlite"); !slices.ContainsFunc(deps, func(p string) bool { return strings.HasPrefix(p, "modernc.org/") }) {
		t.Errorf("approvals/sqlite depends on no modernc.org package: %v", deps)
	}
	if deps := goList(t, "./approvals/postgres"); !slices.Contains(deps, "github.com/jackc/pgx/v5") {
		t.Errorf("approvals/postgres does not depend on github.com/jackc/pgx/v5: %v", deps)
	}
}
