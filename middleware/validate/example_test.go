package validate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/middleware/validate"
)

// A model's bad call fails before the tool runs; the failure it reads lists what
// to fix, and the corrected call succeeds.
func Example() {
	root, _ := os.MkdirTemp("", "validate-example")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("hello, world"), 0o600)

	d, err := filesystem.New(filesystem.Config{Root: root, ReadOnly: true},
		mcs.WithMiddleware(validate.New()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	ctx := context.Background()

	bad := `{"tool": "read_file", "arguments": {"path": "notes.txt", "offset": "seven", "lines": 1}}`
	resp := d.ProcessLLMResponse(ctx, bad)
	fmt.Println("failed:", resp.CallFailed)
	fmt.Println("the model reads:", resp.RetryPrompt)

	good := `{"tool": "read_file", "arguments": {"path": "notes.txt", "offset": 7}}`
	resp = d.ProcessLLMResponse(ctx, good)
	fmt.Println("executed:", resp.CallExecuted)
	fmt.Println("content:", resp.Calls[0].Result.(map[string]any)["content"])
	// Output:
	// failed: true
	// the model reads: The call to the tool 'read_file' failed: invalid arguments for "read_file": /lines: unknown argument; "read_file" takes path, encoding, offset; /offset: want integer, got string "seven"
	// Check the tool name and the arguments against the tool list and try again, or answer the user without the tool.
	// executed: true
	// content: world
}
