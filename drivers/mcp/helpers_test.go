package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// serverEnv makes the test binary an MCP stdio server (see TestMain).
const serverEnv = "MCS_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

// runChild is the stdio server of the command-transport tests.
func runChild(mode string) int {
	fmt.Fprintln(os.Stderr, "test server starting in mode", mode)
	switch mode {
	case "fail-start":
		fmt.Fprintln(os.Stderr, "fatal: cannot open the database")
		return 3
	case "mute":
		// Reads and never answers.
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "huge-blob":
		return hugeBlobServer()
	}
	s := newTestServer(2)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "crash", Description: "exits the server"}, func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "panic: crash tool called")
		os.Exit(7)
		return nil, nil, nil
	})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "pid", Description: "the server's process id"}, func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
		return text(fmt.Sprint(os.Getpid())), nil, nil
	})
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

func text(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo"`
	Times   int    `json:"times,omitempty" jsonschema:"how often"`
}

// newTestServer builds the server of the tests; pageSize 0 is the SDK default.
func newTestServer(pageSize int) *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "test-server", Version: "1.0.0"}, &mcpsdk.ServerOptions{PageSize: pageSize})
	f := false
	mcpsdk.AddTool(s, &mcpsdk.Tool{
		Name: "echo", Title: "Echo", Description: "echoes a message",
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f},
	}, func(_ context.Context, _ *mcpsdk.CallToolRequest, in echoIn) (*mcpsdk.CallToolResult, any, error) {
		n := max(in.Times, 1)
		res := &mcpsdk.CallToolResult{}
		for range n {
			res.Content = append(res.Content, &mcpsdk.TextContent{Text: in.Message})
		}
		return res, nil, nil
	})
	s.AddTool(&mcpsdk.Tool{Name: "fail", Description: "always fails", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			r := text("the disk is full")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcpsdk.Tool{Name: "picture", Description: "an image and a caption", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			size := int64(42)
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{
				&mcpsdk.TextContent{Text: "a red dot"},
				&mcpsdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\nxxxx")},
				&mcpsdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 100)},
				&mcpsdk.ResourceLink{URI: "file:///tmp/dot.png", Name: "dot", MIMEType: "image/png", Size: &size},
				&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "hello"}},
			}}, nil
		})
	type point struct {
		X int `json:"x"`
		Y int `json:"y"`
	}
	s.AddTool(&mcpsdk.Tool{Name: "structured", Description: "structured content only", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{}, StructuredContent: point{X: 1, Y: 2}}, nil
		})
	s.AddTool(&mcpsdk.Tool{Name: "wait", Description: "waits until cancelled", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			<-ctx.Done()
			return text("cancelled"), nil
		})
	s.AddTool(&mcpsdk.Tool{Name: "ask", Description: "asks the user to confirm", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{"ok": &mcpsdk.ElicitParams{
					Message: "Delete the draft?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
						"confirm": {Type: "boolean", Default: json.RawMessage(`true`)},
					}},
				}}}, nil
			}
			res := req.Params.InputResponses["ok"].(*mcpsdk.ElicitResult)
			return text(fmt.Sprintf("%s %v", res.Action, res.Content["confirm"])), nil
		})
	s.AddTool(&mcpsdk.Tool{Name: "askname", Description: "asks the user for a name", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{"n": &mcpsdk.ElicitParams{
					Message: "Your name?",
					RequestedSchema: &jsonschema.Schema{Type: "object", Required: []string{"name"}, Properties: map[string]*jsonschema.Schema{
						"name": {Type: "string"},
					}},
				}}}, nil
			}
			res := req.Params.InputResponses["n"].(*mcpsdk.ElicitResult)
			return text(res.Action), nil
		})
	return s
}

// quietLogger drops the driver's warnings; logs collects them.
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool { msg += " " + a.Key + "=" + a.Value.String(); return true })
	l.msgs = append(l.msgs, msg)
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }
func (l *logs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// connectInMemory serves s over in-memory transports and returns a driver on
// the other end.
func connectInMemory(t testing.TB, s *mcpsdk.Server, cfg Config) (*ToolDriver, *logs) {
	t.Helper()
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Transport = ct
	l := &logs{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := NewToolDriver(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = d.Close()
		_ = ss.Close()
	})
	return d, l
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
