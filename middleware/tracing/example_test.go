package tracing_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/middleware/tracing"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Every tool call becomes a span exported with OTLP/HTTP to a collector (Jaeger,
// Tempo, a vendor). Here a loopback server stands in for the collector and prints
// what it received.
func Example() {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			return
		}
		var lines []string
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					line := s.Name
					for _, a := range s.Attributes {
						if a.Key == "mcs.outcome" {
							line += " outcome=" + a.Value.GetStringValue()
						}
					}
					lines = append(lines, line)
				}
			}
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Println(l)
		}
	}))
	defer collector.Close()

	// The application's OpenTelemetry setup: the SDK with an OTLP exporter. In
	// production the endpoint is the collector's, such as
	// http://otel-collector:4318/v1/traces (or OTEL_EXPORTER_OTLP_ENDPOINT), and
	// the provider is usually made global with otel.SetTracerProvider(tp), which
	// tracing.New() without options follows.
	ctx := context.Background()
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(collector.URL+"/v1/traces"))
	if err != nil {
		fmt.Println(err)
		return
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))

	root, _ := os.MkdirTemp("", "tracing-example")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("hello"), 0o600)
	d, err := filesystem.New(filesystem.Config{Root: root}, mcs.WithMiddleware(
		tracing.New(tracing.WithTracerProvider(tp)),
		permission.New(nil, permission.WithRules(permission.Deny("write_*"), permission.Allow("*"))),
	))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	d.ProcessLLMResponse(ctx, `{"tool": "read_file", "arguments": {"path": "notes.txt"}}`)
	d.ProcessLLMResponse(ctx, `{"tool": "write_file", "arguments": {"path": "notes.txt", "content": "bye"}}`)
	d.ProcessLLMResponse(ctx, `{"tool": "read_file", "arguments": {"path": "../outside.txt"}}`)

	tp.Shutdown(ctx) // flushes the spans to the collector
	// Output:
	// execute_tool read_file outcome=error
	// execute_tool read_file outcome=ok
	// execute_tool write_file outcome=denied
}
