//go:build unix

package npmpeer

import (
	"os"
	"testing"
)

// TestInstall installs every set the tests use, so that a CI run can fill the
// cache before the tests run in parallel.
func TestInstall(t *testing.T) {
	for _, set := range [][]string{Servers, Clients} {
		dir := Install(t, set...)
		for _, p := range set {
			if _, err := os.Stat(Script(dir, p, "package.json")); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		if !installed(dir, set) {
			t.Errorf("%v not installed in %s", set, dir)
		}
	}
}

func TestInstalledChecksTheVersion(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/node_modules/@scope/pkg", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/node_modules/@scope/pkg/package.json", []byte(`{"version":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if !installed(dir, []string{"@scope/pkg@1.0.0"}) || installed(dir, []string{"@scope/pkg@1.0.1"}) || installed(dir, []string{"@scope/other@1.0.0"}) {
		t.Error("installed does not compare name and version")
	}
}
