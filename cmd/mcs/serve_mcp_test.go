package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
