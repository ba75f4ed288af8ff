package mcp

import (
	"context"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallTool compares one tools/call round trip through the driver with
// the SDK's own ClientSession.CallTool, on the same server over the in-memory
// transport.
func BenchmarkCallTool(b *testing.B) {
	args := map[string]any{"message": "hello"}
	b.Run("driver", func(b *testing.B) {
		d, _ := connectInMemory(b, newTestServer(0), Config{Logger: discardLogger()})
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := d.ExecuteTool(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		ct, st := mcpsdk.NewInMemoryTransports()
		ss, err := newTestServer(0).Connect(context.Background(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
}
