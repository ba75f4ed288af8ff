// Package replay is an HTTP server on loopback that answers model requests with
// recorded replies, one per request, and keeps every request body, so tests of
// the model adapters can check what was sent round by round.
package replay

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
)

// Reply is one recorded answer.
type Reply struct {
	Status      int               // 0: 200
	ContentType string            // "": text/event-stream for SSE, application/json otherwise
	Header      map[string]string // extra headers (retry-after-ms, ...)
	Body        []byte
	// Hold, when set, is closed by the test to let the handler end: the body is
	// written and flushed, then the handler waits for Hold or for the client to go.
	Hold chan struct{}
}

// SSE returns the server-sent event stream in the file at path.
func SSE(tb testing.TB, path string) Reply {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("replay: %v", err)
	}
	return Reply{ContentType: "text/event-stream", Body: b}
}

// JSON returns a JSON answer with status.
func JSON(status int, body string) Reply {
	return Reply{Status: status, ContentType: "application/json", Body: []byte(body)}
}

// Server answers each request with the next reply; after the last one it answers
// 500, or repeats the last one when Loop is set. Safe for concurrent use.
type Server struct {
	*httptest.Server
	mu      sync.Mutex
	replies []Reply
	next    int
	loop    bool
	bodies  [][]byte
	paths   []string
}

// New starts a server with replies and closes it when the test ends.
func New(tb testing.TB, replies ...Reply) *Server {
	s := Start(replies...)
	tb.Cleanup(s.Close)
	return s
}

// Start starts a server with replies; the caller closes it (for examples).
func Start(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// MustSSE is SSE for examples: it panics when the file cannot be read.
func MustSSE(path string) Reply {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return Reply{ContentType: "text/event-stream", Body: b}
}

// Loop makes the server repeat its replies from the first once they run out and
// stop keeping request bodies (for benchmarks).
func (s *Server) Loop() *Server {
	s.mu.Lock()
	s.loop = true
	s.mu.Unlock()
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	if !s.loop {
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, r.URL.Path)
	}
	if s.next >= len(s.replies) {
		if !s.loop || len(s.replies) == 0 {
			s.mu.Unlock()
			http.Error(w, `{"error":{"message":"replay: no more recorded replies","type":"test"}}`, http.StatusInternalServerError)
			return
		}
		s.next = 0
	}
	rep := s.replies[s.next]
	s.next++
	s.mu.Unlock()
	ct := rep.ContentType
	if ct == "" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(rep.Body)
	if rep.Hold != nil {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case <-rep.Hold:
		case <-r.Context().Done():
		}
	}
}

// Requests returns the number of requests served.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// Paths returns the URL path of every request, in order.
func (s *Server) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// Bodies returns every request body decoded, in order; a body that is not a JSON
// object fails the test.
func (s *Server) Bodies(tb testing.TB) []map[string]any {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.bodies))
	for i, b := range s.bodies {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			tb.Fatalf("replay: request %d is not JSON: %v\n%s", i+1, err, b)
		}
	}
	return out
}
