package main

import (
	"strings"
	"testing"
)

// TestCallHiddenBySearch: call and describe find a tool that tool_search keeps
// out of the listing, as a model's search would; a name no search finds gets
// the names it found.
func TestCallHiddenBySearch(t *testing.T) {
	writeStack(t, `[[driver]]
label = "files"
type = "filesystem"
root = "."
read_only = true

[[driver]]
label = "csv"
type = "csv"
root = "."

[orchestrator]
strategy = ["namespacing", "tool_search"]
`)
	if r := mcsRun(t, "", "tools"); strings.Contains(r.stdout, "files__read_file") {
		t.Fatalf("the listing shows a tool the search should hide:\n%s", r.stdout)
	}
	r := mcsRun(t, "", "describe", "files__read_file")
	if r.code != 0 || !strings.Contains(r.stdout, "PARAMETER") || !strings.Contains(r.stdout, "path ") {
		t.Errorf("describe: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = mcsRun(t, "", "call", "files__read_file", "path=mcs.toml")
	if r.code != 0 || !strings.Contains(r.stdout, "tool_search") {
		t.Errorf("call: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = mcsRun(t, "", "call", "files__nope")
	if r.code != exitUsage || !strings.Contains(r.stderr, `no tool is called "files__nope"; a search for it found files__`) {
		t.Errorf("unknown tool: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
