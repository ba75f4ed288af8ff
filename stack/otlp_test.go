package stack

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP collector on loopback that keeps the names of the
// spans and metrics it receives, and the service.name of their resources.
type otlpReceiver struct {
	mu       sync.Mutex
	spans    []string
	metrics  []string
	services []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		req := &coltrace.ExportTraceServiceRequest{}
		if proto.Unmarshal(body, req) != nil {
			http.Error(w, "bad protobuf", http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			o.services = append(o.services, serviceName(rs.Resource.GetAttributes()))
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					o.spans = append(o.spans, s.Name)
				}
			}
		}
		resp = &coltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		req := &colmetrics.ExportMetricsServiceRequest{}
		if proto.Unmarshal(body, req) != nil {
			http.Error(w, "bad protobuf", http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			o.services = append(o.services, serviceName(rm.Resource.GetAttributes()))
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					n := 0
					for _, p := range m.GetHistogram().GetDataPoints() {
						n += int(p.GetCount())
					}
					o.metrics = append(o.metrics, m.Name+" count="+strconv.Itoa(n))
				}
			}
		}
		resp = &colmetrics.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func serviceName(attrs []*commonpb.KeyValue) string {
	for _, a := range attrs {
		if a.Key == "service.name" {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// A stack with both OTLP endpoints exports the span and the duration of every
// call, under its service name, when it closes.
func TestTracingExportsSpansAndMetrics(t *testing.T) {
	rec := &otlpReceiver{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	doc := otlpDoc(t, srv.URL+"/v1/traces", srv.URL+"/v1/metrics", `service_name = "stack-test"`)
	s, err := Parse(filepath.Join(t.TempDir(), "mcs.toml"), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := d.ProcessLLMResponse(context.Background(), `{"tool": "list_directory", "arguments": {"path": "."}}`)
	if !r.CallExecuted {
		t.Fatalf("the call did not run: %+v", r.Calls)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.spans) != 1 || rec.spans[0] != "execute_tool list_directory" {
		t.Errorf("spans received: %q", rec.spans)
	}
	found := false
	for _, m := range rec.metrics {
		found = found || m == "mcs.tool.call.duration count=1"
	}
	if !found {
		t.Errorf("metrics received: %q, want mcs.tool.call.duration with one measurement", rec.metrics)
	}
	for _, n := range rec.services {
		if n != "stack-test" {
			t.Errorf("service.name %q, want stack-test", n)
		}
	}
	if len(rec.services) < 2 {
		t.Errorf("resources received: %q, want one of spans and one of metrics", rec.services)
	}
}
