package rest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

func TestHealthcheck(t *testing.T) {
	petstore := fixture(t, "petstore.yaml")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok", "/openapi.yaml":
			_, _ = w.Write(petstore)
		case "/moved":
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		default:
			http.Error(w, "down", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	absolute := []byte(strings.Replace(string(petstore), "url: /v1", "url: "+srv.URL+"/broken", 1))
	tests := []struct {
		name   string
		cfg    Config
		status mcs.HealthStatus
		detail string // prefix
	}{
		{"spec URL 200", Config{SpecURL: srv.URL + "/ok?token=abc"}, mcs.HealthOK, "GET " + srv.URL + "/ok: 200 OK"},
		{"spec URL 302, not followed", Config{SpecURL: srv.URL + "/moved"}, mcs.HealthOK, "GET " + srv.URL + "/moved: 302 Found"},
		{"spec URL 404", Config{SpecURL: srv.URL + "/missing"}, mcs.HealthWarning, "GET " + srv.URL + "/missing: 404 Not Found"},
		{"spec URL 500", Config{SpecURL: srv.URL + "/broken"}, mcs.HealthError, "GET " + srv.URL + "/broken: 500 Internal Server Error"},
		{"unreachable", Config{SpecURL: closed.URL + "/openapi.yaml"}, mcs.HealthError, "unreachable: Get " + closed.URL + "/openapi.yaml: "},
		{"base URL 200", Config{Spec: petstore, BaseURL: srv.URL + "/ok"}, mcs.HealthOK, "GET " + srv.URL + "/ok: 200 OK"},
		{"base URL 404", Config{Spec: petstore, BaseURL: srv.URL + "/missing"}, mcs.HealthWarning, "GET " + srv.URL + "/missing: 404 Not Found"},
		{"base URL unreachable", Config{Spec: petstore, BaseURL: closed.URL}, mcs.HealthError, "unreachable: Get " + closed.URL},
		{"server of an inline spec", Config{Spec: absolute}, mcs.HealthError, "GET " + srv.URL + "/broken: 500"},
		{"no usable server", Config{Spec: petstore}, mcs.HealthError, `the document gives no usable server URL: server URL "/v1" is relative`},
		{"spec does not load", Config{Spec: []byte("swagger: '1.2'\n")}, mcs.HealthError, "load OpenAPI document inline spec: swagger version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := d.Healthcheck(context.Background())
			if got.Status != tc.status || !strings.HasPrefix(got.Detail, tc.detail) {
				t.Errorf("Healthcheck = %+v, want %s with detail starting %q", got, tc.status, tc.detail)
			}
			if strings.Contains(got.Detail, "abc") {
				t.Errorf("the detail shows the spec URL's query: %q", got.Detail)
			}
		})
	}
}

func TestHealthcheckHonoursContext(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	td := mustToolDriver(t, Config{SpecURL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := td.Healthcheck(ctx)
	if got.Status != mcs.HealthError || !strings.Contains(got.Detail, "context canceled") {
		t.Errorf("Healthcheck = %+v, want ERROR for the cancelled context", got)
	}
}

func TestMeta(t *testing.T) {
	td := mustToolDriver(t, Config{Spec: fixture(t, "petstore.yaml")})
	binding := []mcs.Binding{{Capability: "rest", Adapter: "http", SpecFormat: "OpenAPI"}}
	wantTD := mcs.Meta{
		ID: "mcs-go/rest", Name: "REST (OpenAPI)", Version: Version, Bindings: binding,
		Capabilities: []mcs.Capability{mcs.CapabilityOrchestratable, mcs.CapabilityHealthcheck},
	}
	if diff := cmp.Diff(wantTD, td.Meta()); diff != "" {
		t.Errorf("ToolDriver meta (-want +got):\n%s", diff)
	}
	d, err := New(Config{Spec: fixture(t, "petstore.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	wantD := mcs.Meta{
		ID: "mcs-go/rest", Name: "REST (OpenAPI)", Version: Version, Bindings: binding, SupportedLLMs: []string{"*"},
		// BaseDriver drops the tool driver's healthcheck flag (it has no Healthcheck);
		// the Driver, which forwards it, adds it back.
		Capabilities: []mcs.Capability{
			mcs.CapabilityOrchestratable, mcs.CapabilityStandalone, mcs.CapabilityNativeTools,
			mcs.CapabilityStreaming, mcs.CapabilityToolMiddleware, mcs.CapabilityHealthcheck,
		},
	}
	if diff := cmp.Diff(wantD, d.Meta()); diff != "" {
		t.Errorf("Driver meta (-want +got):\n%s", diff)
	}
}
