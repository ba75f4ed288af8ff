package tracing_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/tracing"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

var benchInfo = mcs.CallInfo{
	Driver: mcs.Meta{ID: "mcs-go/filesystem"},
	Tool:   mcs.Tool{Name: "read_file", Description: "Read a file."},
	CallID: "call_1",
}

func bench(b *testing.B, m *tracing.Middleware) {
	ctx := mcs.ContextWithCallInfo(context.Background(), benchInfo)
	args := map[string]any{"path": "a.txt"}
	next := func(context.Context, string, map[string]any) (any, error) { return "ok", nil }
	b.ReportAllocs()
	for b.Loop() {
		m.OnExecuteTool(ctx, "read_file", args, next)
	}
}

// BenchmarkTracingNoop is the overhead with the no-op providers of the API.
func BenchmarkTracingNoop(b *testing.B) {
	bench(b, tracing.New(tracing.WithTracerProvider(tracenoop.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider())))
}

// BenchmarkTracingGlobalUnset is the overhead with the global providers when the
// application has set none (the default).
func BenchmarkTracingGlobalUnset(b *testing.B) {
	bench(b, tracing.New())
}

// BenchmarkTracingSDK is the cost with the SDK recording every span (to a no-op
// exporter through a simple processor) and the histogram (manual reader).
func BenchmarkTracingSDK(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	bench(b, tracing.New(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp)))
}

// BenchmarkTracingSDKContent adds WithContent (redaction and JSON of arguments and
// result).
func BenchmarkTracingSDKContent(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(tracetest.NewNoopExporter())))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	bench(b, tracing.New(tracing.WithTracerProvider(tp), tracing.WithMeterProvider(mp), tracing.WithContent()))
}

// BenchmarkBare is the call without the middleware, for reference.
func BenchmarkBare(b *testing.B) {
	ctx := mcs.ContextWithCallInfo(context.Background(), benchInfo)
	args := map[string]any{"path": "a.txt"}
	next := func(context.Context, string, map[string]any) (any, error) { return "ok", nil }
	b.ReportAllocs()
	for b.Loop() {
		next(ctx, "read_file", args)
	}
}
