package rest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// recorded is one request as the server received it.
type recorded struct {
	Method string
	URI    string      // the request target exactly as sent: escaped path and raw query
	Header http.Header // without the headers the transport adds
	Body   string
}

// apiServer is a loopback API that records every request outside the spec
// paths, and serves spec documents.
type apiServer struct {
	*httptest.Server

	mu       sync.Mutex
	reqs     []recorded
	specs    map[string][]byte
	specHits int
	respond  http.HandlerFunc
}

// newAPI starts a server; respond writes the answer to API requests (nil: 200
// with the body "ok").
func newAPI(t testing.TB, respond http.HandlerFunc) *apiServer {
	t.Helper()
	s := &apiServer{specs: map[string][]byte{}, respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if doc, ok := s.specs[r.URL.Path]; ok {
		s.specHits++
		s.mu.Unlock()
		_, _ = w.Write(doc)
		return
	}
	body, _ := io.ReadAll(r.Body)
	h := r.Header.Clone()
	for _, k := range []string{"Accept-Encoding", "User-Agent", "Content-Length"} {
		h.Del(k)
	}
	s.reqs = append(s.reqs, recorded{Method: r.Method, URI: r.RequestURI, Header: h, Body: string(body)})
	respond := s.respond
	s.mu.Unlock()
	if respond == nil {
		_, _ = io.WriteString(w, "ok")
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	respond(w, r)
}

// serveSpec serves doc at path; "EXTERNAL" and "SERVER" in doc become the
// server's URL.
func (s *apiServer) serveSpec(path string, doc []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs[path] = []byte(strings.ReplaceAll(string(doc), "SERVER", s.URL))
	return s.URL + path
}

func (s *apiServer) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

func (s *apiServer) specRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.specHits
}

// fixture reads a file of testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// providerFunc adapts a function to auth.CredentialProvider.
type providerFunc func(ctx context.Context, scope string) (string, error)

func (f providerFunc) Token(ctx context.Context, scope string) (string, error) { return f(ctx, scope) }

// mustToolDriver builds a ToolDriver or fails the test.
func mustToolDriver(t testing.TB, cfg Config) *ToolDriver {
	t.Helper()
	td, err := NewToolDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return td
}

// hdr builds a header from key, value pairs.
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}
