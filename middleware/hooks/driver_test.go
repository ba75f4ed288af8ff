package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcs-go/mcs"
)

// fakeDriver is a small in-process tool driver for the tests and examples. Its
// tools: read_file and write_file echo their "path" argument, fail returns
// errFailed, deny returns an in-band permission denial. exec, when set, replaces
// them all.
type fakeDriver struct {
	exec func(ctx context.Context, name string, args map[string]any) (any, error)
}

var errFailed = errors.New("disk on fire")

var _ mcs.ToolDriver = (*fakeDriver)(nil)

func (d *fakeDriver) Meta() mcs.Meta {
	return mcs.Meta{ID: "fake", Name: "Fake", Version: "1.0.0"}
}

func (d *fakeDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "read_file", Description: "Read a file.", Parameters: []mcs.Parameter{{Name: "path", Required: true}}},
		{Name: "write_file", Description: "Write a file.", Parameters: []mcs.Parameter{{Name: "path", Required: true}, {Name: "content"}}},
		{Name: "fail", Description: "Always fails."},
		{Name: "deny", Description: "Returns a permission denial."},
	}, nil
}

func (d *fakeDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if d.exec != nil {
		return d.exec(ctx, name, args)
	}
	switch name {
	case "read_file", "write_file":
		return fmt.Sprintf("%s done: %v", name, args["path"]), nil
	case "fail":
		return nil, errFailed
	case "deny":
		return mcs.Signal{Kind: mcs.CodeDenied, Tool: name, Message: "User denied execution of 'deny'."}, nil
	}
	return nil, fmt.Errorf("unknown tool %q", name)
}

// recorder collects events from hooks, safe for concurrent use.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, a...))
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// terminal returns a CallNext that records the call and runs exec.
func terminal(rec *recorder, exec func(args map[string]any) (any, error)) mcs.CallNext {
	return func(ctx context.Context, name string, args map[string]any) (any, error) {
		rec.add("tool %s", name)
		return exec(args)
	}
}
