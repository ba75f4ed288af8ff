package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildBinary builds the mcs command into a temporary directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcs")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinary runs the built command as a user would: the demo call of the
// README, a permission question answered from piped stdin, and a broken stack
// file.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t)
	dir := t.TempDir()

	runBin := func(stdin string, env []string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := runBin("", []string{"MCS_TOKEN_PETS="}, "call", "pets__findPetsByStatus", "status=available")
	if code != 0 || !strings.Contains(out, `"name": "Mimi"`) || !strings.Contains(errOut, "using the embedded demo") {
		t.Errorf("demo call: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, errOut, code = runBin("y\n", []string{"MCS_TOKEN_PETS=demo-key"}, "call", "pets__addPet", "name=Luna")
	if code != 0 || !strings.Contains(out, `"name": "Luna"`) || !strings.Contains(errOut, "Allow it?") {
		t.Errorf("asked write: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	if err := os.WriteFile(filepath.Join(dir, "mcs.toml"), []byte("[[driver]]\nlabel = \"x\"\ntype = \"soap\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runBin("", nil, "tools")
	if code != 2 || !strings.Contains(errOut, `mcs.toml:3: [[driver]] "x", key "type": unknown driver type "soap"`) {
		t.Errorf("broken stack: exit %d\nstderr:\n%s", code, errOut)
	}
}
