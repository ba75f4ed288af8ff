package stack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/stack"
)

// serverEnv makes the test binary an MCP stdio server (see TestMain), so that
// the stack's mcp driver starts a real child process.
const serverEnv = "MCS_STACK_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		os.Exit(runServer())
	}
	os.Exit(m.Run())
}

// runServer serves two tools over stdio: echo (one required string) and
// confirm, which asks the user through elicitation before it answers.
func runServer() int {
	// Protocol 2025-11-25 sends elicitation/create as a request of its own
	// during the call.
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "stack-test", Version: "1"}, &mcpsdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	s.AddTool(&mcpsdk.Tool{Name: "echo", Description: "returns its text",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: in.Text}}}, nil
		})
	s.AddTool(&mcpsdk.Tool{Name: "confirm", Description: "asks the user first", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcpsdk.ElicitParams{Message: "Proceed?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
			if err != nil {
				return nil, err
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: res.Action}}}, nil
		})
	addResourcesPromptsSampling(s)
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// serverStack is a stack file whose one driver is this test binary as an MCP
// server, followed by extra.
func serverStack(t testing.TB, extra string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return "[[driver]]\nlabel = \"srv\"\ntype = \"mcp\"\ncommand = [" + strconv.Quote(exe) + "]\nenv = {" + serverEnv + " = \"1\"}\ncall_timeout = \"30s\"\n" + extra
}

func TestMCPDriver(t *testing.T) {
	tests := []struct {
		name    string
		extra   string
		answer  bool
		confirm string   // result of the confirm tool
		asked   []string // questions, in order
	}{
		{name: "ask answers elicitation", extra: "\n[middleware.permission]\nask = true\n", answer: true, confirm: "accept",
			asked: []string{"echo", "confirm", "elicitation: Proceed?"}},
		{name: "ask refused", extra: "\n[middleware.permission]\nallow = [\"confirm\"]\nask = true\n", answer: false, confirm: "decline",
			asked: []string{"elicitation: Proceed?"}},
		{name: "no consent handler declines", extra: "\n[middleware.permission]\nallow = [\"*\"]\n", confirm: "decline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stack.Parse(filepath.Join(t.TempDir(), "mcs.toml"), []byte(serverStack(t, tc.extra)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"validate", "permission"}, s.Middleware); diff != "" {
				t.Errorf("middleware (-want +got):\n%s", diff)
			}
			var mu sync.Mutex
			var asked []string
			s.Host.Consent = func(_ context.Context, name string, args map[string]any) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				q := name
				if m, ok := args["elicitation"].(string); ok {
					q += ": " + m
				}
				asked = append(asked, q)
				return tc.answer, nil
			}
			ctx := context.Background()
			d, err := s.Build(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			td := d.(mcs.ToolDriver)
			names := sortedToolNames(t, td)
			if diff := cmp.Diff([]string{"confirm", "echo", "roots", "sample"}, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			// Invalid arguments stop at validate: nobody is asked, the server
			// is not called.
			_, err = td.ExecuteTool(ctx, "echo", map[string]any{"text": 5})
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) || len(ae.Problems) != 1 || !strings.HasPrefix(ae.Problems[0], "/text: ") {
				t.Errorf("echo with a number: %v, want an *mcs.ArgumentsError about /text", err)
			}
			if tc.answer {
				got, err := td.ExecuteTool(ctx, "echo", map[string]any{"text": "hi"})
				if err != nil || got != "hi" {
					t.Errorf("echo = %v, %v; want hi", got, err)
				}
			}
			got, err := td.ExecuteTool(ctx, "confirm", nil)
			if err != nil || got != tc.confirm {
				t.Errorf("confirm = %v, %v; want %s", got, err, tc.confirm)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.asked, asked); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMCPDriverOrchestrated builds an mcp driver beside another driver, so it
// is built as a tool driver behind the orchestrator, and closes it.
func TestMCPDriverOrchestrated(t *testing.T) {
	dir := t.TempDir()
	file := serverStack(t, "\n[[driver]]\nlabel = \"files\"\ntype = \"filesystem\"\nroot = "+strconv.Quote(dir)+"\n")
	s, err := stack.Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.(mcs.ToolDriver).ExecuteTool(ctx, "srv__echo", map[string]any{"text": "through the orchestrator"})
	if err != nil || got != "through the orchestrator" {
		t.Errorf("srv__echo = %v, %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := d.(mcs.ToolDriver).ExecuteTool(ctx, "srv__echo", map[string]any{"text": "x"}); err == nil {
		t.Error("a call after Close succeeded")
	}
}

func TestMCPDriverErrors(t *testing.T) {
	head := "[[driver]]\nlabel = \"srv\"\ntype = \"mcp\"\n"
	tests := []struct {
		name, body, want string
	}{
		{"no server", "", `s.toml:1: [[driver]] "srv": names no server; add command = ["program", "arg"] (stdio) or url = "https://host/mcp" (streamable HTTP)`},
		{"both", "command = [\"srv\"]\nurl = \"https://host/mcp\"\n", `s.toml:5: [[driver]] "srv", key "url": command and url exclude each other`},
		{"command as one string", "command = \"npx -y server\"\n", `s.toml:4: [[driver]] "srv", key "command": write the program and its arguments as a list`},
		{"empty command", "command = []\n", `s.toml:4: [[driver]] "srv", key "command": names no program`},
		{"bad url", "url = \"localhost:8080\"\n", `s.toml:4: [[driver]] "srv", key "url": "localhost:8080" is not an http or https URL`},
		{"secret in env", "command = [\"srv\"]\nenv = {GITHUB_TOKEN = \"abc\"}\n", `s.toml:5: [[driver]] "srv", key "env.GITHUB_TOKEN": the key is named like a credential and holds a value; secrets never go in the stack file: remove the value and list the variable in env_pass = ["NAME"]`},
		{"token in a header", "url = \"https://host/mcp\"\nheaders = {X-Key = \"ghp_0123456789abcdef0123\"}\n", `key "headers.X-Key": the value looks like an access token (it starts with "ghp_"); secrets never go in the stack file: remove the value and set credentials = "env"`},
		{"bad env name", "command = [\"srv\"]\nenv = {\"A-B\" = \"1\"}\n", `key "env": "A-B" is not a variable name`},
		{"headers of a command", "command = [\"srv\"]\nheaders = {X-Team = \"core\"}\n", `key "headers": applies to url servers only`},
		{"dir of a url", "url = \"https://host/mcp\"\ndir = \"work\"\n", `key "dir": applies to command servers only`},
		{"credentials", "url = \"https://host/mcp\"\ncredentials = \"vault\"\n", `key "credentials": "vault" is not a credential source of an MCP server; use "env" (a bearer token from MCS_TOKEN_SRV), "oauth" (sign in in the browser; the server names its authorization server) or "none"`},
		{"timeout", "command = [\"srv\"]\ncall_timeout = \"soon\"\n", `key "call_timeout": "soon" is not a duration`},
		{"unknown key", "command = [\"srv\"]\nargs = [\"-v\"]\n", `key "args": unknown key`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := stack.Parse("s.toml", []byte(head+tc.body))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tc.want)
			}
		})
	}
}

func TestMCPDriverBuildErrors(t *testing.T) {
	t.Setenv("MCS_TOKEN_SRV", "")
	tests := []struct{ name, body, want string }{
		{"env_pass unset", "command = [\"srv\"]\nenv_pass = [\"MCS_STACK_TEST_UNSET\"]\n", "env_pass names MCS_STACK_TEST_UNSET, which is not set"},
		{"no token", "url = \"http://127.0.0.1:1/mcp\"\ncredentials = \"env\"\n", `credentials = "env", but MCS_TOKEN_SRV is empty`},
		{"missing program", "command = [\"mcs-stack-test-no-such-program\"]\n", `connect to MCP server command "mcs-stack-test-no-such-program"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := stack.Parse("s.toml", []byte("[[driver]]\nlabel = \"srv\"\ntype = \"mcp\"\n"+tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Build(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `driver "srv" (line 1)`) {
				t.Errorf("error:\n%v\nwant it to name the driver and contain %q", err, tc.want)
			}
		})
	}
}

// An MCP server behind the stack's middleware: its tools are listed and
// called like any other driver's, and a call the validation refuses never
// reaches the server.
func Example_mcp() {
	exe, _ := os.Executable() // this example's server is its own binary
	file := fmt.Sprintf(`
[[driver]]
label = "srv"
type = "mcp"
command = [%q]               # or: url = "https://host/mcp"
env = {%s = "1"}
call_timeout = "30s"

[middleware.permission]
allow = ["echo"]
`, exe, serverEnv)
	s, err := stack.Parse("mcs.toml", []byte(file))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println("middleware:", s.Middleware)
	td := d.(mcs.ToolDriver)
	got, err := td.ExecuteTool(ctx, "echo", map[string]any{"text": "hello over stdio"})
	fmt.Println(got, err)
	_, err = td.ExecuteTool(ctx, "echo", map[string]any{})
	var ae *mcs.ArgumentsError
	if errors.As(err, &ae) {
		fmt.Println("refused:", ae.Problems)
	}
	_, err = td.ExecuteTool(ctx, "confirm", nil)
	fmt.Println(err != nil)
	// Output:
	// middleware: [validate permission]
	// hello over stdio <nil>
	// refused: [/text: required argument is missing]
	// true
}

// TestMCPDriverURL connects to a streamable HTTP server on loopback with
// credentials = "env": the token goes out as a bearer token with the headers
// of the file.
func TestMCPDriverURL(t *testing.T) {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "http-test", Version: "1"}, nil)
	s.AddTool(&mcpsdk.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "me"}}}, nil
		})
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s }, nil)
	var mu sync.Mutex
	var auths, teams []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		teams = append(teams, r.Header.Get("X-Team"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer test-token-1" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("MCS_TOKEN_REMOTE", "test-token-1")
	file := "[[driver]]\nlabel = \"remote\"\ntype = \"mcp\"\nurl = " + strconv.Quote(srv.URL+"/mcp") + "\nheaders = {X-Team = \"core\"}\ncredentials = \"env\"\n"
	st, err := stack.Parse("s.toml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := st.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.(mcs.ToolDriver).ExecuteTool(ctx, "whoami", nil)
	if err != nil || got != "me" {
		t.Errorf("whoami = %v, %v", got, err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) == 0 {
		t.Fatal("the server got no request")
	}
	for i := range auths {
		if auths[i] != "Bearer test-token-1" || teams[i] != "core" {
			t.Errorf("request %d: Authorization %q, X-Team %q", i, auths[i], teams[i])
		}
	}
}

// sortedToolNames lists the names of td's tools, sorted.
func sortedToolNames(t *testing.T, td mcs.ToolDriver) []string {
	t.Helper()
	tools, err := td.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}
