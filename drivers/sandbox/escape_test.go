package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
)

// TestEscape runs attacks from inside the sandbox. Each one must fail, and the
// host must be untouched.
func TestEscape(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()

	// A file of the host outside the workspace, readable by anyone.
	hostDir := t.TempDir()
	giveAway(t, hostDir)
	hostFile := filepath.Join(hostDir, "host.txt")
	if err := os.WriteFile(hostFile, []byte(confinetest.Secret), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCS_HOST_SECRET", confinetest.Secret)

	ws := newWorkspace(t)
	installAttacker(t, ws)
	td := newTD(t, sandbox.Config{
		Workspace: ws, Timeout: 20 * time.Second, MaxTimeout: 20 * time.Second,
		Memory: 2 << 30, MaxProcesses: 32, MaxOutputBytes: 4096,
		MaxDiskBytes: 2 << 30, // so that the file size limit, not the disk limit, stops the file over it
		Env:          map[string]string{"MCS_SANDBOX_ATTACK": ""},
	})
	attack := func(mode string, args ...string) string {
		return "MCS_SANDBOX_ATTACK=" + mode + " ./attacker " + strings.Join(args, " ")
	}

	tests := []struct {
		name    string
		command string
		// check returns what is wrong with the result, or "".
		check func(r result) string
	}{
		{"network to a host loopback listener", attack("dial", ln.Addr().String()), func(r result) string {
			return failIf(strings.Contains(r.Stdout, "CONNECTED") || !strings.Contains(r.Stdout, "dial failed"), r)
		}},
		{"network to the outside", attack("dial", "192.0.2.1:80"), func(r result) string {
			return failIf(!strings.Contains(r.Stdout, "network is unreachable"), r)
		}},
		{"host file outside the workspace", "cat " + hostFile + "; ls " + hostDir, func(r result) string {
			return failIf(r.ExitCode == 0 || strings.Contains(r.Stdout, confinetest.Secret), r)
		}},
		{"host secrets", attack("read", "/etc/shadow", "/root/.bashrc", "/etc/ssh/ssh_host_ed25519_key", "/proc/1/environ"), func(r result) string {
			return failIf(strings.Contains(r.Stdout, "READ /etc") || strings.Contains(r.Stdout, "READ /root") || strings.Contains(r.Stdout, confinetest.Secret), r)
		}},
		{"host account names", "cat /etc/passwd", func(r result) string {
			return failIf(r.ExitCode != 0 || strings.Count(r.Stdout, "\n") != 3 || !strings.Contains(r.Stdout, "sandbox:x:1000"), r)
		}},
		{"host directories", "ls / /home /root /etc 2>&1", func(r result) string {
			return failIf(strings.Contains(r.Stdout, "shadow") || strings.Contains(r.Stdout, "\nhome") || strings.Contains(r.Stdout, "\nroot") || strings.Contains(r.Stdout, "\nvar"), r)
		}},
		{"host environment", "env; cat /proc/self/environ", func(r result) string {
			return failIf(strings.Contains(r.Stdout, confinetest.Secret) || strings.Contains(r.Stdout, "MCS_HOST_SECRET"), r)
		}},
		{"host processes", "ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline", func(r result) string {
			// bwrap's first process, the shell, prlimit's child and the commands: a handful.
			n := 0
			fmt.Sscan(r.Stdout, &n)
			return failIf(n == 0 || n > 8, r)
		}},
		{"ptrace of a host process", attack("ptrace", fmt.Sprint(os.Getpid())), func(r result) string {
			return failIf(!strings.Contains(r.Stdout, "ptrace failed"), r)
		}},
		{"setuid to root", attack("setuid"), func(r result) string {
			return failIf(!strings.HasSuffix(r.Stdout, "; euid 1000\n") || strings.Contains(r.Stdout, "<nil>"), r)
		}},
		{"setuid binary", "ls -l /usr/bin/su /usr/bin/mount 2>/dev/null; su -c id root </dev/null 2>&1; id -u", func(r result) string {
			return failIf(strings.Contains(r.Stdout, "uid=0"), r)
		}},
		{"no privileges", "grep -E '^(NoNewPrivs|CapEff|CapBnd|CapPrm)' /proc/self/status", func(r result) string {
			want := "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\n"
			return failIf(r.Stdout != want, r)
		}},
		{"system read-only", "touch /usr/x /etc/x /x 2>&1; echo ok > /tmp/x && cat /tmp/x", func(r result) string {
			return failIf(strings.Count(r.Stdout, "Read-only file system") != 3 || !strings.HasSuffix(r.Stdout, "ok\n"), r)
		}},
		{"fork bomb", "f() { f | f & }; f; sleep 2; echo survived", func(r result) string {
			return failIf(r.TimedOut, r)
		}},
		{"a thousand children", "for i in $(seq 1000); do sleep 5 & done; echo spawned", func(r result) string {
			return failIf(r.ExitCode == 0 || !strings.Contains(r.Stderr, "Cannot fork") || r.TimedOut, r)
		}},
		{"memory bomb", "MCS_SANDBOX_ATTACK=memory ./attacker 4000000000 2>&1 | tail -3", func(r result) string {
			return failIf(strings.Contains(r.Stdout, "ALLOCATED"), r)
		}},
		{"fill the private tmp", "head -c 100000000 /dev/zero > /tmp/big; echo $?; ls -l /tmp/big", func(r result) string {
			return failIf(!strings.Contains(r.Stderr, "No space left on device"), r)
		}},
		{"file over the size limit", "head -c 1073741900 /dev/zero > big; echo $?; rm -f big", func(r result) string {
			return failIf(!strings.Contains(r.Stderr, "File size limit exceeded"), r)
		}},
		{"descriptors of the host", "ls /proc/self/fd", func(r result) string {
			return failIf(r.Stdout != "0\n1\n2\n3\n", r) // 3 is the listing of ls itself
		}},
		{"own loopback only", "tail -n +3 /proc/net/dev | cut -d: -f1", func(r result) string {
			return failIf(strings.TrimSpace(r.Stdout) != "lo", r)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, td, tc.command, nil)
			if msg := tc.check(r); msg != "" {
				t.Error(msg)
			}
		})
	}
	select {
	case <-accepted:
		t.Error("the host's loopback listener accepted a connection from the sandbox")
	default:
	}
	if b, err := os.ReadFile(hostFile); err != nil || string(b) != confinetest.Secret {
		t.Errorf("host file changed: %q, %v", b, err)
	}
}

func failIf(bad bool, r result) string {
	if !bad {
		return ""
	}
	return fmt.Sprintf("the attack had an effect or an unexpected result: exit %d, timed out %v, notice %q\nstdout: %s\nstderr: %s", r.ExitCode, r.TimedOut, r.Notice, r.Stdout, r.Stderr)
}

// A command plants symbolic links in the workspace; the file tools must not
// follow them out.
func TestPlantedSymlinks(t *testing.T) {
	hostDir := t.TempDir()
	hostFile := filepath.Join(hostDir, "host.txt")
	if err := os.WriteFile(hostFile, []byte(confinetest.Secret), 0o644); err != nil {
		t.Fatal(err)
	}
	td := newTD(t, sandbox.Config{})
	r := run(t, td, "ln -s "+hostDir+" out && ln -s "+hostFile+" leak && ln -s /etc/passwd passwd && ls", nil)
	if r.ExitCode != 0 {
		t.Fatalf("planting links: %+v", r)
	}
	for _, c := range []drivertest.ToolCall{
		{Tool: "write_file", Args: map[string]any{"path": "out/new.txt", "content": drivertest.Payload}},
		{Tool: "write_file", Args: map[string]any{"path": "leak", "content": drivertest.Payload}},
		{Tool: "read_file", Args: map[string]any{"path": "leak"}},
		{Tool: "read_file", Args: map[string]any{"path": "passwd"}},
		{Tool: "list_files", Args: map[string]any{"path": "out"}},
	} {
		_, err := drivertest.Call(t, td, c.Tool, c.Args)
		if err == nil || !strings.Contains(err.Error(), "leads outside the root") || strings.Contains(err.Error(), confinetest.Secret) {
			t.Errorf("%s(%v): error %v, want a refused symbolic link", c.Tool, c.Args, err)
		}
	}
	if _, err := os.Stat(filepath.Join(hostDir, "new.txt")); err == nil {
		t.Error("write_file wrote outside the workspace")
	}
	if b, _ := os.ReadFile(hostFile); string(b) != confinetest.Secret {
		t.Errorf("host file changed: %q", b)
	}
}

// The file tools refuse every escape of the confinement suite shared with the
// filesystem driver.
func TestFileToolsConfinement(t *testing.T) {
	needBwrap(t)
	env := confinetest.New(t)
	giveAway(t, env.Root)
	td := newTD(t, sandbox.Config{Workspace: env.Root})
	drivertest.RunEscapeSuite(t, env, td, func(p string) []drivertest.ToolCall {
		return []drivertest.ToolCall{
			{Tool: "read_file", Args: map[string]any{"path": p}},
			{Tool: "list_files", Args: map[string]any{"path": p}},
			{Tool: "write_file", Args: map[string]any{"path": p, "content": drivertest.Payload}, Writes: true},
			{Tool: "write_file", Args: map[string]any{"path": p + "/x", "content": drivertest.Payload}, Writes: true},
		}
	})
}

// With Network on, the same attack reaches the listener: the refusal above is
// the sandbox's doing, not the test's.
func TestNetworkOn(t *testing.T) {
	needBwrap(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ws := newWorkspace(t)
	installAttacker(t, ws)
	td := newTD(t, sandbox.Config{Workspace: ws, Network: true, Memory: 2 << 30})
	if r := run(t, td, "MCS_SANDBOX_ATTACK=dial ./attacker "+ln.Addr().String(), nil); !strings.Contains(r.Stdout, "CONNECTED") {
		t.Errorf("with the network on, the listener was not reached: %+v", r)
	}
}
