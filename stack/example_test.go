package stack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/stack"
)

// A stack of two drivers behind an orchestrator, with a permission policy: the
// CSV tools are allowed, everything else fails closed because nobody is asked.
func Example() {
	dir, _ := os.MkdirTemp("", "stack-example-")
	defer os.RemoveAll(dir)
	os.Mkdir(filepath.Join(dir, "data"), 0o700)
	os.WriteFile(filepath.Join(dir, "data", "sales.csv"), []byte("region,amount\nnorth,10\nsouth,32\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "mcs.toml"), []byte(`
[[driver]]
label = "sales"
type = "csv"
root = "data"            # relative to the stack file

[[driver]]
label = "files"
type = "filesystem"
root = "data"
read_only = true

[middleware]
order = ["permission"]
[middleware.permission]
allow = ["sales__*"]
`), 0o600)

	s, err := stack.Load(filepath.Join(dir, "mcs.toml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	td := d.(mcs.ToolDriver)
	res, err := td.ExecuteTool(ctx, "sales__summarize_numeric_column", map[string]any{"path": "sales.csv", "column": "amount"})
	fmt.Println(res.(map[string]any)["sum"], err)
	_, err = td.ExecuteTool(ctx, "files__list_directory", map[string]any{"path": "."})
	fmt.Println(err)
	// Output:
	// 42 <nil>
	// permission: tool "files__list_directory" not executed: no rule matched and no consent handler is set (set one with permission.New or SetConsentHandler, or allow the tool with a rule)
}

// Every problem of a stack file is reported with the file, the line and the key,
// and nothing is built.
func ExampleParse_errors() {
	_, err := stack.Parse("mcs.toml", []byte(`
[[driver]]
label = "pets"
type = "rest"
spec = "openapi.json"
include_tag = ["pet"]
headers = {Authorization = "Bearer abc123def456"}
`))
	fmt.Println(err)
	// Output:
	// mcs.toml:6: [[driver]] "pets", key "include_tag": unknown key; did you mean "include_tags"? the keys here are auth_scheme, base_url, cache_dir, credentials, headers, include_paths, include_tags, label, max_name_length, max_response_bytes, no_cache, oauth, scopes, spec, timeout, type
	// mcs.toml:7: [[driver]] "pets", key "headers.Authorization": the key is named like a credential and holds a value; secrets never go in the stack file: remove the value and set credentials = "env" on the driver and put the token in the environment variable MCS_TOKEN_PETS (the driver's label in upper case)
}

// With read_only = true the tools the drivers annotate read-only run without
// asking; here nothing else is allowed and nobody is asked, so a write fails
// closed.
func Example_readOnly() {
	dir, _ := os.MkdirTemp("", "stack-example-")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "mcs.toml"), []byte(`
[[driver]]
label = "files"
type = "filesystem"
root = "."

[middleware.permission]
read_only = true
`), 0o600)

	s, err := stack.Load(filepath.Join(dir, "mcs.toml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	td := d.(mcs.ToolDriver)
	_, err = td.ExecuteTool(ctx, "read_file", map[string]any{"path": "notes.txt"})
	fmt.Println("read_file:", err)
	_, err = td.ExecuteTool(ctx, "write_file", map[string]any{"path": "notes.txt", "content": "bye\n"})
	fmt.Println("write_file:", err != nil)
	// Output:
	// read_file: <nil>
	// write_file: true
}
