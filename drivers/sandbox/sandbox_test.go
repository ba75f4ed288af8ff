package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/internal/drivertest"
)

func TestRunCommand(t *testing.T) {
	td := newTD(t, sandbox.Config{})
	stdin := "from the model\n"
	tests := []struct {
		name    string
		command string
		args    map[string]any
		want    result
	}{
		{"stdout stderr exit", "echo out; echo err >&2; exit 3", nil, result{ExitCode: 3, Stdout: "out\n", Stderr: "err\n"}},
		{"working directory", "pwd", nil, result{Stdout: "/workspace\n"}},
		{"stdin given", "cat", map[string]any{"stdin": stdin}, result{Stdout: stdin}},
		{"stdin absent reads end of file", "cat; echo done", nil, result{Stdout: "done\n"}},
		{"pipes closed early", "exec >&- 2>&-; sleep 0.1; exit 4", nil, result{ExitCode: 4}},
		{"user", "id -u; id -g; id -un", nil, result{Stdout: "1000\n1000\nsandbox\n"}},
		{"background process ends with the command", "sleep 100 & echo started", nil, result{Stdout: "started\n"}},
		{"unicode", "printf 'héllo'", nil, result{Stdout: "héllo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, td, tc.command, tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("run_command %q (-want +got):\n%s", tc.command, diff)
			}
		})
	}
}

func TestEnvironmentIsExactlyTheConfigured(t *testing.T) {
	t.Setenv("MCS_HOST_SECRET", "host-secret-value")
	td := newTD(t, sandbox.Config{Env: map[string]string{"GREETING": "hi there", "LANG": "en_GB.UTF-8"}})
	got := strings.Split(strings.TrimSpace(run(t, td, "env", nil).Stdout), "\n")
	slices.Sort(got)
	// The shell adds PWD; nothing else may appear.
	want := []string{"GREETING=hi there", "HOME=/workspace", "LANG=en_GB.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin", "PWD=/workspace"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

func TestTimeout(t *testing.T) {
	td := newTD(t, sandbox.Config{Timeout: time.Second, MaxTimeout: 2 * time.Second})
	t.Run("default", func(t *testing.T) {
		got := run(t, td, "echo before; sleep 30", nil)
		if !got.TimedOut || got.ExitCode != -1 || got.Stdout != "before\n" || !strings.Contains(got.Notice, "killed with all its processes") {
			t.Errorf("result = %+v, want timed out after printing", got)
		}
	})
	t.Run("asked above the limit is clamped", func(t *testing.T) {
		start := time.Now()
		got := run(t, td, "sleep 30", map[string]any{"timeout_seconds": 3600})
		if !got.TimedOut || !strings.Contains(got.Notice, "3600 s, is above the limit; 2s was used") {
			t.Errorf("result = %+v, want a clamped timeout", got)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("the command ran %v, far beyond the clamped timeout of 2s", d)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		_, err := td.ExecuteTool(context.Background(), "run_command", map[string]any{"command": "true", "timeout_seconds": -1})
		if err == nil || !strings.Contains(err.Error(), "timeout_seconds -1 is not a positive number") {
			t.Errorf("error = %v", err)
		}
	})
}

// A timeout ends the whole tree of processes: none remains when the call returns.
func TestTimeoutKillsTheTree(t *testing.T) {
	td := newTD(t, sandbox.Config{Timeout: time.Second, MaxProcesses: 200})
	marker := "4242.4242"
	got := run(t, td, "for i in $(seq 50); do (sleep "+marker+"; echo never) & done; sleep "+marker, nil)
	if !got.TimedOut {
		t.Fatalf("result = %+v, want timed out", got)
	}
	if left := processesWith(t, marker); len(left) > 0 {
		t.Errorf("%d processes remain after the timeout:\n%s", len(left), strings.Join(left, "\n"))
	}
}

func TestContextCancelKillsTheCommand(t *testing.T) {
	ws := newWorkspace(t)
	td := newTD(t, sandbox.Config{Workspace: ws})
	// The command tells it runs through a named pipe, which the test reads.
	fifo := filepath.Join(ws, "ready")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	giveAway(t, fifo)
	marker := "4343.4343"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := td.ExecuteTool(ctx, "run_command", map[string]any{"command": "echo running > ready; sleep " + marker})
		done <- err
	}()
	b, err := os.ReadFile(fifo)
	if err != nil || string(b) != "running\n" {
		t.Fatalf("read the pipe: %q, %v", b, err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if left := processesWith(t, marker); len(left) > 0 {
		t.Errorf("processes remain after cancellation:\n%s", strings.Join(left, "\n"))
	}
}

func TestOutputCaps(t *testing.T) {
	td := newTD(t, sandbox.Config{MaxOutputBytes: 1000, Timeout: 60 * time.Second, MaxTimeout: 60 * time.Second})
	got := run(t, td, "head -c 1000000000 /dev/zero | tr '\\0' 'a'; echo; echo THE-END; seq 1 100000 >&2", nil)
	if !got.Truncated || !strings.Contains(got.Stdout, "bytes cut") || !strings.HasSuffix(got.Stdout, "THE-END\n") || !strings.HasPrefix(got.Stdout, "aaaa") {
		t.Errorf("stdout = %.200q..., truncated %v; want head, notice and tail", got.Stdout, got.Truncated)
	}
	if len(got.Stdout) > 1200 || len(got.Stderr) > 1200 {
		t.Errorf("stdout %d and stderr %d bytes, want about 1000 each", len(got.Stdout), len(got.Stderr))
	}
	if !strings.HasPrefix(got.Stderr, "1\n2\n") || !strings.HasSuffix(got.Stderr, "99999\n100000\n") {
		t.Errorf("stderr = %q, want the head and the tail of seq", got.Stderr)
	}
}

func TestMeta(t *testing.T) {
	needBwrap(t)
	cfg := sandbox.Config{Workspace: newWorkspace(t)}
	td := drivertest.Open(t, sandbox.NewToolDriver, cfg)
	d := drivertest.OpenDriver(t, sandbox.New, cfg)
	drivertest.CheckMeta(t, td, d, mcs.Meta{
		ID: "mcs-go/sandbox", Name: "Sandbox", Version: "0.1.0",
		Bindings: []mcs.Binding{{Capability: "sandbox", Adapter: "bwrap", SpecFormat: "builtin"}},
	})
	drivertest.CheckTools(t, td, []string{"run_command", "write_file", "read_file", "list_files"})
}

func TestAnnotations(t *testing.T) {
	for _, network := range []bool{false, true} {
		td := newTD(t, sandbox.Config{Network: network})
		list, err := td.ListTools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]mcs.ToolAnnotations{}
		for _, tool := range list {
			got[tool.Name] = *tool.Annotations
		}
		want := map[string]mcs.ToolAnnotations{
			"run_command": {Destructive: true, OpenWorld: network},
			"write_file":  {Destructive: true, Idempotent: true},
			"read_file":   {ReadOnly: true, Idempotent: true},
			"list_files":  {ReadOnly: true, Idempotent: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("network %v: annotations (-want +got):\n%s", network, diff)
		}
	}
}

func TestNewErrors(t *testing.T) {
	needBwrap(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := newWorkspace(t)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  sandbox.Config
		want string
	}{
		{"no workspace", sandbox.Config{}, "Workspace is not set"},
		{"missing workspace", sandbox.Config{Workspace: filepath.Join(dir, "missing")}, "no such file"},
		{"file workspace", sandbox.Config{Workspace: file}, "is not a directory"},
		{"symlink workspace", sandbox.Config{Workspace: link}, "is a symbolic link; give the directory it leads to"},
		{"unknown backend", sandbox.Config{Workspace: ws, Backend: "chroot"}, `backend "chroot" is unknown`},
		{"timeout above max", sandbox.Config{Workspace: ws, Timeout: time.Hour}, "longer than MaxTimeout"},
		{"bad env name", sandbox.Config{Workspace: ws, Env: map[string]string{"A=B": "x"}}, `Env name "A=B" is not a valid variable name`},
		{"tiny memory", sandbox.Config{Workspace: ws, Memory: 1024}, "Memory is 1024 bytes"},
		{"one process", sandbox.Config{Workspace: ws, MaxProcesses: 1}, "MaxProcesses is 1"},
		{"docker", sandbox.Config{Workspace: ws, Backend: "docker"}, "docker"},
	}
	if os.Geteuid() == 0 {
		tests = append(tests, struct {
			name string
			cfg  sandbox.Config
			want string
		}{"root-owned workspace", sandbox.Config{Workspace: dir}, "belongs to root"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sandbox.NewToolDriver(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewToolDriver error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMissingBackend(t *testing.T) {
	ws := newWorkspace(t)
	t.Setenv("PATH", t.TempDir())
	tests := []struct{ backend, want string }{
		{"bwrap", "install it (Debian and Ubuntu: apt-get install bubblewrap"},
		{"runsc", "gVisor (runsc) is not installed"},
	}
	for _, tc := range tests {
		if _, err := sandbox.NewToolDriver(sandbox.Config{Workspace: ws, Backend: tc.backend}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("backend %s: error = %v, want it to contain %q", tc.backend, err, tc.want)
		}
	}
}
