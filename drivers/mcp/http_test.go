package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// flakyHandler serves h, or 503 while down; it records the Authorization
// headers it saw.
type flakyHandler struct {
	h    http.Handler
	down atomic.Bool
	mu   sync.Mutex
	auth map[string]bool
}

func (f *flakyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.auth[r.Header.Get("Authorization")] = true
	f.mu.Unlock()
	if f.down.Load() {
		http.Error(w, "gone", http.StatusServiceUnavailable)
		return
	}
	f.h.ServeHTTP(w, r)
}

func TestStreamableHTTP(t *testing.T) {
	srv := newTestServer(0)
	f := &flakyHandler{h: mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil), auth: map[string]bool{}}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { // sessions the client could not end while the endpoint was down
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	d, err := New(testCtx(t), Config{URL: ts.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer t0ken"}, HTTPClient: hc, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	got, err := d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "over http"})
	if err != nil || got != "over http" {
		t.Fatalf("echo = %v, %v", got, err)
	}
	f.mu.Lock()
	if !f.auth["Bearer t0ken"] || len(f.auth) != 1 {
		t.Errorf("Authorization headers seen: %v, want only the configured one", f.auth)
	}
	f.mu.Unlock()
	if m := d.Meta(); m.Bindings[0].Adapter != "streamable-http" || !m.HasCapability(mcs.CapabilityHealthcheck) {
		t.Errorf("meta = %+v", m)
	}

	f.down.Store(true)
	h := d.Healthcheck(testCtx(t))
	if h.Status != mcs.HealthError || !strings.Contains(h.Detail, "URL "+ts.URL+"/mcp") {
		t.Errorf("health with the endpoint gone = %+v", h)
	}
	_, err = d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "x"})
	if err == nil || !strings.Contains(err.Error(), ts.URL) || strings.Contains(err.Error(), "t0ken") {
		t.Errorf("call with the endpoint gone: %v, want an error naming the URL without the token", err)
	}

	f.down.Store(false)
	got, err = d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "again"})
	if err != nil || got != "again" {
		t.Errorf("call after the endpoint came back = %v, %v", got, err)
	}
	if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthOK {
		t.Errorf("health after the endpoint came back = %+v", h)
	}
}

func TestStreamableHTTPUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL + "/mcp"
	ts.Close()
	_, err := NewToolDriver(testCtx(t), Config{URL: url})
	if err == nil || !strings.Contains(err.Error(), "URL "+url) {
		t.Errorf("err = %v, want an error naming the URL", err)
	}
}
