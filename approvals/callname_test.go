package approvals_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/orchestrator"
)

// oneTool publishes delete_file.
type oneTool struct{}

func (oneTool) Meta() mcs.Meta { return mcs.Meta{ID: "files", Name: "Files", Version: "1.0.0"} }

func (oneTool) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "delete_file", Description: "Delete a file."}}, nil
}

func (oneTool) ExecuteTool(context.Context, string, map[string]any) (any, error) { return "ok", nil }

func TestCallName(t *testing.T) {
	two := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()))
	one := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()))
	for _, l := range []string{"files", "backup"} {
		if err := two.AddDriver(l, oneTool{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := one.AddDriver("files", oneTool{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		driver any
		req    approvals.Request
		want   string
	}{
		{"no label", oneTool{}, approvals.Request{Tool: "delete_file"}, "delete_file"},
		{"label on a driver of its own", oneTool{}, approvals.Request{Label: "files", Tool: "delete_file"}, "delete_file"},
		{"namespaced orchestrator", two, approvals.Request{Label: "backup", Tool: "delete_file"}, "backup__delete_file"},
		{"orchestrator over one driver", one, approvals.Request{Label: "files", Tool: "delete_file"}, "delete_file"},
		{"unknown label", two, approvals.Request{Label: "evil", Tool: "delete_file"}, "delete_file"},
		{"no driver", nil, approvals.Request{Label: "files", Tool: "delete_file"}, "delete_file"},
	}
	for _, c := range cases {
		if got := approvals.CallName(context.Background(), c.driver, c.req); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
