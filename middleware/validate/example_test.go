package validate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/middleware/validate"
)

// A model's bad call fails before the tool runs; the retry prompt the model reads
// lists every problem, and the corrected call succeeds.
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
	var ae *mcs.ArgumentsError
	if errors.As(resp.Calls[0].Err, &ae) {
		for _, p := range ae.Problems {
			fmt.Println("the model reads:", p, strings.Contains(resp.RetryPrompt, p))
		}
	}

	good := `{"tool": "read_file", "arguments": {"path": "notes.txt", "offset": 7}}`
	resp = d.ProcessLLMResponse(ctx, good)
	fmt.Println("executed:", resp.CallExecuted)
	fmt.Println("content:", resp.Calls[0].Result.(map[string]any)["content"])
	// Output:
	// failed: true
	// the model reads: /lines: unknown argument; "read_file" takes path, encoding, offset true
	// the model reads: /offset: want integer, got string "seven" true
	// executed: true
	// content: world
}
