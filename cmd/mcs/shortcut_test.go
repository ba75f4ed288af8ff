package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs/cmd/mcs/internal/demo"
)

// methodLog records the methods of the requests that reach the demo store.
type methodLog struct {
	mu      sync.Mutex
	methods []string
}

func (l *methodLog) has(method string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.methods, method)
}

// serveLoggedStore serves the demo store and records the methods that reach it.
func serveLoggedStore(t *testing.T) (*httptest.Server, *methodLog) {
	t.Helper()
	log := &methodLog{}
	h := demo.NewStore().Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.mu.Lock()
		log.methods = append(log.methods, r.Method)
		log.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// TestAttackShortcutWritesRunUnasked: a write of an --openapi driver is asked
// and audited, as in the demo; nothing reaches the API unless the user says
// yes, or gave --yes (which says so).
func TestAttackShortcutWritesRunUnasked(t *testing.T) {
	t.Setenv("MCS_TOKEN_API", "")
	tests := []struct {
		name   string
		stdin  string
		flags  []string
		code   int
		sent   bool
		stderr []string
	}{
		{name: "input ended", code: exitFailed, stderr: []string{"Allow it?", "tool=deletePet", "deletePet was not run"}},
		{name: "answered no", stdin: "n\n", code: exitFailed, stderr: []string{"Allow it?", "outcome=denied", "deletePet was denied"}},
		{name: "answered yes", stdin: "y\n", code: exitFailed, sent: true, stderr: []string{"Allow it?", "tool=deletePet"}},
		{name: "--yes", flags: []string{"--yes"}, code: exitFailed, sent: true, stderr: []string{noticeYes, "tool=deletePet"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, log := serveLoggedStore(t)
			args := append([]string{"--openapi", srv.URL + "/openapi.json"}, tc.flags...)
			r := mcsRun(t, tc.stdin, append(args, "call", "deletePet", "petId=1")...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", r.code, tc.code, r.stderr)
			}
			if got := log.has(http.MethodDelete); got != tc.sent {
				t.Errorf("DELETE reached the API: %v, want %v; stderr:\n%s", got, tc.sent, r.stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if !slices.Contains(tc.flags, "--yes") && strings.Contains(r.stderr, "--yes:") {
				t.Errorf("the --yes notice without --yes:\n%s", r.stderr)
			}
		})
	}

	// A read runs unasked.
	srv, _ := serveLoggedStore(t)
	r := mcsRun(t, "", "--openapi", srv.URL+"/openapi.json", "call", "getInventory")
	if r.code != 0 || strings.Contains(r.stderr, "Allow it?") || !strings.Contains(r.stderr, "tool=getInventory") {
		t.Errorf("read: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	// --yes is for the driver flags only.
	writeStack(t, "[[driver]]\nlabel = \"files\"\ntype = \"filesystem\"\nroot = \".\"\nread_only = true\n")
	r = mcsRun(t, "", "--yes", "tools")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--yes applies to the --openapi, --fs and --csv drivers") {
		t.Errorf("--yes with a stack file: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestAttackShortcutServedWritesRunUnasked: over stdio nobody can be asked, so
// serve-mcp runs the reads of an --openapi driver and refuses its writes.
func TestAttackShortcutServedWritesRunUnasked(t *testing.T) {
	srv, log := serveLoggedStore(t)
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"--openapi", srv.URL + "/openapi.json", "serve-mcp"}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
		done <- code
	}()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcpsdk.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, isErr := callText(t, cs, "getInventory", nil); isErr || !strings.Contains(got, "available") {
		t.Errorf("getInventory = %q (error %v)", got, isErr)
	}
	if got, isErr := callText(t, cs, "deletePet", map[string]any{"petId": 1}); !isErr || !strings.Contains(got, "not executed") {
		t.Errorf("deletePet = %q (error %v); want it refused", got, isErr)
	}
	cs.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
	}
	if log.has(http.MethodDelete) {
		t.Errorf("the DELETE reached the API; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), noticeReadOnly) || !strings.Contains(stderr.String(), "tool=deletePet") {
		t.Errorf("stderr lacks the notice or the audit:\n%s", stderr.String())
	}
}
