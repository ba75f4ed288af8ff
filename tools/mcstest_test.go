package tools_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/tools"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// TestConformance runs a typed tool table, alone and under a BaseDriver, through
// the conformance kit.
func TestConformance(t *testing.T) {
	table := tools.New(mcs.Meta{ID: "test/typed", Name: "Typed", Version: "1"})
	tools.Add(table, "add", "Adds two integers.", func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil })
	probes := []mcstest.Probe{
		{Tool: "add", Args: map[string]any{"a": 1.0, "b": 2.0}},
		{Tool: "add", Args: map[string]any{"a": "one", "b": 2.0}, Invalid: true},
		{Tool: "add", Args: map[string]any{"a": 1.5, "b": 2.0}, Invalid: true},
	}
	if err := mcstest.TestToolDriver(table, probes...); err != nil {
		t.Error(err)
	}
	if err := mcstest.TestToolDriver(mcs.NewBaseDriver(table), probes...); err != nil {
		t.Error(err)
	}
}
