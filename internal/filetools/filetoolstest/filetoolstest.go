// Package filetoolstest is the confinement suite of the file tools (package
// filetools), run against each of their back ends: the local filesystem driver
// and the SFTP driver. Each function takes a driver built over the root of a
// confinetest.Env, with AllowDelete set.
package filetoolstest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
)

// PathCalls are the calls of every tool with the model-supplied path p.
func PathCalls(p string) []drivertest.ToolCall {
	return []drivertest.ToolCall{
		{Tool: "list_directory", Args: map[string]any{"path": p}},
		{Tool: "read_file", Args: map[string]any{"path": p}},
		{Tool: "read_file", Args: map[string]any{"path": p, "encoding": "base64"}},
		{Tool: "file_info", Args: map[string]any{"path": p}},
		{Tool: "search_files", Args: map[string]any{"path": p, "pattern": "*"}},
		{Tool: "write_file", Args: map[string]any{"path": p, "content": drivertest.Payload}, Writes: true},
		{Tool: "write_file", Args: map[string]any{"path": p + "/new.txt", "content": drivertest.Payload}, Writes: true},
		{Tool: "make_directory", Args: map[string]any{"path": p}, Writes: true},
		{Tool: "move_file", Args: map[string]any{"from": p, "to": "moved"}, Writes: true},
		{Tool: "move_file", Args: map[string]any{"from": "notes.txt", "to": p}, Writes: true},
		{Tool: "delete_file", Args: map[string]any{"path": p}, Writes: true},
	}
}

// RunEscapes runs every escape attempt of env with every tool: each must be
// refused, nothing outside the root may change, and notes.txt inside it
// neither.
func RunEscapes(t *testing.T, env *confinetest.Env, td mcs.ToolDriver) {
	t.Helper()
	// The directory to be swapped works before the swap.
	if got := drivertest.MustCall(t, td, "read_file", map[string]any{"path": "swap/ok.csv"}); got["content"] != "a,b\n1,2\n" {
		t.Fatalf("read swap/ok.csv before the swap: %v", got)
	}
	drivertest.RunEscapeSuite(t, env, td, PathCalls)
	if b, err := os.ReadFile(filepath.Join(env.Root, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("notes.txt inside the root changed to %q (%v)", b, err)
	}
}

// RunSwap checks the defence against a directory swapped for a symbolic link
// between two calls.
func RunSwap(t *testing.T, env *confinetest.Env, d interface {
	mcs.Driver
	mcs.ToolDriver
}) {
	t.Helper()
	drivertest.RunSwap(t, env, d, `{"tool":"list_directory","arguments":{"path":"swap"}}`,
		`{"tool":"list_directory","arguments":{"path":"swap"}}`,
		`{"tool":"read_file","arguments":{"path":"swap/secret.csv"}}`,
		`{"tool":"write_file","arguments":{"path":"swap/new.txt","content":"x"}}`,
		`{"tool":"search_files","arguments":{"path":"swap","pattern":"*"}}`,
	)
	// The swapped link is listed in the root, but its target is not followed.
	got := drivertest.MustCall(t, d, "search_files", map[string]any{"pattern": "secret.csv"})
	if got["count"] != 0.0 {
		t.Errorf("search found files through the swapped link: %v", got)
	}
	env.CheckOutside(t)
}

// RunNoAbsolutePaths checks that no result shows the absolute path of the
// root, even for calls that give it.
func RunNoAbsolutePaths(t *testing.T, env *confinetest.Env, td mcs.ToolDriver) {
	t.Helper()
	// A link through a missing directory: resolving it fails as "not found".
	confinetest.Symlink(t, env.Root, "ghost", filepath.FromSlash("missing/../notes.txt"))
	abs := filepath.ToSlash(env.Root)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_directory", map[string]any{"path": abs}},
		{"list_directory", map[string]any{"path": "."}},
		{"read_file", map[string]any{"path": abs + "/notes.txt"}},
		{"read_file", map[string]any{"path": abs + "/missing"}},
		{"read_file", map[string]any{"path": abs + "/ghost"}},
		{"file_info", map[string]any{"path": abs + "/ghost/x"}},
		{"file_info", map[string]any{"path": abs + "/link_in_abs"}},
		{"search_files", map[string]any{"path": abs, "pattern": "*"}},
		{"write_file", map[string]any{"path": abs + "/w.txt", "content": "x"}},
		{"make_directory", map[string]any{"path": abs + "/dir"}},
		{"move_file", map[string]any{"from": abs + "/w.txt", "to": abs + "/dir/w.txt"}},
		{"delete_file", map[string]any{"path": abs + "/dir/w.txt"}},
	}
	for _, c := range calls {
		res, err := td.ExecuteTool(context.Background(), c.tool, c.args)
		if err != nil {
			t.Errorf("%s(%v): %v", c.tool, c.args, err)
			continue
		}
		b, _ := json.Marshal(res)
		if bytes.Contains(b, []byte(env.Base)) {
			t.Errorf("%s(%v) shows an absolute host path: %s", c.tool, c.args, b)
		}
	}
}
