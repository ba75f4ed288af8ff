package filesystem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs/drivers/filesystem"
)

// The model reads a file, writes one, and tries to leave the root.
func Example() {
	dir, err := os.MkdirTemp("", "mcs-filesystem-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("Buy milk.\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	d, err := filesystem.New(filesystem.Config{Root: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()

	for _, reply := range []string{
		`{"tool":"read_file","arguments":{"path":"notes.txt"}}`,
		`{"tool":"write_file","arguments":{"path":"todo/today.txt","content":"Call Ann."}}`,
		`{"tool":"list_directory","arguments":{"path":"todo"}}`,
		`{"tool":"read_file","arguments":{"path":"../../etc/passwd"}}`,
	} {
		resp := d.ProcessLLMResponse(ctx, reply)
		for _, c := range resp.Calls {
			if c.Err != nil {
				fmt.Println(c.Name, "failed:", c.Err)
				continue
			}
			b, _ := json.Marshal(c.Result)
			fmt.Println(c.Name, string(b))
		}
	}
	// Output:
	// read_file {"content":"Buy milk.\n","encoding":"utf-8","offset":0,"path":"notes.txt","size":10,"truncated":false}
	// write_file {"bytes_written":9,"created":true,"path":"todo/today.txt"}
	// list_directory {"count":1,"entries":[{"name":"today.txt","size":9,"type":"file"}],"path":"todo"}
	// read_file failed: read_file: path "../../etc/passwd" refused: its ".." segments lead above the root directory; use a path inside the root, relative to it
}

// A read-only tool driver publishes only the reading tools; it can be used
// directly or registered with an orchestrator.
func ExampleNewToolDriver() {
	dir, err := os.MkdirTemp("", "mcs-filesystem-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	td, err := filesystem.NewToolDriver(filesystem.Config{Root: dir, ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer td.Close()
	ctx := context.Background()

	tools, _ := td.ListTools(ctx)
	for _, t := range tools {
		fmt.Println(t.Name)
	}
	_, err = td.ExecuteTool(ctx, "write_file", map[string]any{"path": "x.txt", "content": "x"})
	fmt.Println(err)
	res, _ := td.ExecuteTool(ctx, "file_info", map[string]any{"path": "missing.txt"})
	fmt.Println(res.(map[string]any)["error"])
	// Output:
	// list_directory
	// read_file
	// search_files
	// file_info
	// write_file: not available: the file system is read-only; only list_directory, read_file, search_files, file_info can be used
	// not found
}
