package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcstest"
)

// TestConformance runs the MCP tool driver, over the test server in memory, and a
// BaseDriver over it through the conformance kit.
func TestConformance(t *testing.T) {
	td, _ := connectInMemory(t, newTestServer(0), Config{})
	// No Invalid probe here: a tool of the go-sdk checks its own arguments and
	// reports a refusal as the tool's failure (free text). A server that refuses
	// with JSON-RPC "invalid params" is probed below.
	probes := []mcstest.Probe{{Tool: "echo", Args: map[string]any{"message": "hi"}}}
	if err := mcstest.TestToolDriver(td, probes...); err != nil {
		t.Error(err)
	}
	if err := mcstest.TestToolDriver(mcs.NewBaseDriver(td), probes...); err != nil {
		t.Error(err)
	}
}

// TestInvalidParamsAreArgumentErrors: a server's JSON-RPC "invalid params"
// answer to a call is an *mcs.ArgumentsError, which the kit's probe checks.
func TestInvalidParamsAreArgumentErrors(t *testing.T) {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "strict", Version: "1.0.0"}, nil)
	s.AddTool(&mcpsdk.Tool{Name: "count", Description: "counts to n", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			var in struct {
				N *int `json:"n"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.N == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "n: want an integer"}
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "counted"}}}, nil
		})
	td, _ := connectInMemory(t, s, Config{})
	probes := []mcstest.Probe{
		{Tool: "count", Args: map[string]any{"n": 3.0}},
		{Tool: "count", Args: map[string]any{"n": "three"}, Invalid: true},
	}
	if err := mcstest.TestToolDriver(td, probes...); err != nil {
		t.Error(err)
	}
	_, err := td.ExecuteTool(context.Background(), "count", map[string]any{})
	if ae, ok := errors.AsType[*mcs.ArgumentsError](err); !ok || ae.Tool != "count" || len(ae.Problems) != 1 || ae.Problems[0] != "n: want an integer" {
		t.Errorf("error = %v; want an *mcs.ArgumentsError with the server's message", err)
	}
}
