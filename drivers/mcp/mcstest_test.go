package mcp

import (
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcstest"
)

// TestConformance runs the MCP tool driver, over the test server in memory, and a
// BaseDriver over it through the conformance kit.
func TestConformance(t *testing.T) {
	td, _ := connectInMemory(t, newTestServer(0), Config{})
	// No Invalid probe: the server, not the driver, checks the arguments of an
	// MCP tool, and its refusal comes back as the tool's failure (free text), not
	// as an *mcs.ArgumentsError.
	probes := []mcstest.Probe{{Tool: "echo", Args: map[string]any{"message": "hi"}}}
	if err := mcstest.TestToolDriver(td, probes...); err != nil {
		t.Error(err)
	}
	if err := mcstest.TestToolDriver(mcs.NewBaseDriver(td), probes...); err != nil {
		t.Error(err)
	}
}
