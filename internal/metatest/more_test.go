package metatest

import (
	"context"
	"errors"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/tools"
)

type echoIn struct {
	Text string `json:"text"`
}

// mcpServer starts an in-memory MCP server with one tool, echo, and returns the
// client side's transport.
func mcpServer(t *testing.T) mcpsdk.Transport {
	t.Helper()
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "meta", Version: "1"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, in echoIn) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: in.Text}}}, nil, nil
		})
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return ct
}

// The drivers outside the first table: typed tools and MCP, as tool driver and as
// driver, are honest about their capabilities and speak the one error vocabulary.
func TestTypedAndMCPDriversAreHonest(t *testing.T) {
	ctx := context.Background()
	table := tools.New(mcs.Meta{ID: "test/typed", Name: "Typed", Version: "1"})
	tools.Add(table, "echo", "Echoes text.", func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	mtd, err := mcp.NewToolDriver(ctx, mcp.Config{Transport: mcpServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mtd.Close() })
	md, err := mcp.New(ctx, mcp.Config{Transport: mcpServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { md.Close() })
	drivers := map[string]mcs.ToolDriver{
		"typed tool table":         table,
		"BaseDriver over typed":    mcs.NewBaseDriver(table),
		"mcp tool driver":          mtd,
		"mcp driver":               md,
		"BaseDriver over mcp tool": mcs.NewBaseDriver(mtd),
	}
	for name, d := range drivers {
		checkHonest(t, name, d)
		if _, err := d.ExecuteTool(ctx, "no_such_tool", nil); !errors.Is(err, mcs.ErrUnknownTool) {
			t.Errorf("%s: unknown tool: %v does not wrap mcs.ErrUnknownTool", name, err)
		}
	}
	if _, err := table.ExecuteTool(ctx, "echo", map[string]any{"bogus": 1.0}); err == nil {
		t.Error("typed: bad arguments accepted")
	} else if _, ok := errors.AsType[*mcs.ArgumentsError](err); !ok {
		t.Errorf("typed: bad arguments: %v is not an *mcs.ArgumentsError", err)
	}
}
