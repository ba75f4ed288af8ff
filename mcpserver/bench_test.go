package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTP1000Calls serves 1,000 tools/call from 8 concurrent clients
// (125 each, one session each) over streamable HTTP on loopback per iteration,
// and reports calls per second and the 99th percentile latency of one call.
func BenchmarkHTTP1000Calls(b *testing.B) {
	for _, stateless := range []bool{false, true} {
		name := "stateful"
		opts := []Option{WithLogger(quietLog())}
		if stateless {
			name = "stateless"
			opts = append(opts, WithStateless())
		}
		b.Run(name, func(b *testing.B) {
			s := New(&fake{}, opts...)
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			defer s.Close()
			const clients, calls = 8, 1000
			ctx := context.Background()
			sessions := make([]*mcpsdk.ClientSession, clients)
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer hc.CloseIdleConnections()
			for i := range sessions {
				cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil).
					Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions[i] = cs
			}
			lat := make([]time.Duration, 0, calls*b.N)
			var mu sync.Mutex
			args := map[string]any{"name": "bench"}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				var wg sync.WaitGroup
				for _, cs := range sessions {
					wg.Add(1)
					go func() {
						defer wg.Done()
						mine := make([]time.Duration, 0, calls/clients)
						for range calls / clients {
							t0 := time.Now()
							res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "greet", Arguments: args})
							if err != nil || res.IsError {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(t0))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}
