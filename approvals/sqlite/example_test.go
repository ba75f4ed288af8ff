package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/sqlite"
)

// A request made through one store is decided through another on the same file,
// as if by another process, and claimed, once, through the first.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "approvals")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "approvals.db")

	agent, err := sqlite.Open(path)
	if err != nil {
		panic(err)
	}
	defer agent.Close()
	tool := mcs.Tool{Name: "delete_file", Parameters: []mcs.Parameter{{Name: "path", Required: true}}}
	args := map[string]any{"path": "notes.txt"}
	fp := approvals.Fingerprint("files", tool, args)
	req, err := agent.Create(ctx, approvals.Request{
		Label: "files", Tool: tool.Name, Arguments: args, Fingerprint: fp,
		Expires: time.Now().Add(time.Hour),
	})
	if err != nil {
		panic(err)
	}

	// The operator's console opens the same file by URL.
	console, err := approvals.Open(ctx, "sqlite:"+path)
	if err != nil {
		panic(err)
	}
	defer console.Close()
	pending, _ := console.List(ctx, approvals.Filter{State: approvals.Pending})
	fmt.Println("pending:", len(pending), pending[0].ID == req.ID)
	if _, err := console.Decide(ctx, req.ID, approvals.Decision{Approve: true, By: "alice"}); err != nil {
		panic(err)
	}

	_, ok, _ := agent.Claim(ctx, fp)
	fmt.Println("claimed:", ok)
	_, ok, _ = agent.Claim(ctx, fp)
	fmt.Println("claimed again:", ok)
	// Output:
	// pending: 1 true
	// claimed: true
	// claimed again: false
}
