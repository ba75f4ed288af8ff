package permission_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
)

// fakeDriver is a small in-process tool driver for the tests and examples. It
// records every executed call. list_issues needs a credential and returns an auth
// challenge.
type fakeDriver struct {
	id    string
	mu    sync.Mutex
	calls []string
}

var _ mcs.ToolDriver = (*fakeDriver)(nil)

func (d *fakeDriver) Meta() mcs.Meta {
	id := d.id
	if id == "" {
		id = "fake"
	}
	return mcs.Meta{ID: id, Name: "Fake", Version: "1.0.0"}
}

func (d *fakeDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	path := []mcs.Parameter{{Name: "path", Required: true}}
	return []mcs.Tool{
		{Name: "read_file", Description: "Read a file.", Parameters: path},
		{Name: "write_file", Description: "Write a file.", Parameters: append(path, mcs.Parameter{Name: "content"})},
		{Name: "delete_file", Description: "Delete a file.", Parameters: path},
		{Name: "list_issues", Description: "List the issues of a repository."},
	}, nil
}

func (d *fakeDriver) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	d.mu.Lock()
	d.calls = append(d.calls, name)
	d.mu.Unlock()
	switch name {
	case "read_file", "write_file", "delete_file":
		return fmt.Sprintf("%s %v: done", name, args["path"]), nil
	case "list_issues":
		return nil, fmt.Errorf("github: %w", &auth.Challenge{
			Message: "Open the URL and enter the code.", URL: "https://example.com/device", Code: "WDJB-MJHT", Scope: "github",
		})
	}
	return nil, fmt.Errorf("unknown tool %q", name)
}

func (d *fakeDriver) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}
