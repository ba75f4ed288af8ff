package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// servedStack writes a stack file of one read-only filesystem driver over a
// directory holding notes.txt, with the given middleware tables, and changes
// into its directory.
func servedStack(t *testing.T, middleware string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("data", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("data", "notes.txt"), []byte("served over MCP\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := "[[driver]]\nlabel = \"files\"\ntype = \"filesystem\"\nroot = \"data\"\nread_only = true\n" + middleware
	if err := os.WriteFile("mcs.toml", []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
}

const servedPolicy = "\n[middleware.permission]\nallow = [\"read_file\", \"list_directory\"]\n"

// callText calls a tool and returns its text and whether it failed.
func callText(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// checkServed lists and calls the served stack's tools: a read, a call with
// invalid arguments (refused by validate) and a call no rule allows (fails
// closed).
func checkServed(t *testing.T, cs *mcpsdk.ClientSession) {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "read_file") || !slices.Contains(names, "search_files") {
		t.Fatalf("tools = %v", names)
	}
	if got, isErr := callText(t, cs, "read_file", map[string]any{"path": "notes.txt"}); isErr || !strings.Contains(got, "served over MCP") {
		t.Errorf("read_file = %q (error %v)", got, isErr)
	}
	if got, isErr := callText(t, cs, "read_file", map[string]any{"path": 5}); !isErr || !strings.Contains(got, "/path: want string") {
		t.Errorf("read_file with a number = %q (error %v); want the validation's problem", got, isErr)
	}
	if got, isErr := callText(t, cs, "search_files", map[string]any{"pattern": "*.txt"}); !isErr || !strings.Contains(got, "not executed: no rule matched") {
		t.Errorf("search_files = %q (error %v); want it refused: no rule allows it and nobody can be asked", got, isErr)
	}
}

func TestServeMCPStdio(t *testing.T) {
	servedStack(t, servedPolicy)
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"serve-mcp"}, stdinR, stdoutW, &stderr)
		stdoutW.Close()
		done <- code
	}()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcpsdk.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkServed(t, cs)
	if cs.InitializeResult().ServerInfo.Name != "mcs" {
		t.Errorf("server name = %q, want mcs", cs.InitializeResult().ServerInfo.Name)
	}
	cs.Close() // ends stdin: the server stops
	if code := <-done; code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, stderr.String())
	}
}

func TestServeMCPStdioCancelled(t *testing.T) {
	servedStack(t, servedPolicy)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	stdoutR, stdoutW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve-mcp"}, stdinR, stdoutW, io.Discard) }()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcpsdk.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel() // Ctrl-C while the client stays connected
	if code := <-done; code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0", code)
	}
}

func TestServeMCPHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := "stateful"
		args := []string{"serve-mcp", "--http", "127.0.0.1:0"}
		if stateless {
			name = "stateless"
			args = append(args, "--stateless")
		}
		t.Run(name, func(t *testing.T) {
			servedStack(t, servedPolicy)
			stderrR, stderrW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan int, 1)
			go func() {
				code := run(ctx, args, strings.NewReader(""), io.Discard, stderrW)
				stderrW.Close()
				done <- code
			}()
			lines := bufio.NewScanner(stderrR)
			if !lines.Scan() {
				t.Fatalf("no line on stderr; exit %d", <-done)
			}
			first := lines.Text()
			url, ok := strings.CutPrefix(first, "mcs: serving MCP on ")
			url, _, _ = strings.Cut(url, " ")
			if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Fatalf("first line %q does not say where it serves", first)
			}
			rest := make(chan string, 1)
			go func() {
				var b strings.Builder
				for lines.Scan() {
					b.WriteString(lines.Text() + "\n")
				}
				rest <- b.String()
			}()
			cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "1"}, nil).
				Connect(context.Background(), &mcpsdk.StreamableClientTransport{Endpoint: url}, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkServed(t, cs)
			cancel() // Ctrl-C with the session still open
			if code := <-done; code != 0 {
				t.Errorf("exit %d, want 0", code)
			}
			cs.Close()
			if got := <-rest; !strings.Contains(got, "mcs: stopped serving MCP") {
				t.Errorf("stderr after the address:\n%s", got)
			}
		})
	}
}

func TestServeMCPRefusals(t *testing.T) {
	tests := []struct {
		name       string
		middleware string
		args       []string
	}{
		{name: "serve-mcp-ask", middleware: "\n[middleware.permission]\nread_only = true\nask = true\n", args: []string{"serve-mcp"}},
		{name: "serve-mcp-stateless-stdio", args: []string{"serve-mcp", "--stateless"}},
		{name: "serve-mcp-bad-address", args: []string{"serve-mcp", "--http", "127.0.0.1:99999"}},
		{name: "serve-mcp-extra-arg", args: []string{"serve-mcp", "mcs.toml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			servedStack(t, tc.middleware)
			r := mcsRun(t, "", tc.args...)
			if r.code != exitUsage || r.stdout != "" {
				t.Errorf("exit %d, stdout %q; want exit 2 and nothing on stdout", r.code, r.stdout)
			}
			golden(t, tc.name+"-stderr", r.stderr)
		})
	}
}

// TestCallInvalidArguments: a call the validate middleware refuses exits 1
// with one line per problem, and the tool does not run.
func TestCallInvalidArguments(t *testing.T) {
	servedStack(t, "")
	r := mcsRun(t, "", "call", "read_file", "--args", `{"path": 5, "lines": 3}`)
	if r.code != exitFailed || r.stdout != "" {
		t.Errorf("exit %d, stdout %q; want exit 1 and no result", r.code, r.stdout)
	}
	golden(t, "call-invalid-args-stderr", r.stderr)
}

func TestServeMCPHelp(t *testing.T) {
	r := mcsRun(t, "", "serve-mcp", "--help")
	for _, want := range []string{"mcs serve-mcp --stack mcs.toml --http 127.0.0.1:8080", "ask = true", "--stateless", "SIGTERM"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// serveHTTPCommand runs serve-mcp with args in the background and returns the
// address it serves on, the rest of its stderr once it stopped (call stop
// first) and stop, which ends it and checks it exited 0.
func serveHTTPCommand(t *testing.T, args ...string) (url string, rest <-chan string, stop func()) {
	t.Helper()
	stderrR, stderrW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"serve-mcp"}, args...), strings.NewReader(""), io.Discard, stderrW)
		stderrW.Close()
		done <- code
	}()
	lines := bufio.NewScanner(stderrR)
	if !lines.Scan() {
		cancel()
		t.Fatalf("no line on stderr; exit %d", <-done)
	}
	first := lines.Text()
	url, ok := strings.CutPrefix(first, "mcs: serving MCP on ")
	url, _, _ = strings.Cut(url, " ")
	if !ok {
		cancel()
		t.Fatalf("first line %q does not say where it serves", first)
	}
	out := make(chan string, 1)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		out <- b.String()
	}()
	return url, out, func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
	}
}

// An address without a host (:8080) listened on every interface, so a server
// meant for the local machine was open to the network. It listens on
// loopback now, and says nothing alarming.
func TestAttackServeMCPLoopbackDefault(t *testing.T) {
	servedStack(t, servedPolicy)
	url, rest, stop := serveHTTPCommand(t, "--http", ":0")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("--http :0 serves on %s; want the loopback interface", url)
	}
	stop()
	if got := <-rest; strings.Contains(got, "warning") {
		t.Errorf("a loopback server warns:\n%s", got)
	}
}

// A server listening beyond loopback authenticates nobody; serve-mcp said
// nothing about it. It warns now, for every address that is not loopback.
func TestAttackServeMCPWarnsNotLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8080", "[::]:8080", "192.0.2.7:8080", "[2001:db8::7]:8080"} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		w := exposed(a)
		if !strings.Contains(w, "warning") || !strings.Contains(w, "other machines") || !strings.Contains(w, "127.0.0.1") {
			t.Errorf("%s: warning %q", addr, w)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "127.0.0.2:8080", "[::1]:8080"} {
		a, _ := net.ResolveTCPAddr("tcp", addr)
		if w := exposed(a); w != "" {
			t.Errorf("%s: warning %q for a loopback address", addr, w)
		}
	}
	if listenHost("tools.internal:8080") != "tools.internal" || listenHost("0.0.0.0:8080") != "" || listenHost(":8080") != "" {
		t.Error("listenHost")
	}
}

// The served command refuses what mcpserver refuses: a foreign Origin and a
// Host that is not one of its names, and allows the ones given with
// --allow-origin and --allow-host.
func TestAttackServeMCPHostAndOrigin(t *testing.T) {
	servedStack(t, servedPolicy)
	url, _, stop := serveHTTPCommand(t, "--http", "127.0.0.1:0", "--allow-origin", "https://app.example", "--allow-host", "tools.internal")
	defer stop()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "http://evil.example", http.StatusForbidden},
		{"rebind.example", "", http.StatusForbidden},
		{"", "https://app.example", http.StatusOK},
		{"tools.internal", "", http.StatusOK},
	} {
		r, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(init))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			r.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: %d %s; want %d", tc.host, tc.origin, resp.StatusCode, b, tc.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// fakeListener hands out the server ends of in-memory connections.
type fakeListener struct {
	conns  chan net.Conn
	closed chan struct{}
}

func newFakeListener() *fakeListener {
	return &fakeListener{conns: make(chan net.Conn, 16), closed: make(chan struct{})}
}

func (l *fakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *fakeListener) Close() error {
	select {
	case <-l.closed:
	default:
		close(l.closed)
	}
	return nil
}

func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }

func (l *fakeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

// Connections were accepted without a bound: a client could open them until
// the process ran out of descriptors. Past the cap, Accept waits until one of
// the served connections closes.
func TestAttackServeMCPConnectionCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inner := newFakeListener()
		ln := limitListener(inner, 2)
		defer ln.Close()
		var clients []net.Conn
		for range 3 {
			c := inner.dial()
			defer c.Close()
			clients = append(clients, c)
		}
		first, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ln.Accept(); err != nil {
			t.Fatal(err)
		}
		third := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			third <- c
		}()
		synctest.Wait()
		select {
		case <-third:
			t.Fatal("a third connection was accepted with two open and a cap of 2")
		default:
		}
		first.Close()
		first.Close() // a second Close gives back nothing more
		c := <-third
		if c == nil {
			t.Fatal("no third connection after the first closed")
		}
		c.Close()
		// Closing the listener ends an Accept waiting for a place.
		defer inner.dial().Close()
		if _, err := ln.Accept(); err != nil { // the second is still open: the cap is reached
			t.Fatal(err)
		}
		waiting := make(chan error, 1)
		go func() {
			_, err := ln.Accept()
			waiting <- err
		}()
		synctest.Wait()
		ln.Close()
		if err := <-waiting; err == nil {
			t.Error("Accept after Close returned a connection")
		}
	})
}

// A connection left idle after a request, or one that never finishes its
// headers, held its place for ever; with a connection cap that is a way to
// lock everyone out. The server closes both.
func TestAttackServeMCPIdleConnection(t *testing.T) {
	for _, tc := range []struct {
		name, send string
		within     time.Duration
	}{
		{"idle after a request", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", keepAliveTimeout},
		{"headers never end", "GET / HTTP/1.1\r\nHost: 127.0", headerTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ln := newFakeListener()
				hs := newMCPHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
				served := make(chan error, 1)
				go func() { served <- hs.Serve(ln) }()
				defer func() { hs.Close(); <-served }()
				c := ln.dial()
				defer c.Close()
				fmt.Fprint(c, tc.send)
				closed := make(chan struct{})
				go func() {
					io.Copy(io.Discard, c) // until the server closes
					close(closed)
				}()
				start := time.Now()
				select {
				case <-closed:
					if d := time.Since(start); d > tc.within {
						t.Errorf("closed after %v, want within %v", d, tc.within)
					}
				case <-time.After(tc.within + time.Hour):
					t.Fatalf("the connection is still open %v later", tc.within+time.Hour)
				}
			})
		})
	}
}

// The connections of serve-mcp are bounded as the tests above assume.
func TestServeMCPHTTPServerSettings(t *testing.T) {
	hs := newMCPHTTPServer(http.NotFoundHandler())
	if hs.ReadTimeout != 0 || hs.WriteTimeout != 0 {
		t.Errorf("ReadTimeout %v, WriteTimeout %v: event streams and long calls would be cut off", hs.ReadTimeout, hs.WriteTimeout)
	}
	if hs.MaxHeaderBytes != maxHeaderBytes {
		t.Errorf("MaxHeaderBytes %d", hs.MaxHeaderBytes)
	}
}

// The flags of --http are refused over stdio, and negative sizes anywhere.
func TestServeMCPHTTPOnlyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve-mcp", "--allow-host", "tools.internal"}, "mcs: --allow-host applies to --http only; add --http ADDR or remove --allow-host\n"},
		{[]string{"serve-mcp", "--allow-origin", "https://app.example"}, "mcs: --allow-origin applies to --http only; add --http ADDR or remove --allow-origin\n"},
		{[]string{"serve-mcp", "--max-sessions", "5"}, "mcs: --max-sessions applies to --http only; add --http ADDR or remove --max-sessions\n"},
		{[]string{"serve-mcp", "--http", "127.0.0.1:0", "--max-connections", "-1"}, "mcs: --max-connections is -1; give a positive number, or 0 for the default\n"},
		{[]string{"serve-mcp", "--http", "127.0.0.1:0", "--session-timeout", "-1m"}, "mcs: --session-timeout is -1m0s; give a positive duration such as 30m, or 0 for the default\n"},
	} {
		servedStack(t, servedPolicy)
		r := mcsRun(t, "", tc.args...)
		if r.code != exitUsage || r.stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
