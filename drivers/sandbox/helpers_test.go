package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/internal/drivertest"
)

// attackEnv selects, in the test binary run inside the sandbox, an attack of
// runAttack instead of the tests.
const attackEnv = "MCS_SANDBOX_ATTACK"

func TestMain(m *testing.M) {
	if mode := os.Getenv(attackEnv); mode != "" {
		os.Exit(runAttack(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runAttack is what the test binary does inside the sandbox: one attack, whose
// outcome it prints.
func runAttack(mode string, args []string) int {
	switch mode {
	case "dial":
		c, err := net.DialTimeout("tcp", args[0], 2*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
			return 0
		}
		c.Close()
		fmt.Println("CONNECTED")
	case "read":
		for _, p := range args {
			b, err := os.ReadFile(p)
			if err != nil {
				fmt.Println("read failed:", err)
				continue
			}
			fmt.Printf("READ %s: %q\n", p, b)
		}
	case "ptrace":
		pid, _ := strconv.Atoi(args[0])
		if err := syscall.PtraceAttach(pid); err != nil {
			fmt.Println("ptrace failed:", err)
			return 0
		}
		fmt.Println("ATTACHED")
	case "setuid":
		err := syscall.Setuid(0)
		fmt.Printf("setuid(0): %v; euid %d\n", err, os.Geteuid())
	case "memory":
		n, _ := strconv.Atoi(args[0])
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("ALLOCATED", len(b))
	default:
		fmt.Println("unknown attack", mode)
		return 2
	}
	return 0
}

// newWorkspace returns a new, empty workspace a sandboxed command can use: when
// the tests run as root it is given to the unprivileged user 65534, and its
// parent made reachable.
func newWorkspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	giveAway(t, dir)
	return dir
}

// giveAway gives dir to the user 65534 when the tests run as root, and makes
// its parent directories reachable.
func giveAway(t testing.TB, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	for p := filepath.Dir(dir); p != "/"; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// needBwrap skips the test when bubblewrap is not installed.
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed; apt-get install bubblewrap to run the sandbox tests")
	}
}

// newTD returns a bwrap tool driver over a new workspace, unless cfg has one.
func newTD(t testing.TB, cfg sandbox.Config) *sandbox.ToolDriver {
	t.Helper()
	needBwrap(t)
	if cfg.Workspace == "" {
		cfg.Workspace = newWorkspace(t)
	}
	return drivertest.Open(t, sandbox.NewToolDriver, cfg)
}

// result is the result of run_command.
type result struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
	Notice    string `json:"notice"`

	DiskLimitExceeded bool `json:"disk_limit_exceeded"`
}

// run runs command through run_command with args added.
func run(t testing.TB, td *sandbox.ToolDriver, command string, args map[string]any) result {
	t.Helper()
	a := map[string]any{"command": command}
	for k, v := range args {
		a[k] = v
	}
	res, err := td.ExecuteTool(context.Background(), "run_command", a)
	if err != nil {
		t.Fatalf("run_command %q: %v", command, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// installAttacker copies the test binary into the workspace as "attacker".
func installAttacker(t testing.TB, ws string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(ws, "attacker")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dst, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
}

// processesWith lists the host processes whose command line contains marker.
func processesWith(t testing.TB, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if cl := strings.ReplaceAll(string(b), "\x00", " "); strings.Contains(cl, marker) {
			found = append(found, e.Name()+": "+cl)
		}
	}
	return found
}
