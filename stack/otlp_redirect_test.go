package stack

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// otlpStack builds a stack whose tracing middleware exports to the two
// endpoints, runs one call through it and closes it, which flushes the spans
// and the metrics. It returns the error of Close.
func otlpStack(t *testing.T, traces, metrics string) error {
	t.Helper()
	s, err := Parse(filepath.Join(t.TempDir(), "mcs.toml"), []byte(otlpDoc(t, traces, metrics)))
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
	return s.Close()
}

// otlpDoc is a stack file of one filesystem driver whose tracing middleware
// exports to the two endpoints; more is appended to [middleware.tracing].
func otlpDoc(t *testing.T, traces, metrics string, more ...string) string {
	return `[[driver]]
label = "files"
type = "filesystem"
root = ` + strconv.Quote(t.TempDir()) + `

[middleware]
order = ["tracing"]

[middleware.tracing]
otlp_endpoint = "` + traces + `"
otlp_metrics_endpoint = "` + metrics + `"
` + strings.Join(more, "\n")
}

// headerLog records the requests a server receives: the path and the api-key
// header of each.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (h *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.URL.Path+" api-key="+r.Header.Get("api-key"))
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (h *headerLog) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// A collector that answers 307 to another host must not get the exporter to
// send the spans, the metrics and the operator's OTLP headers there.
func TestAttackOTLPRedirectCarriesNoHeaders(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=operator-secret")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=operator-secret")
	var stolen headerLog
	elsewhere := httptest.NewServer(stolen.wrap(&otlpReceiver{}))
	t.Cleanup(elsewhere.Close)
	var asked headerLog
	collector := httptest.NewServer(asked.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})))
	t.Cleanup(collector.Close)

	err := otlpStack(t, collector.URL+"/v1/traces", collector.URL+"/v1/metrics")

	if got := stolen.requests(); len(got) != 0 {
		t.Errorf("the host the collector redirected to received %q; it must receive nothing", got)
	}
	got := asked.requests()
	for _, want := range []string{"/v1/traces api-key=operator-secret", "/v1/metrics api-key=operator-secret"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("the configured collector received %q, want a request %q", got, want)
		}
	}
	// The metric reader reports the failed flush; the message says what to do.
	if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), "otlp_metrics_endpoint") {
		t.Errorf("Close: %v, want the refused redirect named with the key to fix", err)
	}
}

// A redirect to the same origin (scheme, host, port) is followed: the spans
// and the metrics arrive.
func TestOTLPSameOriginRedirectDelivers(t *testing.T) {
	rec := &otlpReceiver{}
	mux := http.NewServeMux()
	mux.Handle("/moved/", http.StripPrefix("/moved", rec))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	if err := otlpStack(t, srv.URL+"/v1/traces", srv.URL+"/v1/metrics"); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.spans) != 1 || len(rec.metrics) == 0 {
		t.Errorf("spans %q, metrics %q received through the redirect; want one span and the duration", rec.spans, rec.metrics)
	}
}

// writeCert writes the certificate of a TLS test server as a PEM file.
func writeCert(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ca.pem")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// strangerCA writes a fresh self-signed CA certificate as a PEM file.
func strangerCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stranger"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "stranger.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// The stack's own HTTP client still trusts the collector the operator named in
// OTEL_EXPORTER_OTLP_CERTIFICATE; the signal's own variable wins over it.
func TestOTLPCertificateVariableHonoured(t *testing.T) {
	rec := &otlpReceiver{}
	srv := httptest.NewTLSServer(rec)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", writeCert(t, srv))
	// A CA that did not sign the collector's certificate: the generic variable
	// above serves the metrics, the traces one must be the one used for spans.
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", strangerCA(t))

	err := otlpStack(t, srv.URL+"/v1/traces", srv.URL+"/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	spans, metrics := len(rec.spans), len(rec.metrics)
	rec.mu.Unlock()
	if spans != 0 || metrics == 0 {
		t.Errorf("%d spans, %d metrics received; want no span (its certificate variable names another CA) and the duration", spans, metrics)
	}

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", writeCert(t, srv))
	if err := otlpStack(t, srv.URL+"/v1/traces", srv.URL+"/v1/metrics"); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.spans) != 1 {
		t.Errorf("spans received: %q, want one over TLS", rec.spans)
	}
}

// A certificate variable naming a file that is not a PEM certificate stops the
// build with an error naming the variable.
func TestOTLPBadCertificateVariable(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, env, value string }{
		{"not pem", "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", bad},
		{"missing", "OTEL_EXPORTER_OTLP_CERTIFICATE", filepath.Join(t.TempDir(), "absent.pem")},
		{"key without certificate", "OTEL_EXPORTER_OTLP_CLIENT_KEY", bad},
		{"bad pair", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", bad},
		{"timeout", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			if tc.env == "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE" {
				t.Setenv("OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", bad)
			}
			doc := otlpDoc(t, "https://127.0.0.1:1/v1/traces", "https://127.0.0.1:1/v1/metrics")
			s, err := Parse(filepath.Join(t.TempDir(), "mcs.toml"), []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Build(context.Background())
			if err == nil {
				s.Close()
				t.Fatalf("built with %s=%s", tc.env, tc.value)
			}
			if !strings.Contains(err.Error(), tc.env) {
				t.Errorf("error %q does not name %s", err, tc.env)
			}
		})
	}
}

// The timeout variables set the client's limit, in milliseconds, the signal's
// own winning; without them it is 10 s.
func TestOTLPTimeoutVariable(t *testing.T) {
	u := mustURL(t, "http://127.0.0.1:4318/v1/traces")
	c, err := otlpHTTPClient(u, "otlp_endpoint", "TRACES")
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 10*time.Second {
		t.Errorf("default timeout %v, want 10s", c.Timeout)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "750")
	for signal, want := range map[string]time.Duration{"TRACES": 750 * time.Millisecond, "METRICS": 2500 * time.Millisecond} {
		c, err := otlpHTTPClient(u, "otlp_endpoint", signal)
		if err != nil {
			t.Fatal(err)
		}
		if c.Timeout != want {
			t.Errorf("%s timeout %v, want %v", signal, c.Timeout, want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
