package tracing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/middleware/tracing"
	"github.com/mcs-go/mcs/middleware/validate"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// toolbox is a tool driver whose tools end in every way a call can end.
type toolbox struct{}

func (toolbox) Meta() mcs.Meta { return mcs.Meta{ID: "toolbox", Name: "Toolbox", Version: "1.0.0"} }

func (toolbox) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "echo", Description: "Echo the arguments.", Parameters: []mcs.Parameter{
			{Name: "text", Schema: map[string]any{"type": "string"}},
			{Name: "api_key", Schema: map[string]any{"type": "string"}},
			{Name: "count", Schema: map[string]any{"type": "integer"}},
		}},
		{Name: "fail", Description: "Always fails."},
		{Name: "login", Description: "Needs a login."},
		{Name: "boom", Description: "Panics."},
		{Name: "drop_table", Description: "Dangerous."},
	}, nil
}

var errDisk = errors.New("disk on fire")

func (toolbox) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	switch name {
	case "echo":
		return map[string]any{"echo": args, "session_token": "t0k3n"}, nil
	case "fail":
		return nil, fmt.Errorf("fail: %w", errDisk)
	case "login":
		return nil, fmt.Errorf("login: %w", &auth.Challenge{Message: "sign in", URL: "https://example.com/device", Scope: "example"})
	case "boom":
		panic("kaboom")
	case "drop_table":
		return "dropped", nil
	}
	return nil, fmt.Errorf("%w %q", mcs.ErrUnknownTool, name)
}

type fixture struct {
	spans   *tracetest.SpanRecorder
	reader  *sdkmetric.ManualReader
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	driver  *mcs.BaseDriver
	tracing *tracing.Middleware
}

func newFixture(t *testing.T, opts ...tracing.Option) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	f.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	t.Cleanup(func() {
		f.tp.Shutdown(context.Background())
		f.mp.Shutdown(context.Background())
	})
	f.tracing = tracing.New(append([]tracing.Option{tracing.WithTracerProvider(f.tp), tracing.WithMeterProvider(f.mp)}, opts...)...)
	f.driver = mcs.NewBaseDriver(toolbox{}, mcs.WithMiddleware(
		f.tracing,
		validate.New(),
		permission.New(nil, permission.WithRules(permission.Deny("drop_*"), permission.Allow("*"))),
		auth.New(),
	))
	return f
}

func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func TestSpans(t *testing.T) {
	f := newFixture(t)
	ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{CallID: "call_42"})
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "hi"}},
		{"fail", nil},
		{"drop_table", nil},
		{"login", nil},
		{"boom", nil},
		{"echo", map[string]any{"count": "five"}},
		{"nope", nil},
	}
	for _, c := range calls {
		f.driver.ExecuteTool(ctx, c.tool, c.args)
	}
	ended := f.spans.Ended()
	if len(ended) != len(calls) {
		t.Fatalf("%d spans, want %d", len(ended), len(calls))
	}
	base := func(tool, desc, outcome string) map[string]string {
		m := map[string]string{
			"gen_ai.operation.name": "execute_tool",
			"gen_ai.tool.name":      tool,
			"gen_ai.tool.type":      "function",
			"gen_ai.tool.call.id":   "call_42",
			"mcs.driver.id":         "toolbox",
			"mcs.outcome":           outcome,
		}
		if desc != "" {
			m["gen_ai.tool.description"] = desc
		}
		return m
	}
	withErr := func(m map[string]string, et string) map[string]string {
		m["error.type"] = et
		return m
	}
	want := []struct {
		attrs  map[string]string
		status codes.Code
	}{
		{base("echo", "Echo the arguments.", "ok"), codes.Unset},
		{withErr(base("fail", "Always fails.", "error"), "*errors.errorString"), codes.Error},
		{base("drop_table", "Dangerous.", "denied"), codes.Unset},
		{base("login", "Needs a login.", "challenge"), codes.Unset},
		{withErr(base("boom", "Panics.", "error"), "panic"), codes.Error},
		{withErr(base("echo", "Echo the arguments.", "error"), "invalid_arguments"), codes.Error},
		{withErr(base("nope", "", "error"), "unknown_tool"), codes.Error},
	}
	for i, s := range ended {
		if s.Name() != "execute_tool "+calls[i].tool {
			t.Errorf("span %d name %q", i, s.Name())
		}
		if s.SpanKind() != trace.SpanKindInternal {
			t.Errorf("span %d kind %v", i, s.SpanKind())
		}
		if diff := cmp.Diff(want[i].attrs, attrs(s)); diff != "" {
			t.Errorf("span %d (%s) attributes (-want +got):\n%s", i, s.Name(), diff)
		}
		if s.Status().Code != want[i].status {
			t.Errorf("span %d status %v, want %v", i, s.Status(), want[i].status)
		}
		if s.InstrumentationScope().Name != tracing.ScopeName {
			t.Errorf("scope %q", s.InstrumentationScope().Name)
		}
	}
	if d := ended[1].Status().Description; !strings.Contains(d, "disk on fire") {
		t.Errorf("status description %q", d)
	}
	if _, ok := attrs(ended[0])["gen_ai.tool.call.arguments"]; ok {
		t.Error("content recorded without WithContent")
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tool := range []string{"echo", "echo", "fail", "drop_table", "login", "invented"} {
		f.driver.ExecuteTool(ctx, tool, nil)
	}
	var rm metricdata.ResourceMetrics
	if err := f.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != tracing.MetricDuration {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("unit %q", m.Unit)
			}
			h := m.Data.(metricdata.Histogram[float64])
			for _, dp := range h.DataPoints {
				tool, _ := dp.Attributes.Value("gen_ai.tool.name")
				outcome, _ := dp.Attributes.Value("mcs.outcome")
				et, _ := dp.Attributes.Value("error.type")
				key := tool.String() + "/" + outcome.String()
				if et.String() != "" {
					key += "/" + et.String()
				}
				if op, _ := dp.Attributes.Value("gen_ai.operation.name"); op.String() != "execute_tool" {
					t.Errorf("operation %q", op.String())
				}
				got[key] += dp.Count
			}
		}
	}
	want := map[string]uint64{
		"echo/ok":                        2,
		"fail/error/*errors.errorString": 1,
		"drop_table/denied":              1,
		"login/challenge":                1,
		"_OTHER/error/unknown_tool":      1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("histogram counts (-want +got):\n%s", diff)
	}
}

func TestContentRedacted(t *testing.T) {
	f := newFixture(t, tracing.WithContent(), tracing.WithContentLimit(64))
	long := strings.Repeat("x", 100)
	f.driver.ExecuteTool(context.Background(), "echo", map[string]any{"text": long, "api_key": "sk-live-123"})
	s := f.spans.Ended()[0]
	a := attrs(s)
	args, res := a["gen_ai.tool.call.arguments"], a["gen_ai.tool.call.result"]
	for _, v := range []string{args, res} {
		if strings.Contains(v, "sk-live-123") || strings.Contains(v, "t0k3n") {
			t.Errorf("secret in content: %s", v)
		}
		if len(v) > 64+len("…(999 more bytes)") {
			t.Errorf("content not bounded (%d bytes): %s", len(v), v)
		}
	}
	if !strings.Contains(args, `"api_key":"[REDACTED]"`) {
		t.Errorf("arguments = %s", args)
	}
	if !strings.Contains(res, "more bytes)") {
		t.Errorf("result not cut: %s", res)
	}
	// a failed call records its arguments, not a result
	f.driver.ExecuteTool(context.Background(), "fail", map[string]any{})
	a = attrs(f.spans.Ended()[1])
	if _, ok := a["gen_ai.tool.call.result"]; ok {
		t.Error("result recorded for a failed call")
	}
	if a["gen_ai.tool.call.arguments"] != "{}" {
		t.Errorf("arguments of the failed call = %q", a["gen_ai.tool.call.arguments"])
	}
}

func TestCustomRedactKeys(t *testing.T) {
	f := newFixture(t, tracing.WithContent(), tracing.WithRedactKeys("text"))
	f.driver.ExecuteTool(context.Background(), "echo", map[string]any{"text": "private", "api_key": "visible"})
	args := attrs(f.spans.Ended()[0])["gen_ai.tool.call.arguments"]
	if strings.Contains(args, "private") || !strings.Contains(args, "visible") {
		t.Errorf("arguments = %s", args)
	}
}

// Outcomes are told by mcs.CodeOf: a pending approval is a success with the
// outcome "pending"; a result whose Coder reports a failure is an error.
func TestOutcomesByCode(t *testing.T) {
	for _, tt := range []struct {
		name          string
		result        any
		outcome, kind string
		status        codes.Code
	}{
		{"pending", mcs.Signal{Kind: mcs.CodePending, Tool: "echo", Message: "asked", Data: map[string]any{"id": "a1"}}, "pending", "", codes.Unset},
		{"denied", &mcs.Signal{Kind: mcs.CodeDenied, Tool: "echo", Message: "no"}, "denied", "", codes.Unset},
		{"a look-alike map", map[string]any{"permission_denied": true}, "ok", "", codes.Unset},
		{"a failing result", failingResult{}, "error", "too_many_calls", codes.Error},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			answer := mcs.ToolMiddlewareFunc(func(context.Context, string, map[string]any, mcs.CallNext) (any, error) {
				return tt.result, nil
			})
			d := mcs.NewBaseDriver(toolbox{}, mcs.WithMiddleware(f.tracing, answer))
			if _, err := d.ExecuteTool(context.Background(), "echo", nil); err != nil {
				t.Fatal(err)
			}
			s := f.spans.Ended()[0]
			if a := attrs(s); a["mcs.outcome"] != tt.outcome || a["error.type"] != tt.kind || s.Status().Code != tt.status {
				t.Errorf("attributes %v status %v; want outcome %q, error.type %q, status %v", a, s.Status(), tt.outcome, tt.kind, tt.status)
			}
		})
	}
}

// failingResult is a result that reports a failure code of its own.
type failingResult struct{}

func (failingResult) Code() mcs.Code { return mcs.CodeTooManyCalls }

func TestChallengeInsideAuth(t *testing.T) {
	// tracing inside auth sees the *auth.Challenge error: still a challenge, not an error
	f := newFixture(t)
	d := mcs.NewBaseDriver(toolbox{}, mcs.WithMiddleware(auth.New(), f.tracing))
	res, err := d.ExecuteTool(context.Background(), "login", nil)
	if err != nil || mcs.CodeOf(res, nil) != mcs.CodeChallenge {
		t.Fatalf("res=%v err=%v", res, err)
	}
	s := f.spans.Ended()[0]
	if a := attrs(s); a["mcs.outcome"] != "challenge" || a["error.type"] != "" || s.Status().Code != codes.Unset {
		t.Errorf("attributes %v status %v", a, s.Status())
	}
}

func TestErrorType(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("x: %w", mcs.ErrUnknownTool), "unknown_tool"},
		{&mcs.ArgumentsError{Tool: "t", Problems: []string{"/a: b"}}, "invalid_arguments"},
		{&validate.SchemaError{Tool: "t", Parameter: "p", Err: errors.New("bad")}, "invalid_schema"},
		{&permission.ConsentError{Tool: "t", Reason: permission.ReasonTimeout, Err: context.DeadlineExceeded}, "consent"},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), "timeout"},
		{context.Canceled, "canceled"},
		{errDisk, "*errors.errorString"},
	} {
		if got := tracing.ErrorType(tt.err); got != tt.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestAttributesOfLabel(t *testing.T) {
	f := newFixture(t)
	ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{Label: "box"})
	f.driver.ExecuteTool(ctx, "echo", nil)
	if got := attrs(f.spans.Ended()[0])["mcs.driver.label"]; got != "box" {
		t.Errorf("label = %q", got)
	}
	var _ attribute.Key = tracing.AttrDriverLabel
}

// TestMetricsWithoutSpans: with a no-op tracer the histogram still records.
func TestMetricsWithoutSpans(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	d := mcs.NewBaseDriver(toolbox{}, mcs.WithMiddleware(tracing.New(
		tracing.WithTracerProvider(tracenoop.NewTracerProvider()), tracing.WithMeterProvider(mp))))
	d.ExecuteTool(context.Background(), "echo", nil)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) != 1 || len(rm.ScopeMetrics[0].Metrics) != 1 {
		t.Fatalf("metrics %+v", rm.ScopeMetrics)
	}
	if n := rm.ScopeMetrics[0].Metrics[0].Data.(metricdata.Histogram[float64]).DataPoints[0].Count; n != 1 {
		t.Errorf("count %d", n)
	}
}

// leaky fails with an error that echoes its arguments, as some upstream APIs do.
type leaky struct{ toolbox }

func (leaky) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	return nil, fmt.Errorf("upstream rejected %v: GET /v1/items?access_token=abc123xyz", args["api_key"])
}

func TestStatusRedacted(t *testing.T) {
	f := newFixture(t)
	d := mcs.NewBaseDriver(leaky{}, mcs.WithMiddleware(f.tracing))
	d.ExecuteTool(context.Background(), "echo", map[string]any{"api_key": "sk-live-4242"})
	desc := f.spans.Ended()[0].Status().Description
	if strings.Contains(desc, "sk-live-4242") || strings.Contains(desc, "abc123xyz") || !strings.Contains(desc, "upstream rejected") {
		t.Errorf("status description %q", desc)
	}
}
