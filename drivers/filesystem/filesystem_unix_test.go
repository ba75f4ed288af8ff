//go:build unix

package filesystem_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
)

// TestNamedPipe calls the reading tools on a named pipe: each answers at once
// (opening a pipe for reading would otherwise wait for a writer).
func TestNamedPipe(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	td := drivertest.Open(t, filesystem.NewToolDriver, filesystem.Config{Root: dir})
	want := map[string]any{"path": "pipe", "error": "not a directory", "hint": "call read_file or file_info for a file"}
	if diff := cmp.Diff(want, drivertest.MustCall(t, td, "list_directory", map[string]any{"path": "pipe"})); diff != "" {
		t.Errorf("list_directory (-want +got):\n%s", diff)
	}
	drivertest.Expect(t, td, "read_file", map[string]any{"path": "pipe"}, nil, "not a regular file")
	got := drivertest.MustCall(t, td, "file_info", map[string]any{"path": "pipe"})
	if got["type"] != "other" {
		t.Errorf("file_info(pipe) = %v, want the type other", got)
	}
}

// TestWriteFileUmask writes new files under a strict umask: they are not made
// readable by others, while an existing file keeps its permissions exactly.
func TestWriteFileUmask(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"old.txt": "old"})
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o664); err != nil {
		t.Fatal(err)
	}
	td := drivertest.Open(t, filesystem.NewToolDriver, filesystem.Config{Root: dir})
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, p := range []string{"new.txt", "old.txt"} {
		drivertest.MustCall(t, td, "write_file", map[string]any{"path": p, "content": "x"})
	}
	for p, want := range map[string]fs.FileMode{"new.txt": 0o600, "old.txt": 0o664} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", p, got, want)
		}
	}
}
