package ssh_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/internal/filetools/filetoolstest"
	"github.com/mcs-go/mcs/internal/sshtest"
)

func sftpConfig(srv *sshtest.Server, root string) ssh.SFTPConfig {
	return ssh.SFTPConfig{Conn: ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password}, Root: root, AllowDelete: true}
}

// The confinement suite of the filesystem driver, over SFTP.
func TestSFTPEscapeSuite(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	env := confinetest.New(t)
	td := drivertest.Open(t, ssh.NewSFTPToolDriver, sftpConfig(srv, env.Root))
	filetoolstest.RunEscapes(t, env, td)
}

func TestSFTPSwappedDirectoryBetweenCalls(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	env := confinetest.New(t)
	d := drivertest.OpenDriver(t, ssh.NewSFTP, sftpConfig(srv, env.Root))
	filetoolstest.RunSwap(t, env, d)
}

func TestSFTPNoAbsolutePathsInResults(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	env := confinetest.New(t)
	td := drivertest.Open(t, ssh.NewSFTPToolDriver, sftpConfig(srv, env.Root))
	filetoolstest.RunNoAbsolutePaths(t, env, td)
}

func TestSFTPTools(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	root := confinetest.Tree(t, map[string]string{"notes.txt": "hello\n", "sub/a.csv": "a,b\n", "full/x": "x"})
	cfg := sftpConfig(srv, root)
	cfg.MaxReadBytes = 8
	td := drivertest.Open(t, ssh.NewSFTPToolDriver, cfg)
	tests := []struct {
		name, tool string
		args       map[string]any
		want       map[string]any
		wantErr    string
	}{
		{"read", "read_file", map[string]any{"path": "notes.txt"},
			map[string]any{"path": "notes.txt", "size": 6.0, "encoding": "utf-8", "offset": 0.0, "content": "hello\n", "truncated": false}, ""},
		{"write new", "write_file", map[string]any{"path": "new/deep/file.txt", "content": "0123456789"},
			map[string]any{"path": "new/deep/file.txt", "bytes_written": 10.0, "created": true}, ""},
		{"overwrite", "write_file", map[string]any{"path": "notes.txt", "content": "bye\n"},
			map[string]any{"path": "notes.txt", "bytes_written": 4.0, "created": false}, ""},
		{"read capped", "read_file", map[string]any{"path": "new/deep/file.txt"},
			map[string]any{"path": "new/deep/file.txt", "size": 10.0, "encoding": "utf-8", "offset": 0.0, "content": "01234567", "truncated": true, "next_offset": 8.0,
				"notice": "[cut: bytes 0 to 8 of 10 shown; call read_file with offset 8 to read on]"}, ""},
		{"list", "list_directory", map[string]any{"path": "sub"},
			map[string]any{"path": "sub", "count": 1.0, "entries": []any{map[string]any{"name": "a.csv", "type": "file", "size": 4.0}}}, ""},
		{"search", "search_files", map[string]any{"pattern": "**/*.txt"},
			map[string]any{"path": ".", "pattern": "**/*.txt", "count": 2.0, "truncated": false, "matches": []any{
				map[string]any{"path": "new/deep/file.txt", "type": "file", "size": 10.0},
				map[string]any{"path": "notes.txt", "type": "file", "size": 4.0},
			}}, ""},
		{"make directory", "make_directory", map[string]any{"path": "made"}, map[string]any{"path": "made", "created": true}, ""},
		{"move", "move_file", map[string]any{"from": "sub/a.csv", "to": "made/b.csv"}, map[string]any{"from": "sub/a.csv", "to": "made/b.csv", "moved": true}, ""},
		{"delete", "delete_file", map[string]any{"path": "made/b.csv"}, map[string]any{"path": "made/b.csv", "deleted": true, "type": "file"}, ""},
		{"delete a full directory", "delete_file", map[string]any{"path": "full"}, nil, `directory "full" is not empty`},
		{"missing", "read_file", map[string]any{"path": "nope"},
			map[string]any{"path": "nope", "error": "not found", "hint": "call list_directory on the parent directory to see what exists"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivertest.Expect(t, td, tc.tool, tc.args, tc.want, tc.wantErr)
		})
	}
	got, err := os.ReadFile(filepath.Join(root, "notes.txt"))
	if err != nil || string(got) != "bye\n" {
		t.Errorf("notes.txt on the host = %q, %v", got, err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".mcs-write") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestSFTPReadOnly(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	root := confinetest.Tree(t, map[string]string{"notes.txt": "hello\n"})
	cfg := sftpConfig(srv, root)
	cfg.ReadOnly = true
	td := drivertest.Open(t, ssh.NewSFTPToolDriver, cfg)
	drivertest.CheckTools(t, td, []string{"list_directory", "read_file", "search_files", "file_info"})
	_, err := td.ExecuteTool(context.Background(), "write_file", map[string]any{"path": "x", "content": "y"})
	if err == nil || !strings.Contains(err.Error(), "not available: the file system is read-only") {
		t.Errorf("write_file on a read-only root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
		t.Error("a read-only driver wrote a file")
	}
}

func TestSFTPMeta(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := sftpConfig(srv, t.TempDir())
	td := drivertest.Open(t, ssh.NewSFTPToolDriver, cfg)
	d := drivertest.OpenDriver(t, ssh.NewSFTP, cfg)
	drivertest.CheckMeta(t, td, d, mcs.Meta{
		ID: "mcs-go/sftp", Name: "SFTP", Version: "0.1.0",
		Bindings: []mcs.Binding{{Capability: "filesystem", Adapter: "sftp", SpecFormat: "builtin"}},
	})
}

func TestSFTPErrors(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, root, want string
		atNew            bool
	}{
		{"relative root", "data", `Root "data" is not an absolute path`, true},
		{"missing root", "/nonexistent/dir", "the root directory \"/nonexistent/dir\"", false},
		{"file root", file, "is not a directory", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td, err := ssh.NewSFTPToolDriver(sftpConfig(srv, tc.root))
			if tc.atNew {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer td.Close()
			_, err = td.ExecuteTool(context.Background(), "list_directory", map[string]any{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSFTPConcurrentCalls(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	root := confinetest.Tree(t, map[string]string{"a.txt": "a"})
	td := drivertest.Open(t, ssh.NewSFTPToolDriver, sftpConfig(srv, root))
	drivertest.RunConcurrently(t, td, 6, func(i int) []drivertest.ToolCall {
		name := "w" + string(rune('0'+i)) + "/f.txt"
		return []drivertest.ToolCall{
			{Tool: "write_file", Args: map[string]any{"path": name, "content": name}},
			{Tool: "read_file", Args: map[string]any{"path": name}},
			{Tool: "list_directory", Args: map[string]any{"path": "."}},
			{Tool: "move_file", Args: map[string]any{"from": name, "to": name + ".moved"}},
			{Tool: "delete_file", Args: map[string]any{"path": name + ".moved"}},
		}
	})
	if diff := cmp.Diff("a", readFile(t, filepath.Join(root, "a.txt"))); diff != "" {
		t.Error(diff)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
