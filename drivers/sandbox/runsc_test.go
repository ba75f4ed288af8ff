//go:build linux

package sandbox_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/drivers/sandbox"
)

// The configuration runsc is given isolates as the bwrap backend does.
func TestRunscSpec(t *testing.T) {
	ws := t.TempDir()
	for _, network := range []bool{false, true} {
		spec, err := sandbox.RunscSpec(sandbox.Config{Workspace: ws, Network: network, Env: map[string]string{"A": "1"}}, "echo hi")
		if err != nil {
			t.Fatal(err)
		}
		proc := spec["process"].(map[string]any)
		got := map[string]any{
			"args":            proc["args"],
			"user":            proc["user"],
			"env":             proc["env"],
			"noNewPrivileges": proc["noNewPrivileges"],
			"capabilities":    proc["capabilities"],
			"root":            spec["root"],
			"rlimits":         len(proc["rlimits"].([]any)),
		}
		want := map[string]any{
			"args":            []any{"/bin/sh", "-c", "echo hi"},
			"user":            map[string]any{"uid": 65534.0, "gid": 65534.0},
			"env":             []any{"A=1", "HOME=/workspace", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"},
			"noNewPrivileges": true,
			"capabilities":    map[string]any{"ambient": []any{}, "bounding": []any{}, "effective": []any{}, "inheritable": []any{}, "permitted": []any{}},
			"root":            map[string]any{"path": "rootfs", "readonly": true},
			"rlimits":         6,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("network %v: process (-want +got):\n%s", network, diff)
		}
		var namespaces []string
		for _, ns := range spec["linux"].(map[string]any)["namespaces"].([]any) {
			namespaces = append(namespaces, ns.(map[string]any)["type"].(string))
		}
		if slices.Contains(namespaces, "network") == network {
			t.Errorf("network %v: namespaces %v", network, namespaces)
		}
		writable := 0
		for _, m := range spec["mounts"].([]any) {
			m := m.(map[string]any)
			dst, src := m["destination"].(string), m["source"].(string)
			opts, _ := m["options"].([]any)
			if m["type"] == "bind" && slices.Contains(opts, any("rw")) {
				writable++
				if dst != "/workspace" || src != ws {
					t.Errorf("writable bind of %s at %s", src, dst)
				}
			}
			for _, bad := range []string{"/root", "/home", "/etc/shadow", "/var", "/run"} {
				if strings.HasPrefix(src, bad) || strings.HasPrefix(dst, bad) {
					t.Errorf("mount of %s at %s", src, dst)
				}
			}
		}
		if writable != 1 {
			t.Errorf("%d writable binds, want the workspace alone", writable)
		}
	}
}

// With gVisor installed, commands run in it.
func TestRunsc(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("gVisor (runsc) is not installed; install it to run the runsc backend's tests")
	}
	td := newTD(t, sandbox.Config{Backend: "runsc"})
	if r := run(t, td, "echo hi; id -u; cat /proc/net/dev | tail -n +3 | cut -d: -f1", nil); r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "hi\n") {
		t.Errorf("result %+v", r)
	}
}
