package mcp

import (
	"context"
	"testing"
	"time"

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

// BenchmarkCallToolInterleaved makes one call through the driver and one with
// the SDK's CallTool in every iteration, on two sessions of the same server, so
// that both see the same load; it reports the time of each and the driver's
// overhead in percent.
func BenchmarkCallToolInterleaved(b *testing.B) {
	s := newTestServer(0)
	d, _ := connectInMemory(b, s, Config{Logger: discardLogger()})
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
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
	args := map[string]any{"message": "hello"}
	var viaDriver, viaSDK time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if _, err := d.ExecuteTool(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "echo", Arguments: args}); err != nil || res.IsError {
			b.Fatal(err)
		}
		viaDriver += t1.Sub(t0)
		viaSDK += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(viaDriver.Nanoseconds())/n, "driver-ns/call")
	b.ReportMetric(float64(viaSDK.Nanoseconds())/n, "sdk-ns/call")
	b.ReportMetric(100*(float64(viaDriver)/float64(viaSDK)-1), "overhead-%")
}
