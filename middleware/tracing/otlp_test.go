package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/csv"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/middleware/tracing"
	"github.com/mcs-go/mcs/orchestrator"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestNestedAcrossOrchestrator: the orchestrator's call span is the parent of
// the routed driver's span, and both sit under the caller's span.
func TestNestedAcrossOrchestrator(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello"), 0o600)
	os.WriteFile(filepath.Join(root, "p.csv"), []byte("n\n1\n"), 0o600)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tr := tracing.New(tracing.WithTracerProvider(tp))

	files, err := filesystem.New(filesystem.Config{Root: root, ReadOnly: true}, mcs.WithMiddleware(tr))
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	tables, err := csv.New(csv.Config{Root: root}, mcs.WithMiddleware(tr))
	if err != nil {
		t.Fatal(err)
	}
	defer tables.Close()
	o := orchestrator.New(orchestrator.Flat(), mcs.WithMiddleware(tr))
	if err := o.AddDriver("files", files); err != nil {
		t.Fatal(err)
	}
	if err := o.AddDriver("tables", tables); err != nil {
		t.Fatal(err)
	}
	ctx, round := tp.Tracer("test").Start(context.Background(), "chat test-model")
	resp := o.ProcessLLMResponse(ctx, `{"tool": "read_file", "arguments": {"path": "a.txt"}}`)
	round.End()
	if !resp.CallExecuted {
		t.Fatalf("call not executed: %+v", resp)
	}
	spans := rec.Ended()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	if len(spans) != 3 {
		t.Fatalf("spans %v, want the round, the orchestrator's and the driver's", names)
	}
	inner, outer := spans[0], spans[1]
	if inner.Name() != "execute_tool read_file" || outer.Name() != "execute_tool read_file" {
		t.Fatalf("spans %v", names)
	}
	if inner.Parent().SpanID() != outer.SpanContext().SpanID() {
		t.Error("the driver's span is not a child of the orchestrator's")
	}
	if outer.Parent().SpanID() != round.SpanContext().SpanID() {
		t.Error("the orchestrator's span is not a child of the caller's")
	}
	if inner.SpanContext().TraceID() != round.SpanContext().TraceID() {
		t.Error("different traces")
	}
	ia, oa := attrs(inner), attrs(outer)
	if ia["mcs.driver.id"] != "mcs-go/filesystem" || ia["mcs.driver.label"] != "files" {
		t.Errorf("driver span attributes %v", ia)
	}
	if oa["mcs.driver.label"] != "" || oa["mcs.driver.id"] == "mcs-go/filesystem" {
		t.Errorf("orchestrator span attributes %v", oa)
	}
}

// globalProviderSet records that TestGlobalProviderByDefault set the global
// provider in this process.
var globalProviderSet bool

// TestGlobalProviderByDefault: without options the global provider is used, even
// one set after New.
func TestGlobalProviderByDefault(t *testing.T) {
	if globalProviderSet {
		// OTel's global delegate forwards to the first provider ever set, for the
		// life of the process; a later run (go test -count=2) cannot test "set
		// after New" again.
		t.Skip("the global tracer provider was set by an earlier run of this test")
	}
	globalProviderSet = true
	tr := tracing.New()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	defer tp.Shutdown(context.Background())
	d := mcs.NewBaseDriver(toolbox{}, mcs.WithMiddleware(tr))
	d.ExecuteTool(context.Background(), "echo", nil)
	if n := len(rec.Ended()); n != 1 {
		t.Fatalf("%d spans through the global provider, want 1", n)
	}
}

// TestOTLPExport sends the spans with the OTLP/HTTP exporter to a receiver on
// loopback that decodes the protobuf request.
func TestOTLPExport(t *testing.T) {
	got := make(chan *coltrace.ExportTraceServiceRequest, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		req := &coltrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			t.Errorf("decode: %v", err)
		}
		got <- req
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(out)
	}))
	defer srv.Close()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	d := mcs.NewBaseDriver(toolbox{}, mcs.WithMiddleware(tracing.New(tracing.WithTracerProvider(tp))))
	d.ExecuteTool(mcs.ContextWithCallInfo(ctx, mcs.CallInfo{CallID: "call_7"}), "echo", map[string]any{"text": "hi"})
	d.ExecuteTool(ctx, "fail", nil)
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}
	var spans []*tracepb.Span
	for len(got) > 0 {
		req := <-got
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.GetName() != tracing.ScopeName {
					t.Errorf("scope %q", ss.Scope.GetName())
				}
				spans = append(spans, ss.Spans...)
			}
		}
	}
	if len(spans) != 2 {
		t.Fatalf("%d spans received, want 2", len(spans))
	}
	kv := func(s *tracepb.Span) map[string]string {
		m := map[string]string{}
		for _, a := range s.Attributes {
			m[a.Key] = anyValue(a.Value)
		}
		return m
	}
	want := map[string]string{
		"gen_ai.operation.name":   "execute_tool",
		"gen_ai.tool.name":        "echo",
		"gen_ai.tool.type":        "function",
		"gen_ai.tool.call.id":     "call_7",
		"gen_ai.tool.description": "Echo the arguments.",
		"mcs.driver.id":           "toolbox",
		"mcs.outcome":             "ok",
	}
	if spans[0].Name != "execute_tool echo" || spans[0].Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Errorf("span %q kind %v", spans[0].Name, spans[0].Kind)
	}
	if diff := cmp.Diff(want, kv(spans[0])); diff != "" {
		t.Errorf("exported attributes (-want +got):\n%s", diff)
	}
	fail := kv(spans[1])
	if fail["error.type"] != "*errors.errorString" || fail["mcs.outcome"] != "error" ||
		spans[1].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || spans[1].Status.GetMessage() != "fail: disk on fire" {
		t.Errorf("failed span: %v, status %v", fail, spans[1].Status)
	}
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	}
	return v.String()
}
