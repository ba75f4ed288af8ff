package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcs-go/mcs"
)

const (
	initBody        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	listBody        = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// post builds a POST of body as an MCP client sends it, with the session's ID
// when session is not empty and the extra headers (name, value pairs).
func post(target, body, session string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		r.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// serve runs one request through h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// open initializes a session through h and returns its ID.
func open(t *testing.T, h http.Handler) string {
	t.Helper()
	w := serve(h, post("http://127.0.0.1/", initBody, ""))
	id := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q (session %q)", w.Code, w.Body.String(), id)
	}
	if w := serve(h, post("http://127.0.0.1/", initializedBody, id)); w.Code != http.StatusAccepted {
		t.Fatalf("initialized: %d %q", w.Code, w.Body.String())
	}
	return id
}

// A batch of thousands of tools/list in one request, sent without the
// MCP-Protocol-Version header (so the SDK takes it for protocol 2025-03-26,
// which had batches), was answered in full: a 2 MiB request returned 344 MB.
// Every batch is refused now, with a JSON-RPC error, before any of it runs.
func TestAttackBatchRefused(t *testing.T) {
	batch := "[" + strings.TrimSuffix(strings.Repeat(listBody+",", 64), ",") + "]"
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			opts := []Option{WithLogger(quietLog())}
			if stateless {
				opts = append(opts, WithStateless())
			}
			s := New(&fake{}, opts...)
			defer s.Close()
			h := s.Handler()
			session := ""
			if !stateless {
				session = open(t, h)
			}
			for _, body := range []string{batch, " \n\t" + batch, "[" + listBody + "]"} {
				w := serve(h, post("http://127.0.0.1/", body, session))
				if w.Code != http.StatusBadRequest {
					t.Fatalf("batch of %d bytes: status %d, want 400; %d bytes of answer", len(body), w.Code, w.Body.Len())
				}
				var resp struct {
					ID    any `json:"id"`
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Fatalf("answer %q is not a JSON-RPC error: %v", w.Body.String(), err)
				}
				if resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "batch") || !strings.Contains(resp.Error.Message, "one message per request") {
					t.Errorf("error = %+v; want invalid request saying batches are not accepted", resp.Error)
				}
			}
			// One message still works.
			if w := serve(h, post("http://127.0.0.1/", listBody, session)); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"greet"`) {
				t.Errorf("tools/list: %d %q", w.Code, w.Body.String())
			}
		})
	}
}

// A request body over the byte cap is refused with 413 and a message that
// names the cap, before the SDK or the driver sees it.
func TestAttackRequestBodyCapped(t *testing.T) {
	s := New(&fake{}, WithLogger(quietLog()), WithMaxRequestBytes(4096))
	defer s.Close()
	h := s.Handler()
	session := open(t, h)
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"` + strings.Repeat("x", 5000) + `"}}}`
	w := serve(h, post("http://127.0.0.1/", big, session))
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "4096 bytes") {
		t.Errorf("status %d %q; want 413 naming the limit", w.Code, w.Body.String())
	}
	if s.opts.maxBody != 4096 {
		t.Errorf("max request bytes %d", s.opts.maxBody)
	}
	// The default is DefaultMaxRequestBytes, or the argument limit plus room
	// for the envelope when that is larger.
	if d := New(&fake{}).opts.maxBody; d != DefaultMaxRequestBytes {
		t.Errorf("default max request bytes %d, want %d", d, DefaultMaxRequestBytes)
	}
	if d := New(&fake{}, WithMaxArgumentBytes(8<<20)).opts.maxBody; d != 9<<20 {
		t.Errorf("max request bytes with 8 MiB of arguments %d, want 9 MiB", d)
	}
}

// withLocal makes r arrive on a connection to local, as net/http marks it.
func withLocal(r *http.Request, local string) *http.Request {
	addr, err := net.ResolveTCPAddr("tcp", local)
	if err != nil {
		panic(err)
	}
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
}

// DNS rebinding: a page of rebind.example whose name now resolves to the
// server's address sends Host: rebind.example. The SDK refused that only on a
// loopback interface; a server listening on every interface answered it on
// its other addresses. The Host allow-list applies on every interface now.
func TestAttackHostNotAllowed(t *testing.T) {
	s := New(&fake{}, WithLogger(quietLog()), WithAllowedHosts("mcs.internal", "Tools.Example.COM."))
	defer s.Close()
	h := s.Handler()
	tests := []struct {
		local, host string
		ok          bool
	}{
		{"192.0.2.10:8080", "rebind.example", false},
		{"192.0.2.10:8080", "rebind.example:8080", false},
		{"192.0.2.10:8080", "", false},
		{"127.0.0.1:8080", "rebind.example:8080", false},
		{"192.0.2.10:8080", "192.0.2.11:8080", false},
		{"192.0.2.10:8080", "192.0.2.10:8080", true}, // the address the client connected to
		{"[2001:db8::1]:8080", "[2001:db8::1]:8080", true},
		{"192.0.2.10:8080", "mcs.internal:8080", true}, // configured
		{"127.0.0.1:8080", "mcs.internal:8080", true},  // configured, through a proxy on the machine
		{"192.0.2.10:8080", "tools.example.com", true},
		{"192.0.2.10:8080", "MCS.internal.", true},
		{"127.0.0.1:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"[::1]:8080", "[::1]:8080", true},
	}
	for _, tc := range tests {
		r := withLocal(post("http://x/", initBody, ""), tc.local)
		r.Host = tc.host
		w := serve(h, r)
		if got := w.Code != http.StatusForbidden; got != tc.ok {
			t.Errorf("Host %q on %s: status %d %q; want allowed=%v", tc.host, tc.local, w.Code, w.Body.String(), tc.ok)
		}
		if !tc.ok && !strings.Contains(w.Body.String(), "Host") {
			t.Errorf("Host %q: answer %q does not say the Host is refused", tc.host, w.Body.String())
		}
	}
	// A GET of the event stream and a DELETE are checked too.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		r := withLocal(httptest.NewRequest(method, "http://x/", nil), "192.0.2.10:8080")
		r.Host = "rebind.example"
		if w := serve(h, r); w.Code != http.StatusForbidden {
			t.Errorf("%s with a foreign Host: %d", method, w.Code)
		}
	}
}

// A web page of another origin may send requests to a server on the user's
// machine; the MCP transport specification requires servers to validate
// Origin and answer 403 to one that is not allowed. The handler accepted any.
func TestAttackOriginNotAllowed(t *testing.T) {
	s := New(&fake{}, WithLogger(quietLog()), WithAllowedOrigins("http://localhost:6274", "HTTPS://App.Example"))
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "http://")
	tests := []struct {
		origin string
		ok     bool
	}{
		{"http://evil.example", false},
		{"null", false},
		{"http://localhost:3000", false}, // another local application
		{"http://" + host + ".evil.example", false},
		{"https://app.example:8443", false},
		{"file://", false},
		{"http://" + host, true}, // the server's own pages
		{"http://localhost:6274", true},
		{"https://app.example", true},
		{"https://app.example:443", true},
		{"", true}, // no Origin: not a browser
	}
	for _, tc := range tests {
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			var body io.Reader
			if method == http.MethodPost {
				body = strings.NewReader(initBody)
			}
			r, _ := http.NewRequest(method, ts.URL, body)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			resp, err := ts.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			text, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := resp.StatusCode != http.StatusForbidden; got != tc.ok {
				t.Errorf("%s with Origin %q: %d %q; want allowed=%v", method, tc.origin, resp.StatusCode, text, tc.ok)
			}
			if !tc.ok && !strings.Contains(string(text), "Origin") {
				t.Errorf("Origin %q: answer %q does not say the Origin is refused", tc.origin, text)
			}
		}
	}
}

// Every initialize opened a session that lived until the client deleted it:
// a client could open sessions until memory ran out. Past the cap a new
// session gets 503; ending one makes room.
func TestAttackSessionCap(t *testing.T) {
	s := New(&fake{}, WithLogger(quietLog()), WithMaxSessions(2))
	defer s.Close()
	h := s.Handler()
	first := open(t, h)
	open(t, h)
	w := serve(h, post("http://127.0.0.1/", initBody, ""))
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "2 sessions") {
		t.Fatalf("third session: %d %q; want 503 naming the cap", w.Code, w.Body.String())
	}
	// Open sessions still work.
	if w := serve(h, post("http://127.0.0.1/", listBody, first)); w.Code != http.StatusOK {
		t.Errorf("tools/list in an open session: %d", w.Code)
	}
	del := httptest.NewRequest(http.MethodDelete, "http://127.0.0.1/", nil)
	del.Header.Set("Mcp-Session-Id", first)
	if w := serve(h, del); w.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %q", w.Code, w.Body.String())
	}
	open(t, h)
	if New(&fake{}).opts.maxSessions != DefaultMaxSessions {
		t.Error("default session cap")
	}
}

// A session the client never ended stayed forever. Now it ends after the idle
// timeout; a request in between starts the timeout again.
func TestAttackIdleSessionEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(&fake{}, WithLogger(quietLog()), WithMaxSessions(1))
		defer s.Close()
		h := s.Handler()
		id := open(t, h)
		time.Sleep(DefaultSessionIdleTimeout - time.Second)
		if w := serve(h, post("http://127.0.0.1/", listBody, id)); w.Code != http.StatusOK {
			t.Fatalf("tools/list before the timeout: %d %q", w.Code, w.Body.String())
		}
		time.Sleep(DefaultSessionIdleTimeout - time.Second)
		if w := serve(h, post("http://127.0.0.1/", listBody, id)); w.Code != http.StatusOK {
			t.Fatalf("tools/list within the timeout of the last request: %d %q", w.Code, w.Body.String())
		}
		time.Sleep(DefaultSessionIdleTimeout + time.Second)
		synctest.Wait()
		if w := serve(h, post("http://127.0.0.1/", listBody, id)); w.Code != http.StatusNotFound {
			t.Fatalf("tools/list after the idle timeout: %d %q; want 404 (session ended)", w.Code, w.Body.String())
		}
		open(t, h) // the ended session no longer counts against the cap
	})
	synctest.Test(t, func(t *testing.T) {
		s := New(&fake{}, WithLogger(quietLog()), WithSessionIdleTimeout(time.Minute))
		defer s.Close()
		h := s.Handler()
		id := open(t, h)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if w := serve(h, post("http://127.0.0.1/", listBody, id)); w.Code != http.StatusNotFound {
			t.Fatalf("tools/list after a 1 minute idle timeout: %d", w.Code)
		}
	})
}

// pipeListener is a listener of in-memory connections, for a server inside a
// synctest bubble.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }

// dial connects a client end to the listener.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

// A client that sends the headers of a POST and then its body a byte at a
// time (or not at all) held its request, and its connection, for ever. The
// body must arrive within the deadline; then the request is answered 408 and
// the connection closed.
func TestAttackSlowBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(&fake{}, WithLogger(quietLog()))
		defer s.Close()
		ln := newPipeListener()
		hs := &http.Server{Handler: s.Handler()}
		served := make(chan error, 1)
		go func() { served <- hs.Serve(ln) }()
		defer func() { hs.Close(); <-served }()

		c := ln.dial()
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", len(initBody), initBody[:20])
		answered := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(c)
			answered <- string(b)
		}()
		select {
		case got := <-answered:
			if !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, "request body") {
				t.Errorf("answer to a stalled body:\n%s", got)
			}
		case <-time.After(DefaultRequestBodyTimeout + time.Minute):
			t.Fatalf("no answer %v after the body stalled", DefaultRequestBodyTimeout+time.Minute)
		}
	})
}

// gated is the fake driver with a tool "wait" that runs until released and
// then reports whether its context was cancelled meanwhile.
type gated struct {
	fake
	started, release chan struct{}
}

func (g *gated) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	tools, _ := g.fake.ListTools(ctx)
	return append(tools, mcs.Tool{Name: "wait", Description: "waits until released"}), nil
}

func (g *gated) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if name != "wait" {
		return g.fake.ExecuteTool(ctx, name, args)
	}
	g.started <- struct{}{}
	<-g.release
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("cancelled while waiting: %w", err)
	}
	return "released", nil
}

// The body deadline covers the body only: a call that runs longer than it,
// after its body arrived, is not cut off.
func TestServeHTTPLongCallOutlivesBodyDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gated{started: make(chan struct{}, 1), release: make(chan struct{})}
		s := New(g, WithLogger(quietLog()), WithStateless())
		defer s.Close()
		ln := newPipeListener()
		hs := &http.Server{Handler: s.Handler()}
		served := make(chan error, 1)
		go func() { served <- hs.Serve(ln) }()
		defer func() { hs.Close(); <-served }()

		c := ln.dial()
		defer c.Close()
		call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", len(call), call)
		<-g.started
		time.Sleep(3 * DefaultRequestBodyTimeout)
		close(g.release)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "released") {
			t.Errorf("a call longer than the body deadline: %d %s", resp.StatusCode, b)
		}
	})
}
