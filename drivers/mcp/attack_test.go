package mcp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/origin"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawServer is a streamable HTTP MCP server written by hand, so that a test can
// answer one method the way a hostile server would: reply is asked first and
// reports whether it answered. Otherwise initialize, tools/list (one tool "t")
// and tools/call (text "ok") are answered as JSON, notifications with 202 and
// GET with 405.
func rawServer(t *testing.T, reply func(w http.ResponseWriter, method string, id json.RawMessage) bool) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		if reply != nil && reply(w, m.Method, m.ID) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`, m.ID)
		case m.Method == "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}}`, m.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// recorder is an HTTP server that records the requests it gets.
type recorder struct {
	mu   sync.Mutex
	seen []string // method, path and the credentials sent
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.seen = append(rc.seen, fmt.Sprintf("%s %s Authorization=%q X-Api-Key=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
	rc.mu.Unlock()
	http.Error(w, "nothing here", http.StatusNotFound)
}

func (rc *recorder) requests() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.seen...)
}

// A server that answers with a redirect to another host must not get the
// operator's credentials there: the redirect is refused before anything is sent.
func TestAttackRedirectCarriesNoCredentials(t *testing.T) {
	elsewhere := &recorder{}
	thief := httptest.NewServer(elsewhere)
	t.Cleanup(thief.Close)
	headers := map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k3y"}

	t.Run("to another host", func(t *testing.T) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, thief.URL+"/collect", http.StatusTemporaryRedirect)
		}))
		t.Cleanup(ts.Close)
		_, err := NewToolDriver(testCtx(t), Config{URL: ts.URL + "/mcp", Headers: headers, Logger: discardLogger()})
		if got := elsewhere.requests(); len(got) > 0 {
			t.Errorf("the other host got %v; it must get nothing", got)
		}
		if !errors.Is(err, ErrRedirect) || !strings.Contains(err.Error(), thief.URL) || !strings.Contains(err.Error(), "Config.URL") {
			t.Errorf("err = %v, want ErrRedirect naming the other origin and what to do", err)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "k3y")) {
			t.Errorf("the error shows a credential: %v", err)
		}
	})

	t.Run("after the handshake", func(t *testing.T) {
		ts := rawServer(t, func(w http.ResponseWriter, method string, _ json.RawMessage) bool {
			if method != "tools/call" {
				return false
			}
			w.Header().Set("Location", thief.URL+"/collect")
			w.WriteHeader(http.StatusPermanentRedirect)
			return true
		})
		d, err := NewToolDriver(testCtx(t), Config{URL: ts.URL, Headers: headers, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		_, err = d.ExecuteTool(testCtx(t), "t", nil)
		if got := elsewhere.requests(); len(got) > 0 {
			t.Errorf("the other host got %v; it must get nothing", got)
		}
		if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), thief.URL) {
			t.Errorf("err = %v, want the refused redirect named", err)
		}
	})

	t.Run("same origin still followed", func(t *testing.T) {
		srv := newTestServer(0)
		real := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)
		var mu sync.Mutex
		auth := map[string]bool{}
		mux := http.NewServeMux()
		mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		})
		mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth[r.Header.Get("Authorization")] = true
			mu.Unlock()
			real.ServeHTTP(w, r)
		})
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		t.Cleanup(func() {
			for ss := range srv.Sessions() {
				_ = ss.Close()
			}
		})
		hc := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(hc.CloseIdleConnections)
		d, err := NewToolDriver(testCtx(t), Config{URL: ts.URL + "/old", Headers: headers, HTTPClient: hc, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		if got, err := d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "moved"}); err != nil || got != "moved" {
			t.Errorf("call through a same-origin redirect = %v, %v", got, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !auth["Bearer s3cret"] || len(auth) != 1 {
			t.Errorf("Authorization headers at the new path: %v, want only the configured one", auth)
		}
	})
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://h.example/mcp", "https://H.example:443/other", true},
		{"http://h.example/mcp", "http://h.example:80/x", true},
		{"https://h.example/mcp", "http://h.example/mcp", false},
		{"https://h.example:8443/mcp", "https://h.example:443/mcp", false},
		{"https://h.example/mcp", "https://h.example.evil/mcp", false},
	} {
		if got := origin.Same(mustURL(t, tc.a), mustURL(t, tc.b)); got != tc.want {
			t.Errorf("origin.Same(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// flood writes the start of an answer and then filler bytes until total bytes
// were written or the client went away, without holding them in memory.
func flood(w http.ResponseWriter, start string, total int) {
	_, _ = io.WriteString(w, start)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for n := len(start); n < total; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// One answer of an HTTP server is bounded as a line of a stdio server is: an
// SSE event or a JSON body larger than MaxMessageBytes is refused while it is
// read, with an error that names the limit.
func TestAttackHugeHTTPAnswer(t *testing.T) {
	const huge = 64 << 20 // four times the limit; the server never holds it
	for _, tc := range []struct{ name, contentType, start string }{
		{"SSE event", "text/event-stream", "event: message\ndata: "},
		{"JSON body", "application/json", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := rawServer(t, func(w http.ResponseWriter, method string, _ json.RawMessage) bool {
				if method != "tools/call" {
					return false
				}
				w.Header().Set("Content-Type", tc.contentType)
				flood(w, tc.start, huge)
				return true
			})
			d, err := NewToolDriver(testCtx(t), Config{URL: ts.URL, Logger: discardLogger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			_, err = d.ExecuteTool(testCtx(t), "t", nil)
			if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), fmt.Sprint(DefaultMaxMessageBytes)) || !strings.Contains(err.Error(), "MaxMessageBytes") {
				t.Errorf("err = %v, want ErrServerLimit naming the %d-byte limit and MaxMessageBytes", err, DefaultMaxMessageBytes)
			}
			if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthError || !strings.Contains(h.Detail, "MaxMessageBytes") {
				t.Errorf("health = %+v, want ERROR naming the limit", h)
			}
		})
	}
}

// A listing of 100,000 tools is refused while it is read, before the SDK
// decodes it: the driver allocates a small part of what decoding would cost.
func TestAttackHugeToolListing(t *testing.T) {
	const tools = 100_000 // about 11 MB of JSON, under the message limit
	for _, sse := range []bool{false, true} {
		name := map[bool]string{false: "JSON", true: "SSE"}[sse]
		t.Run(name, func(t *testing.T) {
			ts := rawServer(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
				if method != "tools/list" {
					return false
				}
				bw := bufio.NewWriterSize(w, 64<<10)
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = bw.WriteString("event: message\ndata: ")
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, id)
				for i := range tools {
					if i > 0 {
						_ = bw.WriteByte(',')
					}
					_, _ = bw.WriteString(`{"name":"tool_`)
					_, _ = bw.WriteString(strings.Repeat("x", i%7))
					_, _ = bw.WriteString(`","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)
				}
				_, _ = bw.WriteString("]}}")
				if sse {
					_, _ = bw.WriteString("\n\n")
				}
				_ = bw.Flush()
				return true
			})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := NewToolDriver(testCtx(t), Config{URL: ts.URL, Logger: discardLogger()})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), "more than 10000 tools") || !strings.Contains(err.Error(), "MaxTools") {
				t.Errorf("err = %v, want ErrServerLimit: more than 10000 tools, naming MaxTools", err)
			}
			// Decoding the listing costs about 130 MiB; refusing it a few.
			if mib := (after.TotalAlloc - before.TotalAlloc) >> 20; mib > 48 {
				t.Errorf("refusing the listing allocated %d MiB, want it refused before it is decoded", mib)
			}
		})
	}
}

// A stream that is not SSE, or whose event is not JSON-RPC, is reported as a
// malformed stream, not as a lost connection.
func TestAttackMalformedSSEStream(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"no event at all", `{"jsonrpc":"2.0","id":%s,"result":{}}`},
		{"event not JSON", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{bad\n\n"},
		{"line without a field", "\x00\x01 %s garbage\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := rawServer(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
				if method != "tools/call" {
					return false
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, tc.body, id)
				return true
			})
			d, err := NewToolDriver(testCtx(t), Config{URL: ts.URL, Logger: discardLogger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			_, err = d.ExecuteTool(testCtx(t), "t", nil)
			if !errors.Is(err, ErrMalformedStream) || !strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "connection lost") {
				t.Errorf("err = %v, want ErrMalformedStream saying the stream was malformed", err)
			}
			if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthError || !strings.Contains(h.Detail, "malformed") {
				t.Errorf("health = %+v, want ERROR saying the stream was malformed", h)
			}
		})
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

// The tool counter finds result.tools however the server spells the keys or
// splits the event, and counts nothing else.
func TestToolCounter(t *testing.T) {
	tools := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"name":"a","x":{"tools":[{},{}]}},`, n), ",")
	}
	for _, tc := range []struct {
		name, stream string
		refused      bool
		sse          bool
	}{
		{"SSE, split over data lines", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":\ndata: [" + tools(2) + "\ndata: ," + tools(2) + "]}}\n\n", true, true},
		{"SSE, one event each", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[" + tools(3) + "]}}\n\n: comment\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[" + tools(3) + "]}}\n\n", false, true},
		{"plain", `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tools(4) + `]}}`, true, false},
		{"escaped keys", `{"jsonrpc":"2.0","id":1,"res\u0075lt":{"t\u006fols":[` + tools(4) + `]}}`, true, false},
		{"other case", `{"jsonrpc":"2.0","id":1,"RESULT":{"Tools":[` + tools(4) + `]}}`, true, false},
		{"in a batch", `[{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tools(4) + `]}}]`, true, false},
		{"key in a string", `{"jsonrpc":"2.0","id":1,"result":{"x":"\"tools\":[{},{},{},{}]","tools":[` + tools(3) + `]}}`, false, false},
		{"nested tools", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"tools":[{},{},{},{}]}],"tools":[` + tools(3) + `]}}`, false, false},
		{"params", `{"jsonrpc":"2.0","method":"m","params":{"tools":[{},{},{},{},{}]}}`, false, false},
		{"one message each", `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + tools(3) + `]}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{"tools":[` + tools(3) + `]}}`, false, false},
	} {
		b := &limitedBody{body: io.NopCloser(strings.NewReader(tc.stream)), g: &guard{}, tools: toolCounter{max: 3}, sse: tc.sse}
		_, err := io.ReadAll(b)
		if refused := errors.Is(err, ErrServerLimit); refused != tc.refused {
			t.Errorf("%s: err = %v, want refused %v", tc.name, err, tc.refused)
		}
	}
}
