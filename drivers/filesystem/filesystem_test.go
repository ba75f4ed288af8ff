package filesystem_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/internal/filetools/filetoolstest"
)

func newTD(t *testing.T, cfg filesystem.Config) *filesystem.ToolDriver {
	t.Helper()
	return drivertest.Open(t, filesystem.NewToolDriver, cfg)
}

func readHost(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewErrors(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"f": "x"})
	tests := []struct {
		name string
		cfg  filesystem.Config
		want string
	}{
		{"no root", filesystem.Config{}, "root directory is not set"},
		{"missing root", filesystem.Config{Root: filepath.Join(dir, "missing")}, "no such file"},
		{"file root", filesystem.Config{Root: filepath.Join(dir, "f")}, "not a directory"},
		{"negative limit", filesystem.Config{Root: dir, MaxReadBytes: -1}, "MaxReadBytes is -1; set at least 8"},
		{"tiny limit", filesystem.Config{Root: dir, MaxReadBytes: 7}, "MaxReadBytes is 7; set at least 8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := filesystem.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMeta(t *testing.T) {
	cfg := filesystem.Config{Root: t.TempDir()}
	drivertest.CheckMeta(t, newTD(t, cfg), drivertest.OpenDriver(t, filesystem.New, cfg), mcs.Meta{
		ID:       "mcs-go/filesystem",
		Name:     "Filesystem",
		Version:  "0.1.0",
		Bindings: []mcs.Binding{{Capability: "filesystem", Adapter: "os", SpecFormat: "builtin"}},
	})
}

func TestListTools(t *testing.T) {
	readers := []string{"list_directory", "read_file", "search_files", "file_info"}
	writers := []string{"write_file", "make_directory", "move_file"}
	tests := []struct {
		name string
		cfg  filesystem.Config
		want []string
	}{
		{"default", filesystem.Config{}, slices.Concat(readers, writers)},
		{"allow delete", filesystem.Config{AllowDelete: true}, slices.Concat(readers, writers, []string{"delete_file"})},
		{"read-only", filesystem.Config{ReadOnly: true}, readers},
		{"read-only wins over delete", filesystem.Config{ReadOnly: true, AllowDelete: true}, readers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Root = t.TempDir()
			td := newTD(t, tc.cfg)
			drivertest.CheckTools(t, td, tc.want)
			if has, _ := td.HasTool(context.Background(), "delete_file"); has != slices.Contains(tc.want, "delete_file") {
				t.Errorf("HasTool(delete_file) = %t", has)
			}
		})
	}
}

func TestDisabledAndUnknownTools(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"notes.txt": "keep"})
	ro := newTD(t, filesystem.Config{Root: dir, ReadOnly: true, AllowDelete: true})
	rw := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		name string
		td   *filesystem.ToolDriver
		tool string
		args map[string]any
		want string
	}{
		{"write read-only", ro, "write_file", map[string]any{"path": "new.txt", "content": "x"}, "read-only; only list_directory, read_file, search_files, file_info can be used"},
		{"mkdir read-only", ro, "make_directory", map[string]any{"path": "d"}, "read-only"},
		{"move read-only", ro, "move_file", map[string]any{"from": "notes.txt", "to": "x.txt"}, "read-only"},
		{"delete read-only", ro, "delete_file", map[string]any{"path": "notes.txt"}, "read-only"},
		{"delete not allowed", rw, "delete_file", map[string]any{"path": "notes.txt"}, "deleting files is not enabled"},
		{"unknown", rw, "rm_rf", nil, `unknown tool "rm_rf"; the tools are: list_directory, read_file, search_files, file_info, write_file, make_directory, move_file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivertest.Expect(t, tc.td, tc.tool, tc.args, nil, tc.want)
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || readHost(t, filepath.Join(dir, "notes.txt")) != "keep" {
		t.Errorf("a refused tool changed the tree: %v", entries)
	}
}

func TestArguments(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"notes.txt": "0123456789"})
	td := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr string
		content string
	}{
		{name: "missing path", tool: "read_file", args: map[string]any{}, wantErr: `read_file: invalid arguments: /path: missing required argument (want string)`},
		{name: "null path", tool: "read_file", args: map[string]any{"path": nil}, wantErr: `/path: missing required argument`},
		{name: "unknown", tool: "read_file", args: map[string]any{"path": "notes.txt", "file": "x", "bogus": 1}, wantErr: `/bogus: unknown argument; the parameters are "path", "encoding", "offset"; /file: unknown argument`},
		{name: "path number", tool: "read_file", args: map[string]any{"path": 12.0}, wantErr: `/path: want string, got number 12`},
		{name: "path object", tool: "read_file", args: map[string]any{"path": map[string]any{}}, wantErr: `/path: want string, got object`},
		{name: "offset text", tool: "read_file", args: map[string]any{"path": "notes.txt", "offset": "abc"}, wantErr: `/offset: want integer, got string "abc"`},
		{name: "offset fraction", tool: "read_file", args: map[string]any{"path": "notes.txt", "offset": 1.5}, wantErr: `/offset: want integer, got number 1.5 (not a whole number)`},
		{name: "offset negative", tool: "read_file", args: map[string]any{"path": "notes.txt", "offset": -1.0}, wantErr: `/offset: want integer >= 0, got number -1`},
		{name: "offset quoted", tool: "read_file", args: map[string]any{"path": "notes.txt", "offset": "7"}, content: "789"},
		{name: "offset number", tool: "read_file", args: map[string]any{"path": "notes.txt", "offset": 8.0}, content: "89"},
		{name: "null optional", tool: "read_file", args: map[string]any{"path": "notes.txt", "encoding": nil, "offset": nil}, content: "0123456789"},
		{name: "bad encoding", tool: "read_file", args: map[string]any{"path": "notes.txt", "encoding": "latin1"}, wantErr: `encoding "latin1" is not supported; use "utf-8" or "base64"`},
		{name: "encoding alias", tool: "read_file", args: map[string]any{"path": "notes.txt", "encoding": "UTF8"}, content: "0123456789"},
		{name: "missing pattern", tool: "search_files", args: map[string]any{"path": "."}, wantErr: `/pattern: missing required argument`},
		{name: "missing content", tool: "write_file", args: map[string]any{"path": "x"}, wantErr: `/content: missing required argument`},
		{name: "move missing to", tool: "move_file", args: map[string]any{"from": "notes.txt"}, wantErr: `move_file: invalid arguments: /to: missing required argument (want string)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := drivertest.Call(t, td, tc.tool, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				if err != nil && !strings.HasPrefix(err.Error(), tc.tool+": ") && !strings.HasPrefix(err.Error(), fmt.Sprintf("invalid arguments for %q: ", tc.tool)) {
					t.Errorf("error %q does not start with the tool name", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res["content"] != tc.content {
				t.Errorf("content = %v, want %q", res["content"], tc.content)
			}
		})
	}
}

func TestListDirectory(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"b.txt":       "bb",
		"a.txt":       "a",
		"Z.md":        "",
		"sub/c.txt":   "ccc",
		"empty/":      "",
		"ünïcode.txt": "u",
	})
	confinetest.Symlink(t, dir, "link", "a.txt")
	confinetest.Symlink(t, dir, "dangling", "gone.txt")
	confinetest.Symlink(t, dir, "out", filepath.Join(t.TempDir(), "x"))
	td := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		name string
		args map[string]any
		want map[string]any
	}{
		{"root", map[string]any{}, map[string]any{
			"path":  ".",
			"count": 9.0,
			"entries": []any{
				map[string]any{"name": "Z.md", "type": "file", "size": 0.0},
				map[string]any{"name": "a.txt", "type": "file", "size": 1.0},
				map[string]any{"name": "b.txt", "type": "file", "size": 2.0},
				map[string]any{"name": "dangling", "type": "symlink", "target": "gone.txt", "note": "link target missing"},
				map[string]any{"name": "empty", "type": "directory"},
				map[string]any{"name": "link", "type": "symlink", "target": "a.txt"},
				map[string]any{"name": "out", "type": "symlink", "note": "link target refused: symlink"},
				map[string]any{"name": "sub", "type": "directory"},
				map[string]any{"name": "ünïcode.txt", "type": "file", "size": 1.0},
			},
		}},
		{"sub", map[string]any{"path": "sub/"}, map[string]any{
			"path": "sub", "count": 1.0,
			"entries": []any{map[string]any{"name": "c.txt", "type": "file", "size": 3.0}},
		}},
		{"empty", map[string]any{"path": "./empty"}, map[string]any{"path": "empty", "count": 0.0, "entries": []any{}}},
		{"not found", map[string]any{"path": "nope"}, map[string]any{"path": "nope", "error": "not found", "hint": "call list_directory on the parent directory to see what exists"}},
		{"file", map[string]any{"path": "a.txt"}, map[string]any{"path": "a.txt", "error": "not a directory", "hint": "call read_file or file_info for a file"}},
		{"below a file", map[string]any{"path": "a.txt/x"}, map[string]any{"path": "a.txt/x", "error": "not a directory", "hint": "an element of the path is a file, not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := drivertest.MustCall(t, td, "list_directory", tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("list_directory (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListDirectoryTruncates(t *testing.T) {
	dir := t.TempDir()
	const n = 260 // more than one batch of directory entries
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", n-1-i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	td := newTD(t, filesystem.Config{Root: dir})
	filesystem.SetLimits(td, 10, 1000, 100_000)
	got := drivertest.MustCall(t, td, "list_directory", map[string]any{"path": "."})
	entries := got["entries"].([]any)
	if len(entries) != 10 || got["count"] != float64(n) || got["truncated"] != true {
		t.Fatalf("got %d entries, count %v, truncated %v", len(entries), got["count"], got["truncated"])
	}
	first, last := entries[0].(map[string]any)["name"], entries[9].(map[string]any)["name"]
	if first != "f0000" || last != "f0009" {
		t.Errorf("entries run from %v to %v, want f0000 to f0009", first, last)
	}
	if !strings.Contains(got["notice"].(string), "first 10 of 260") {
		t.Errorf("notice = %v", got["notice"])
	}
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("abcdefghij", 3) // 30 bytes
	dir := confinetest.Tree(t, map[string]string{
		"text.txt":    "hello\nworld\n",
		"empty.txt":   "",
		"unicode.txt": "héllo wörld ✓",
		"crlf.txt":    "a\r\nb\r\n",
		"bin.dat":     "\x00\x01\x02binary",
		"latin1.txt":  "caf\xe9",
		"long.txt":    long,
		"euro.txt":    "€€€€€", // 15 bytes, 3 per rune
		"sub/":        "",
	})
	confinetest.Symlink(t, dir, "link", "text.txt")
	td := newTD(t, filesystem.Config{Root: dir, MaxReadBytes: 10})
	text := func(path, content string, size, offset float64) map[string]any {
		return map[string]any{"path": path, "size": size, "encoding": "utf-8", "offset": offset, "content": content, "truncated": false}
	}
	cut := func(m map[string]any, next float64) map[string]any {
		m["truncated"] = true
		m["next_offset"] = next
		m["notice"] = fmt.Sprintf("[cut: bytes %v to %v of %v shown; call read_file with offset %v to read on]", m["offset"], next, m["size"], next)
		return m
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{name: "text cut", args: map[string]any{"path": "text.txt"}, want: cut(text("text.txt", "hello\nworl", 12, 0), 10)},
		{name: "text rest", args: map[string]any{"path": "text.txt", "offset": 10.0}, want: text("text.txt", "d\n", 12, 10)},
		{name: "at end", args: map[string]any{"path": "text.txt", "offset": 12.0}, want: text("text.txt", "", 12, 12)},
		{name: "past end", args: map[string]any{"path": "text.txt", "offset": 13.0}, wantErr: `offset 13 is past the end of "text.txt", which has 12 bytes`},
		{name: "empty", args: map[string]any{"path": "empty.txt"}, want: text("empty.txt", "", 0, 0)},
		{name: "crlf kept", args: map[string]any{"path": "crlf.txt"}, want: text("crlf.txt", "a\r\nb\r\n", 6, 0)},
		{name: "cut before a partial rune", args: map[string]any{"path": "unicode.txt"}, want: cut(text("unicode.txt", "héllo wö", 17, 0), 10)},
		{name: "euro cut", args: map[string]any{"path": "euro.txt"}, want: cut(text("euro.txt", "€€€", 15, 0), 9)},
		{name: "offset inside a rune", args: map[string]any{"path": "euro.txt", "offset": 10.0}, want: text("euro.txt", "€", 15, 12)},
		{name: "binary", args: map[string]any{"path": "bin.dat"}, want: map[string]any{"path": "bin.dat", "size": 9.0, "binary": true, "hint": `this is a binary file of 9 bytes; call read_file with encoding "base64" to read its bytes`}},
		{name: "invalid utf-8", args: map[string]any{"path": "latin1.txt"}, want: map[string]any{"path": "latin1.txt", "size": 4.0, "binary": true, "hint": `this is a binary file of 4 bytes; call read_file with encoding "base64" to read its bytes`}},
		{name: "base64", args: map[string]any{"path": "bin.dat", "encoding": "base64"}, want: map[string]any{"path": "bin.dat", "size": 9.0, "encoding": "base64", "offset": 0.0, "content": base64.StdEncoding.EncodeToString([]byte("\x00\x01\x02binary")), "truncated": false}},
		{name: "base64 cut", args: map[string]any{"path": "long.txt", "encoding": "base64", "offset": 25.0}, want: map[string]any{"path": "long.txt", "size": 30.0, "encoding": "base64", "offset": 25.0, "content": base64.StdEncoding.EncodeToString([]byte("fghij")), "truncated": false}},
		{name: "through a link", args: map[string]any{"path": "link", "offset": 6.0}, want: text("link", "world\n", 12, 6)},
		{name: "directory", args: map[string]any{"path": "sub"}, want: map[string]any{"path": "sub", "error": "is a directory", "hint": "call list_directory to see its entries"}},
		{name: "not found", args: map[string]any{"path": "sub/missing.txt"}, want: map[string]any{"path": "sub/missing.txt", "error": "not found", "hint": "call list_directory on the parent directory to see what exists"}},
		{name: "not a directory", args: map[string]any{"path": "text.txt/x"}, want: map[string]any{"path": "text.txt/x", "error": "not a directory", "hint": "an element of the path is a file, not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivertest.Expect(t, td, "read_file", tc.args, tc.want, tc.wantErr)
		})
	}
}

func TestReadFileInChunks(t *testing.T) {
	content := strings.Repeat("añb€c✓😀", 50)
	dir := confinetest.Tree(t, map[string]string{"f.txt": content})
	td := newTD(t, filesystem.Config{Root: dir, MaxReadBytes: filesystem.MinReadBytes})
	var b strings.Builder
	offset := 0.0
	for i := 0; ; i++ {
		if i > len(content) {
			t.Fatal("reading does not progress")
		}
		got := drivertest.MustCall(t, td, "read_file", map[string]any{"path": "f.txt", "offset": offset})
		b.WriteString(got["content"].(string))
		if got["truncated"] != true {
			break
		}
		offset = got["next_offset"].(float64)
	}
	if b.String() != content {
		t.Errorf("chunks joined to %q, want %q", b.String(), content)
	}
}

func TestWriteFile(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"old.txt": "old", "sub/": "", "file": "f"})
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	confinetest.Symlink(t, dir, "link", "old.txt")
	td := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		name     string
		args     map[string]any
		want     map[string]any
		wantErr  string
		file     string // host path relative to dir
		wantData string
	}{
		{name: "new with parents", args: map[string]any{"path": "a/b/c.txt", "content": "héllo"}, want: map[string]any{"path": "a/b/c.txt", "bytes_written": 6.0, "created": true}, file: "a/b/c.txt", wantData: "héllo"},
		{name: "overwrite", args: map[string]any{"path": "old.txt", "content": "new"}, want: map[string]any{"path": "old.txt", "bytes_written": 3.0, "created": false}, file: "old.txt", wantData: "new"},
		{name: "empty", args: map[string]any{"path": "sub/empty.txt", "content": ""}, want: map[string]any{"path": "sub/empty.txt", "bytes_written": 0.0, "created": true}, file: "sub/empty.txt", wantData: ""},
		{name: "base64", args: map[string]any{"path": "bin", "content": "AAEC/w==", "encoding": "base64"}, want: map[string]any{"path": "bin", "bytes_written": 4.0, "created": true}, file: "bin", wantData: "\x00\x01\x02\xff"},
		{name: "base64 unpadded", args: map[string]any{"path": "bin2", "content": "AAEC/w", "encoding": "base64"}, want: map[string]any{"path": "bin2", "bytes_written": 4.0, "created": true}, file: "bin2", wantData: "\x00\x01\x02\xff"},
		{name: "absolute inside", args: map[string]any{"path": filepath.ToSlash(filepath.Join(dir, "abs.txt")), "content": "x"}, want: map[string]any{"path": "abs.txt", "bytes_written": 1.0, "created": true}, file: "abs.txt", wantData: "x"},
		{name: "invalid base64", args: map[string]any{"path": "bad", "content": "!!!", "encoding": "base64"}, wantErr: "content is not valid base64"},
		{name: "directory", args: map[string]any{"path": "sub", "content": "x"}, wantErr: `"sub" is a directory; write to a file path inside it`},
		{name: "root", args: map[string]any{"path": ".", "content": "x"}, wantErr: "names the root directory itself"},
		{name: "file in the way", args: map[string]any{"path": "file/x.txt", "content": "x"}, wantErr: `cannot create directory "file": a file is in the way`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := drivertest.Expect(t, td, "write_file", tc.args, tc.want, tc.wantErr); !ok {
				return
			}
			if data := readHost(t, filepath.Join(dir, filepath.FromSlash(tc.file))); data != tc.wantData {
				t.Errorf("file holds %q, want %q", data, tc.wantData)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(dir, "old.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("overwritten file mode = %v, %v; want the old -rw-------", fi.Mode(), err)
	}

	// A link inside the root is written through; the link stays a link.
	drivertest.MustCall(t, td, "write_file", map[string]any{"path": "link", "content": "via link"})
	if got := readHost(t, filepath.Join(dir, "old.txt")); got != "via link" {
		t.Errorf("write through a link: target holds %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}

	// No temporary file is left behind, successful or not.
	err := filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(de.Name(), ".mcs-write-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteFileAtomic reads a file while it is rewritten: every read sees one
// whole version, never a mix or a truncated file.
func TestWriteFileAtomic(t *testing.T) {
	versions := []string{strings.Repeat("A", 64<<10), strings.Repeat("B", 64<<10)}
	dir := confinetest.Tree(t, map[string]string{"f.txt": versions[0]})
	td := newTD(t, filesystem.Config{Root: dir})
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := range 40 {
			if _, err := td.ExecuteTool(context.Background(), "write_file", map[string]any{"path": "f.txt", "content": versions[i%2]}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	// The writer keeps running until done: errors are reported, not fatal, so that
	// the test never ends (and closes the driver) under it.
	reads, failed := 0, false
	for !failed {
		select {
		case <-done:
			wg.Wait()
			if reads == 0 {
				t.Error("no read ran")
			}
			return
		default:
		}
		b, err := os.ReadFile(filepath.Join(dir, "f.txt"))
		switch s := string(b); {
		case err != nil:
			t.Error(err)
			failed = true
		case s != versions[0] && s != versions[1]:
			t.Errorf("read a partial file of %d bytes", len(b))
			failed = true
		}
		reads++
	}
	wg.Wait()
}

func TestSearchFiles(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"a.txt":           "a",
		"b.md":            "b",
		"docs/c.txt":      "cc",
		"docs/deep/d.txt": "ddd",
		"docs/deep/e.md":  "e",
		"src/main.go":     "go",
		"src/x/y/z.go":    "go",
		"txt/":            "",
	})
	outside := confinetest.Tree(t, map[string]string{"hidden.txt": "secret"})
	confinetest.Symlink(t, dir, "out", outside)
	td := newTD(t, filesystem.Config{Root: dir})
	paths := func(res map[string]any) []string {
		var out []string
		for _, m := range res["matches"].([]any) {
			out = append(out, m.(map[string]any)["path"].(string))
		}
		return out
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    []string
		wantErr string
	}{
		{name: "name at any depth", args: map[string]any{"pattern": "*.txt"}, want: []string{"a.txt", "docs/c.txt", "docs/deep/d.txt"}},
		{name: "in a directory", args: map[string]any{"path": "docs", "pattern": "*.md"}, want: []string{"docs/deep/e.md"}},
		{name: "double star", args: map[string]any{"pattern": "src/**/*.go"}, want: []string{"src/main.go", "src/x/y/z.go"}},
		{name: "anchored", args: map[string]any{"pattern": "docs/*.txt"}, want: []string{"docs/c.txt"}},
		{name: "directory name", args: map[string]any{"pattern": "deep"}, want: []string{"docs/deep"}},
		{name: "class", args: map[string]any{"pattern": "[ab].*"}, want: []string{"a.txt", "b.md"}},
		{name: "relative to path", args: map[string]any{"path": "src", "pattern": "x/**"}, want: []string{"src/x", "src/x/y", "src/x/y/z.go"}},
		{name: "link not followed", args: map[string]any{"pattern": "hidden.txt"}, want: nil},
		{name: "link listed as such", args: map[string]any{"pattern": "out"}, want: []string{"out"}},
		{name: "no match", args: map[string]any{"pattern": "*.pdf"}, want: nil},
		{name: "bad pattern", args: map[string]any{"pattern": "[a-"}, wantErr: `pattern "[a-" is not a valid glob`},
		{name: "empty pattern", args: map[string]any{"pattern": " "}, wantErr: "pattern is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := drivertest.Expect(t, td, "search_files", tc.args, nil, tc.wantErr)
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, paths(got)); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
			if got["truncated"] != false || got["count"] != float64(len(tc.want)) {
				t.Errorf("truncated %v, count %v", got["truncated"], got["count"])
			}
		})
	}
	got := drivertest.MustCall(t, td, "search_files", map[string]any{"pattern": "z.go"})
	want := map[string]any{"path": ".", "pattern": "z.go", "count": 1.0, "truncated": false,
		"matches": []any{map[string]any{"path": "src/x/y/z.go", "type": "file", "size": 2.0}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("search_files (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ path, want string }{{"missing", "not found"}, {"a.txt", "not a directory"}} {
		got := drivertest.MustCall(t, td, "search_files", map[string]any{"path": tc.path, "pattern": "*"})
		if got["error"] != tc.want {
			t.Errorf("search_files in %q: %v, want error %q", tc.path, got, tc.want)
		}
	}
}

func TestSearchFilesTruncates(t *testing.T) {
	dir := t.TempDir()
	for i := range 6 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name            string
		results, visits int
		count           float64
		notice          string
	}{
		{"results", 5, 100, 5, "only the first 5 matches are listed"},
		{"visits", 100, 3, 3, "the search stopped after looking at 3 entries"},
		{"exactly at the limit", 6, 100, 6, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := newTD(t, filesystem.Config{Root: dir})
			filesystem.SetLimits(td, 1000, tc.results, tc.visits)
			got := drivertest.MustCall(t, td, "search_files", map[string]any{"pattern": "*.txt"})
			notice, _ := got["notice"].(string)
			if got["count"] != tc.count || got["truncated"] != (tc.notice != "") || !strings.Contains(notice, tc.notice) {
				t.Errorf("count %v, truncated %v, notice %q", got["count"], got["truncated"], notice)
			}
		})
	}
}

func TestFileInfo(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"f.txt": "four", "d/": ""})
	if err := os.Chmod(filepath.Join(dir, "f.txt"), 0o640); err != nil {
		t.Fatal(err)
	}
	confinetest.Symlink(t, dir, "link", "f.txt")
	td := newTD(t, filesystem.Config{Root: dir})
	drop := func(m map[string]any) map[string]any {
		if _, ok := m["modified"].(string); !ok && m["error"] == nil {
			t.Errorf("no modification time in %v", m)
		}
		delete(m, "modified")
		return m
	}
	tests := []struct {
		path string
		want map[string]any
	}{
		{"f.txt", map[string]any{"path": "f.txt", "type": "file", "size": 4.0, "mode": "-rw-r-----"}},
		{"d", map[string]any{"path": "d", "type": "directory", "mode": "-rwxr-xr-x"}},
		{".", map[string]any{"path": ".", "type": "directory", "mode": "-rwxr-xr-x"}},
		{"link", map[string]any{"path": "link", "type": "file", "size": 4.0, "mode": "-rw-r-----", "symlink": true, "target": "f.txt"}},
		{"nope", map[string]any{"path": "nope", "error": "not found", "hint": "call list_directory on the parent directory to see what exists"}},
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got := drop(drivertest.MustCall(t, td, "file_info", map[string]any{"path": tc.path}))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("file_info (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMakeDirectory(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"f": "x", "d/": ""})
	td := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		path    string
		want    map[string]any
		wantErr string
	}{
		{path: "a/b/c", want: map[string]any{"path": "a/b/c", "created": true}},
		{path: "d", want: map[string]any{"path": "d", "created": false}},
		{path: ".", want: map[string]any{"path": ".", "created": false}},
		{path: "f", wantErr: `"f" exists and is not a directory`},
		{path: "f/sub", wantErr: `cannot create directory "f/sub": a file is in the way`},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			if _, ok := drivertest.Expect(t, td, "make_directory", map[string]any{"path": tc.path}, tc.want, tc.wantErr); !ok {
				return
			}
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tc.path))); err != nil || !fi.IsDir() {
				t.Errorf("no directory at %q: %v", tc.path, err)
			}
		})
	}
}

func TestMoveFile(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"a.txt": "a", "b.txt": "b", "d/x.txt": "x"})
	confinetest.Symlink(t, dir, "link", "a.txt")
	td := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		name     string
		from, to string
		want     map[string]any
		wantErr  string
		exists   []string
		gone     []string
	}{
		{name: "rename", from: "a.txt", to: "c.txt", want: map[string]any{"from": "a.txt", "to": "c.txt", "moved": true}, exists: []string{"c.txt"}, gone: []string{"a.txt"}},
		{name: "into new directories", from: "c.txt", to: "n/m/c.txt", want: map[string]any{"from": "c.txt", "to": "n/m/c.txt", "moved": true}, exists: []string{"n/m/c.txt"}, gone: []string{"c.txt"}},
		{name: "directory", from: "d", to: "e", want: map[string]any{"from": "d", "to": "e", "moved": true}, exists: []string{"e/x.txt"}, gone: []string{"d"}},
		{name: "link itself", from: "link", to: "link2", want: map[string]any{"from": "link", "to": "link2", "moved": true}, exists: []string{"link2"}, gone: []string{"link"}},
		{name: "missing source", from: "nope", to: "x", want: map[string]any{"path": "nope", "error": "not found", "hint": "call list_directory on the parent directory to see what exists"}},
		{name: "destination exists", from: "b.txt", to: "e/x.txt", wantErr: `destination "e/x.txt" exists; choose another name, or delete it first`, exists: []string{"b.txt"}},
		{name: "into itself", from: "e", to: "e/sub", wantErr: `cannot move "e" into itself`},
		{name: "root", from: ".", to: "x", wantErr: "names the root directory itself"},
		{name: "onto root", from: "b.txt", to: "./", wantErr: "names the root directory itself"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivertest.Expect(t, td, "move_file", map[string]any{"from": tc.from, "to": tc.to}, tc.want, tc.wantErr)
			for _, p := range tc.exists {
				if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
			for _, p := range tc.gone {
				if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
					t.Errorf("%s still exists", p)
				}
			}
		})
	}
	if got := readHost(t, filepath.Join(dir, "n/m/c.txt")); got != "a" {
		t.Errorf("moved file holds %q", got)
	}
}

// TestMoveFileLinks moves symbolic links, alone and inside directories: a move
// after which a moved link would lead outside the root is refused and changes
// nothing.
func TestMoveFileLinks(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		limit    int // move entry limit; 0 keeps the default
		wantErr  string
		wantKind confine.Kind
		moved    []string // paths below to that must exist after a successful move
	}{
		{name: "link moved up one level escaping", from: "a/link", to: "link", wantKind: confine.KindMovedLink,
			wantErr: `path "a/link" refused: once moved, the symbolic link "a/link" would lead outside the root directory`},
		{name: "link moved up into a new directory escaping", from: "p/q/r/link", to: "n/link", wantKind: confine.KindMovedLink},
		{name: "link moved sideways", from: "a/link", to: "b/link"},
		{name: "link moved deeper still inside", from: "a/link", to: "p/q/link"},
		{name: "link renamed in place", from: "a/link", to: "a/link2"},
		{name: "absolute link inside the root", from: "abs", to: "deep/er/abs"},
		{name: "directory holding a link escaping after the move", from: "dir/inner", to: "inner", wantKind: confine.KindMovedLink,
			wantErr: `the symbolic link "dir/inner/sub/up" would lead outside the root directory`},
		{name: "directory whose links stay inside", from: "dir", to: "dir2", moved: []string{"inner/sub/up", "inner/sub/f.txt"}},
		{name: "directory moved deeper", from: "dir/inner", to: "x/y/inner", moved: []string{"sub/up"}},
		{name: "directory holding an absolute link outside", from: "ext", to: "ext2", wantKind: confine.KindSymlink,
			wantErr: `the symbolic link "ext/out" leads outside the root directory`},
		{name: "directory too large to check", from: "dir", to: "dir2", limit: 3,
			wantErr: `cannot move "dir": it holds more than 3 entries, too many to check that the symbolic links in it still lead inside the root once moved; nothing was moved`},
		{name: "directory exactly at the limit", from: "dir", to: "dir2", limit: 4, moved: []string{"inner/sub/up"}},
		{name: "plain file, limit irrelevant", from: "x.txt", to: "n/x.txt", limit: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := confinetest.Tree(t, map[string]string{"x.txt": "x", "a/": "", "b/": "", "p/q/r/": "", "dir/inner/sub/f.txt": "f", "ext/": ""})
			outside := filepath.Join(t.TempDir(), "outside.txt")
			if err := os.WriteFile(outside, []byte(confinetest.Secret), 0o644); err != nil {
				t.Fatal(err)
			}
			confinetest.Symlink(t, dir, "a/link", filepath.FromSlash("../x.txt"))
			confinetest.Symlink(t, dir, "p/q/r/link", filepath.FromSlash("../../../x.txt"))
			confinetest.Symlink(t, dir, "abs", filepath.Join(dir, "x.txt"))
			confinetest.Symlink(t, dir, "dir/inner/sub/up", filepath.FromSlash("../../../x.txt"))
			confinetest.Symlink(t, dir, "ext/out", outside)
			td := newTD(t, filesystem.Config{Root: dir})
			if tc.limit > 0 {
				filesystem.SetMoveLimit(td, tc.limit)
			}
			before := snapshot(t, dir)
			_, err := td.ExecuteTool(context.Background(), "move_file", map[string]any{"from": tc.from, "to": tc.to})
			if tc.wantErr != "" || tc.wantKind != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("move_file error = %v, want it to contain %q", err, tc.wantErr)
				}
				var ce *confine.Error
				if got := errors.As(err, &ce); got != (tc.wantKind != "") || (got && ce.Kind != tc.wantKind) {
					t.Errorf("move_file error = %#v, want a confinement error of kind %q", err, tc.wantKind)
				}
				if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
					t.Errorf("a refused move changed the tree (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("move_file: %v", err)
			}
			after := snapshot(t, dir)
			if _, ok := after[tc.from]; ok {
				t.Errorf("%s still exists after the move", tc.from)
			}
			if _, ok := after[tc.to]; !ok {
				t.Errorf("%s does not exist after the move", tc.to)
			}
			for _, p := range tc.moved {
				if after[tc.to+"/"+p] != before[tc.from+"/"+p] {
					t.Errorf("%s/%s = %q after the move, want %q", tc.to, p, after[tc.to+"/"+p], before[tc.from+"/"+p])
				}
			}
		})
	}
}

// TestMoveFileLinksManyEntries checks a directory read in several batches: the
// escaping link is found wherever it lies among the entries, and the limit counts
// every entry.
func TestMoveFileLinksManyEntries(t *testing.T) {
	const n = 700 // files, more than two batches of directory entries
	files := map[string]string{"x.txt": "x"}
	for i := range n {
		files[fmt.Sprintf("a/big/f%04d", i)] = ""
	}
	dir := confinetest.Tree(t, files)
	confinetest.Symlink(t, dir, "a/big/up", filepath.FromSlash("../../x.txt"))
	td := newTD(t, filesystem.Config{Root: dir})
	tests := []struct {
		to, want string
		limit    int
	}{
		{to: "big", want: `the symbolic link "a/big/up" would lead outside the root directory`, limit: n + 1},
		{to: "b/big", want: "it holds more than 700 entries", limit: n},
	}
	for _, tc := range tests {
		filesystem.SetMoveLimit(td, tc.limit)
		drivertest.Expect(t, td, "move_file", map[string]any{"from": "a/big", "to": tc.to}, nil, tc.want)
	}
	filesystem.SetMoveLimit(td, n+1)
	drivertest.MustCall(t, td, "move_file", map[string]any{"from": "a/big", "to": "b/big"})
	if got := readHost(t, filepath.Join(dir, "b", "big", "up")); got != "x" {
		t.Errorf("the moved link leads to %q, want the content of x.txt", got)
	}
}

// snapshot maps every entry below dir (slash-separated, relative to dir) to its
// content, its link target or "<dir>".
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case de.IsDir():
			out[rel] = "<dir>"
		case de.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "-> " + filepath.ToSlash(target)
			return err
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDeleteFile(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"a.txt": "a", "empty/": "", "full/x": "x"})
	confinetest.Symlink(t, dir, "link", "a.txt")
	td := newTD(t, filesystem.Config{Root: dir, AllowDelete: true})
	tests := []struct {
		path    string
		want    map[string]any
		wantErr string
	}{
		{path: "link", want: map[string]any{"path": "link", "deleted": true, "type": "symlink"}},
		{path: "a.txt", want: map[string]any{"path": "a.txt", "deleted": true, "type": "file"}},
		{path: "empty", want: map[string]any{"path": "empty", "deleted": true, "type": "directory"}},
		{path: "full", wantErr: `directory "full" is not empty; delete its entries first`},
		{path: "nope", want: map[string]any{"path": "nope", "error": "not found", "hint": "call list_directory on the parent directory to see what exists"}},
		{path: ".", wantErr: "names the root directory itself"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			drivertest.Expect(t, td, "delete_file", map[string]any{"path": tc.path}, tc.want, tc.wantErr)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "full", "x")); err != nil {
		t.Errorf("a refused delete removed content: %v", err)
	}
}

func TestEscapeSuite(t *testing.T) {
	env := confinetest.New(t)
	td := newTD(t, filesystem.Config{Root: env.Root, AllowDelete: true})
	filetoolstest.RunEscapes(t, env, td)
}

func TestSwappedDirectoryBetweenCalls(t *testing.T) {
	env := confinetest.New(t)
	d := drivertest.OpenDriver(t, filesystem.New, filesystem.Config{Root: env.Root})
	filetoolstest.RunSwap(t, env, d)
}

func TestNoAbsolutePathsInResults(t *testing.T) {
	env := confinetest.New(t)
	td := newTD(t, filesystem.Config{Root: env.Root, AllowDelete: true})
	filetoolstest.RunNoAbsolutePaths(t, env, td)
}

func TestContextCanceled(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"a.txt": "a"})
	td := newTD(t, filesystem.Config{Root: dir})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range []string{"read_file", "write_file"} {
		_, err := td.ExecuteTool(ctx, tool, map[string]any{"path": "a.txt", "content": "b"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v", tool, err)
		}
	}
	if got := readHost(t, filepath.Join(dir, "a.txt")); got != "a" {
		t.Errorf("a canceled write changed the file to %q", got)
	}
}

func TestClose(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"a.txt": "a"})
	d, err := filesystem.New(filesystem.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecuteTool(context.Background(), "read_file", map[string]any{"path": "a.txt"}); err == nil {
		t.Error("read_file after Close succeeded")
	}
}

func TestConcurrentCalls(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"a.txt": "a", "d/b.txt": "b"})
	d := drivertest.OpenDriver(t, filesystem.New, filesystem.Config{Root: dir, AllowDelete: true})
	drivertest.RunConcurrently(t, d, 8, func(i int) []drivertest.ToolCall {
		name := fmt.Sprintf("w%d/f.txt", i)
		return []drivertest.ToolCall{
			{Tool: "write_file", Args: map[string]any{"path": name, "content": name}},
			{Tool: "read_file", Args: map[string]any{"path": name}},
			{Tool: "list_directory", Args: map[string]any{"path": "."}},
			{Tool: "search_files", Args: map[string]any{"pattern": "*.txt"}},
			{Tool: "file_info", Args: map[string]any{"path": "a.txt"}},
			{Tool: "move_file", Args: map[string]any{"from": name, "to": name + ".moved"}},
			{Tool: "delete_file", Args: map[string]any{"path": name + ".moved"}},
		}
	})
}
