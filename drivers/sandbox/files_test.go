package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/internal/drivertest"
)

func TestFileTools(t *testing.T) {
	ws := newWorkspace(t)
	td := newTD(t, sandbox.Config{Workspace: ws, MaxOutputBytes: 256})
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{"write text", "write_file", map[string]any{"path": "src/a/main.sh", "content": "echo hi\n"},
			map[string]any{"path": "src/a/main.sh", "bytes_written": 8.0, "created": true}, ""},
		{"overwrite", "write_file", map[string]any{"path": "src/a/main.sh", "content": "echo hello\n"},
			map[string]any{"path": "src/a/main.sh", "bytes_written": 11.0, "created": false}, ""},
		{"write base64", "write_file", map[string]any{"path": "bin.dat", "content": "AAEC/w==", "encoding": "base64"},
			map[string]any{"path": "bin.dat", "bytes_written": 4.0, "created": true}, ""},
		{"read text", "read_file", map[string]any{"path": "src/a/main.sh"},
			map[string]any{"path": "src/a/main.sh", "size": 11.0, "encoding": "utf-8", "content": "echo hello\n", "truncated": false}, ""},
		{"read binary", "read_file", map[string]any{"path": "bin.dat"},
			map[string]any{"path": "bin.dat", "size": 4.0, "encoding": "base64", "content": "AAEC/w==", "truncated": false}, ""},
		{"read cut", "read_file", map[string]any{"path": "src/a/main.sh", "max_bytes": 4},
			map[string]any{"path": "src/a/main.sh", "size": 11.0, "encoding": "utf-8", "content": "echo", "truncated": true,
				"notice": "only the first 4 of 11 bytes are shown; run a command such as tail or sed to read further"}, ""},
		{"read missing", "read_file", map[string]any{"path": "nope.txt"},
			map[string]any{"path": "nope.txt", "error": "not found", "hint": "call list_files to see what exists"}, ""},
		{"read directory", "read_file", map[string]any{"path": "src"},
			map[string]any{"path": "src", "error": "is a directory", "hint": "call list_files to see its entries"}, ""},
		{"list", "list_files", map[string]any{},
			map[string]any{"path": ".", "count": 2.0, "entries": []any{
				map[string]any{"name": "bin.dat", "type": "file", "size": 4.0},
				map[string]any{"name": "src", "type": "directory"},
			}}, ""},
		{"list a file", "list_files", map[string]any{"path": "bin.dat"},
			map[string]any{"path": "bin.dat", "error": "not a directory", "hint": "call read_file for a file"}, ""},
		{"write the workspace itself", "write_file", map[string]any{"path": ".", "content": "x"}, nil, "refused"},
		{"write through a file", "write_file", map[string]any{"path": "bin.dat/x", "content": "x"}, nil, "a file is in the way"},
		{"bad base64", "write_file", map[string]any{"path": "x", "content": "!!", "encoding": "base64"}, nil, "not valid base64"},
		{"bad encoding", "write_file", map[string]any{"path": "x", "content": "x", "encoding": "latin1"}, nil, `encoding "latin1" is not supported`},
		{"empty command", "run_command", map[string]any{"command": "  "}, nil, "command is empty"},
		{"NUL in command", "run_command", map[string]any{"command": "echo \x00"}, nil, "NUL byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivertest.Expect(t, td, tc.tool, tc.args, tc.want, tc.wantErr)
		})
	}
	// The command sees what the tools wrote, and may change it.
	if r := run(t, td, "sh src/a/main.sh && echo more >> src/a/main.sh && mkdir -p src/b", nil); r.ExitCode != 0 || r.Stdout != "hello\n" {
		t.Errorf("run = %+v", r)
	}
	b, err := os.ReadFile(filepath.Join(ws, "src/a/main.sh"))
	if diff := cmp.Diff("echo hello\nmore\n", string(b)); err != nil || diff != "" {
		t.Errorf("file after the command (-want +got):\n%s%v", diff, err)
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{"src", "src/a", "src/a/main.sh", "bin.dat"} {
			fi, err := os.Lstat(filepath.Join(ws, p))
			if err != nil {
				t.Fatal(err)
			}
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 || st.Gid != 65534 {
				t.Errorf("%s belongs to %d:%d, want the workspace's owner 65534:65534", p, st.Uid, st.Gid)
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Join(ws, "src/a"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".mcs-write") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
