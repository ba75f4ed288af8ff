package tracing_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/tracing"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// TestUnusedAllocatesNothing guards the cheap path: with the global providers
// unset, and with the API's no-op providers, a call allocates nothing. (It would
// catch an OpenTelemetry release that changes how the unset global provider is
// recognised.) It must run before any test sets a global provider.
func TestUnusedAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx := mcs.ContextWithCallInfo(context.Background(), benchInfo)
	args := map[string]any{"path": "a.txt"}
	next := func(context.Context, string, map[string]any) (any, error) { return "ok", nil }
	for name, m := range map[string]*tracing.Middleware{
		"global unset": tracing.New(),
		"no-op":        tracing.New(tracing.WithTracerProvider(tracenoop.NewTracerProvider()), tracing.WithMeterProvider(metricnoop.NewMeterProvider())),
	} {
		if n := testing.AllocsPerRun(100, func() { m.OnExecuteTool(ctx, "read_file", args, next) }); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}
