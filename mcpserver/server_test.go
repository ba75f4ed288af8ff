package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs/internal/pgtest"
	"go.uber.org/goleak"
)

// stdioEnv makes the test binary serve the fake driver over stdio.
const stdioEnv = "MCS_MCPSERVER_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) == "1" {
		perm := permission.New(declining("remove_"))
		s := New(mcs.NewBaseDriver(&fake{}, mcs.WithMiddleware(perm)), WithLogger(slog.New(slog.DiscardHandler)))
		if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// pgtest.Main stops the PostgreSQL server of the replica test.
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// fake is a tool driver with a tool for every outcome.
type fake struct {
	started chan struct{}
	ended   chan error
}

func (f *fake) Meta() mcs.Meta { return mcs.Meta{ID: "fake", Name: "Fake", Version: "1.2.3"} }

func (f *fake) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "greet", Title: "Greeter", Description: "greets someone",
			Parameters:  []mcs.Parameter{{Name: "name", Description: "who", Required: true}, {Name: "loud", Schema: map[string]any{"type": "boolean"}}},
			Annotations: &mcs.ToolAnnotations{ReadOnly: true, Idempotent: true}},
		{Name: "remove_file", Description: "removes a file", Parameters: []mcs.Parameter{{Name: "path", Required: true}},
			Annotations: &mcs.ToolAnnotations{Destructive: true}},
		{Name: "boom", Description: "panics"},
		{Name: "broken", Description: "fails"},
		{Name: "block", Description: "waits until cancelled"},
		{Name: "data", Description: "returns an object"},
	}, nil
}

func (f *fake) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	switch name {
	case "greet":
		s := fmt.Sprintf("hello %v", args["name"])
		if args["loud"] == true {
			s = strings.ToUpper(s)
		}
		return s, nil
	case "remove_file":
		return "removed", nil
	case "boom":
		panic("kaboom")
	case "broken":
		return nil, errors.New("the backend is down")
	case "block":
		f.started <- struct{}{}
		<-ctx.Done()
		f.ended <- ctx.Err()
		return nil, ctx.Err()
	case "data":
		return map[string]any{"n": 1, "ok": true}, nil
	}
	return nil, fmt.Errorf("%w: %q", mcs.ErrUnknownTool, name)
}

// connect serves s in memory and returns a client session.
func connect(t *testing.T, s *Server, opts *mcpsdk.ClientOptions) *mcpsdk.ClientSession {
	t.Helper()
	ct, st := mcpsdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	_ = errors.New
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-client", Version: "1"}, opts).Connect(testCtx(t), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		<-done
	})
	return cs
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func callText(t *testing.T, res *mcpsdk.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcpsdk.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\n")
}

func TestToolsListed(t *testing.T) {
	cs := connect(t, New(&fake{}), nil)
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcpsdk.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	if len(got) != 6 {
		t.Fatalf("%d tools, want 6", len(got))
	}
	g := got["greet"]
	f, tr := false, true
	want := &mcpsdk.Tool{
		Name: "greet", Title: "Greeter", Description: "greets someone",
		InputSchema: map[string]any{"type": "object", "required": []any{"name"}, "properties": map[string]any{
			"name": map[string]any{"type": "string", "description": "who"},
			"loud": map[string]any{"type": "boolean"},
		}},
		Annotations: &mcpsdk.ToolAnnotations{Title: "Greeter", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &f, OpenWorldHint: &f},
	}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("greet (-want +got):\n%s", diff)
	}
	if a := got["remove_file"].Annotations; a == nil || a.DestructiveHint == nil || *a.DestructiveHint != tr {
		t.Errorf("remove_file annotations = %+v", a)
	}
	if got["boom"].Annotations != nil {
		t.Errorf("boom has annotations %+v, want none (nothing is known)", got["boom"].Annotations)
	}
	if init := cs.InitializeResult(); init.ServerInfo.Name != "fake" || init.ServerInfo.Version != "1.2.3" {
		t.Errorf("server info = %+v", init.ServerInfo)
	}
}

// declining is a consent handler that declines the tools whose name starts with
// prefix and allows the others. (A Deny rule would hide those tools from the
// listing; a user's no leaves them listed and denies the call.)
func declining(prefix string) permission.ConsentFunc {
	return func(_ context.Context, name string, _ map[string]any) (bool, error) {
		return !strings.HasPrefix(name, prefix), nil
	}
}

func TestCalls(t *testing.T) {
	perm := permission.New(declining("remove_"))
	cs := connect(t, New(mcs.NewBaseDriver(&fake{}, mcs.WithMiddleware(perm))), nil)
	tests := []struct {
		name    string
		args    any
		want    string
		isError bool
		wantErr string
	}{
		{name: "greet", args: map[string]any{"name": "Ada", "loud": true}, want: "HELLO ADA"},
		{name: "greet", args: nil, want: "hello <nil>"},
		{name: "data", want: `{"n":1,"ok":true}`},
		{name: "remove_file", args: map[string]any{"path": "/etc/passwd"}, want: `{"message":"User denied execution of 'remove_file'.","permission_denied":true,"tool":"remove_file"}`},
		{name: "broken", want: "the backend is down", isError: true},
		{name: "boom", want: `tool "boom" panicked: kaboom`, isError: true},
		{name: "nope", wantErr: `unknown tool "nope"`},
		{name: "greet", args: []int{1, 2}, wantErr: "must be a JSON object of named arguments, not an array"},
		{name: "greet", args: "hi", wantErr: "not a string"},
		{name: "greet", args: map[string]any{"name": strings.Repeat("x", DefaultMaxArgumentBytes)}, wantErr: "accepts at most 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(testCtx(t), &mcpsdk.CallToolParams{Name: tt.name, Arguments: tt.args})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := callText(t, res); got != tt.want || res.IsError != tt.isError {
				t.Errorf("result = %q (isError %v), want %q (isError %v)", got, res.IsError, tt.want, tt.isError)
			}
		})
	}
	res, err := cs.CallTool(testCtx(t), &mcpsdk.CallToolParams{Name: "data"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"n": 1.0, "ok": true}, res.StructuredContent); diff != "" {
		t.Errorf("structured content (-want +got):\n%s", diff)
	}
}

func TestClientCancelCancelsTheTool(t *testing.T) {
	f := &fake{started: make(chan struct{}), ended: make(chan error, 1)}
	cs := connect(t, New(f), nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "block"})
		errc <- err
	}()
	<-f.started
	cancel()
	if err := <-f.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("tool context ended with %v, want context.Canceled", err)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client call: %v", err)
	}
}

// one is a driver of one tool.
type one struct{ name string }

func (o one) Meta() mcs.Meta { return mcs.Meta{ID: "one-" + o.name} }
func (o one) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: o.name, Description: "tool " + o.name}}, nil
}
func (o one) ExecuteTool(_ context.Context, name string, _ map[string]any) (any, error) {
	return "ran " + name, nil
}

func names(t *testing.T, cs *mcpsdk.ClientSession) []string {
	t.Helper()
	var out []string
	for tl, err := range cs.Tools(testCtx(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl.Name)
	}
	return out
}

func TestListChangedWhenTheOrchestratorChanges(t *testing.T) {
	o := orchestrator.New(orchestrator.Flat())
	if err := o.AddDriver("a", one{"alpha"}); err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 10)
	cs := connect(t, New(o, WithPollInterval(time.Millisecond)), &mcpsdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if diff := cmp.Diff([]string{"alpha"}, names(t, cs)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	if err := o.AddDriver("b", one{"beta"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-testCtx(t).Done():
		t.Fatal("no tools/list_changed after AddDriver")
	}
	if diff := cmp.Diff([]string{"alpha", "beta"}, names(t, cs)); diff != "" {
		t.Errorf("tools after AddDriver (-want +got):\n%s", diff)
	}
	res, err := cs.CallTool(testCtx(t), &mcpsdk.CallToolParams{Name: "beta"})
	if err != nil || callText(t, res) != "ran beta" {
		t.Errorf("beta = %v, %v", res, err)
	}
	o.RemoveDriver("a")
	<-changed
	if diff := cmp.Diff([]string{"beta"}, names(t, cs)); diff != "" {
		t.Errorf("tools after RemoveDriver (-want +got):\n%s", diff)
	}
}

func TestListFailure(t *testing.T) {
	cs := connect(t, New(failing{}), nil)
	_, err := cs.ListTools(testCtx(t), nil)
	if err == nil || !strings.Contains(err.Error(), "list the tools of the driver: spec unreachable") {
		t.Errorf("err = %v", err)
	}
}

type failing struct{}

func (failing) Meta() mcs.Meta { return mcs.Meta{ID: "failing"} }
func (failing) ListTools(context.Context) ([]mcs.Tool, error) {
	return nil, errors.New("spec unreachable")
}
func (failing) ExecuteTool(context.Context, string, map[string]any) (any, error) { return nil, nil }

func TestResultShapes(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"plain", "plain"},
		{[]byte("bytes"), "bytes"},
		{[]byte{0xff, 0xfe}, "[2 bytes of binary data]"},
		{[]any{1, "a"}, `[1,"a"]`},
		{func() {}, "0x"},
	}
	for _, tt := range tests {
		res := toResult(tt.in)
		text := res.Content[0].(*mcpsdk.TextContent).Text
		if !strings.HasPrefix(text, tt.want) {
			t.Errorf("toResult(%T) = %q, want %q", tt.in, text, tt.want)
		}
		if _, isObj := tt.in.(map[string]any); !isObj && res.StructuredContent != nil {
			t.Errorf("toResult(%T) has structured content", tt.in)
		}
	}
	if len(toResult(nil).Content) != 0 {
		t.Error("nil result has content")
	}
	_ = json.Valid
}

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestPanicOfAPlainDriverIsAFailedCall(t *testing.T) {
	cs := connect(t, New(&fake{}, WithLogger(quietLog())), nil)
	res, err := cs.CallTool(testCtx(t), &mcpsdk.CallToolParams{Name: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, res); !res.IsError || got != `tool "boom" panicked: kaboom` {
		t.Errorf("boom = %q (isError %v)", got, res.IsError)
	}
}

func TestHTTPClientCancelCancelsTheTool(t *testing.T) {
	f := &fake{started: make(chan struct{}), ended: make(chan error, 1)}
	s := New(f, WithLogger(quietLog()))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "c", Version: "1"}, nil).
		Connect(testCtx(t), &mcpsdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithCancel(testCtx(t))
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "block"})
		errc <- err
	}()
	<-f.started
	cancel()
	if err := <-f.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("tool context ended with %v", err)
	}
	<-errc
}
