package orchestrator_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/orchestrator"
	"github.com/mcs-go/mcs/tools"
)

type kitIn struct {
	Text string `json:"text"`
}

// kitTable is a typed tool table with one tool, name.
func kitTable(id, name string) *tools.Table {
	t := tools.New(mcs.Meta{ID: id, Name: id, Version: "1"})
	tools.Add(t, name, "Echoes text.", func(_ context.Context, in kitIn) (string, error) { return in.Text, nil })
	return t
}

// TestConformance runs an orchestrator under each of its strategies through the
// conformance kit, over two drivers with a tool each (namespaced under the
// strategies that namespace, so the probes differ).
func TestConformance(t *testing.T) {
	tests := []struct {
		name     string
		strategy orchestrator.Strategy
		tool     string
	}{
		{"flat", orchestrator.Flat(), "echo"},
		{"namespacing", orchestrator.Pipeline(orchestrator.AlwaysNamespacing()), "a__echo"},
		{"pagination", orchestrator.Pipeline(orchestrator.Pagination(1)), "echo"},
		{"tool search", orchestrator.Pipeline(orchestrator.ToolSearch(5)), "echo"},
	}
	for _, tt := range tests {
		o := build(t, tt.strategy, "a", kitTable("test/a", "echo"), "b", kitTable("test/b", "shout"))
		err := mcstest.TestToolDriver(o,
			mcstest.Probe{Tool: tt.tool, Args: map[string]any{"text": "hi"}},
			mcstest.Probe{Tool: tt.tool, Args: map[string]any{"text": 1.0}, Invalid: true})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
