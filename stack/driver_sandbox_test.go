package stack

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

func TestSandboxParseErrors(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string
	}{
		{
			name: "no workspace",
			file: "[[driver]]\nlabel = \"sh\"\ntype = \"sandbox\"\n",
			want: []string{`s.toml:1: [[driver]] "sh": has no workspace; add workspace = "./work" (the directory commands may write to)`},
		},
		{
			name: "bad values",
			file: "[[driver]]\nlabel = \"sh\"\ntype = \"sandbox\"\nworkspace = \"w\"\nbackend = \"chroot\"\nmemory = 10\nimage = \"debian\"\ntimeout = \"soon\"\nmax_disk = 1000\n",
			want: []string{
				`s.toml:5: [[driver]] "sh", key "backend": is "chroot"; use "bwrap" (the default), "runsc" or "docker"`,
				`s.toml:6: [[driver]] "sh", key "memory": is 10; use a value from 16777216 to 1099511627776`,
				`s.toml:7: [[driver]] "sh", key "image": is for the docker backend only; set backend = "docker" or remove image`,
				`s.toml:8: [[driver]] "sh", key "timeout": "soon" is not a duration; write one such as "30s" or "2m"`,
				`s.toml:9: [[driver]] "sh", key "max_disk": is 1000; use a value from 1048576 to 1125899906842624`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.toml", []byte(tc.file))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if diff := cmp.Diff(tc.want, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSandboxBuild(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed; apt-get install bubblewrap to run this test")
	}
	dir, err := os.MkdirTemp("", "mcs-stack-sandbox")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(work, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "stack.toml")
	file := "[[driver]]\nlabel = \"sh\"\ntype = \"sandbox\"\nworkspace = \"work\"\ntimeout = \"10s\"\nmax_disk = 2097152\nenv = {GREETING = \"hello\"}\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	td, ok := d.(mcs.ToolDriver)
	if !ok {
		t.Fatalf("built a %T, want a tool driver", d)
	}
	res, err := td.ExecuteTool(context.Background(), "run_command", map[string]any{"command": "echo $GREETING > out.txt; cat out.txt"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if got := string(b); got != `{"exit_code":0,"stdout":"hello\n","stderr":"","timed_out":false,"truncated":false}` {
		t.Errorf("run_command = %s", got)
	}
	// max_disk reaches the driver: write_file refuses more.
	_, err = td.ExecuteTool(context.Background(), "write_file", map[string]any{"path": "big", "content": strings.Repeat("x", 2<<20+1)})
	if err == nil || !strings.Contains(err.Error(), "more than the 2.0 MiB a call may add") {
		t.Errorf("write_file over max_disk: %v", err)
	}
}

func TestSandboxEffects(t *testing.T) {
	s, err := Parse("/srv/s.toml", []byte("[[driver]]\nlabel = \"sh\"\ntype = \"sandbox\"\nworkspace = \"work\"\nenv = {B = \"1\", A = \"2\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Effect{
		{Kind: EffectProcess, Table: `[[driver]] "sh"`, Line: 1, Command: []string{"bwrap", "/bin/sh", "-c", "<the model's commands>"}, Path: "/srv/work", Env: []string{"A", "B"}},
		{Kind: EffectWrite, Table: `[[driver]] "sh"`, Line: 1, Path: "/srv/work"},
	}
	if diff := cmp.Diff(want, s.Effects()); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
}
