package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// richServer has resources (text and a blob), a template, subscriptions and a
// prompt, listed one per page.
func richServer(opts *mcpsdk.ServerOptions) *mcpsdk.Server {
	if opts == nil {
		opts = &mcpsdk.ServerOptions{}
	}
	opts.PageSize = 1
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	opts.SubscribeHandler = func(context.Context, *mcpsdk.SubscribeRequest) error { return nil }
	opts.UnsubscribeHandler = func(context.Context, *mcpsdk.UnsubscribeRequest) error { return nil }
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "rich", Version: "1"}, opts)
	s.AddTool(&mcpsdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text("echo"), nil
		})
	s.AddResource(&mcpsdk.Resource{URI: "mem://notes", Name: "notes", MIMEType: "text/plain", Description: "the notes"},
		func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "buy milk"}}}, nil
		})
	s.AddResource(&mcpsdk.Resource{URI: "mem://logo", Name: "logo", MIMEType: "image/png", Size: 3},
		func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte{1, 2, 3}}}}, nil
		})
	s.AddResourceTemplate(&mcpsdk.ResourceTemplate{URITemplate: "mem://notes/{id}", Name: "note", Description: "one note"},
		func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, Text: "note at " + req.Params.URI}}}, nil
		})
	s.AddPrompt(&mcpsdk.Prompt{Name: "greet", Description: "a greeting", Arguments: []*mcpsdk.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			n := req.Params.Arguments["name"]
			return &mcpsdk.GetPromptResult{Description: "greets " + n, Messages: []*mcpsdk.PromptMessage{
				{Role: "user", Content: &mcpsdk.TextContent{Text: "Say hello to " + n}},
				{Role: "assistant", Content: &mcpsdk.TextContent{Text: "Hello, " + n + "!"}},
			}}, nil
		})
	s.AddPrompt(&mcpsdk.Prompt{Name: "plain"}, func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
		return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: "plain"}}}}, nil
	})
	return s
}

func TestResources(t *testing.T) {
	d, _ := connectInMemory(t, richServer(nil), Config{})
	ctx := testCtx(t)
	res, err := d.ListResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res {
		uris = append(uris, r.URI)
	}
	if diff := cmp.Diff([]string{"mem://logo", "mem://notes"}, uris); diff != "" {
		t.Errorf("resources over every page (-want +got):\n%s", diff)
	}
	tpl, err := d.ListResourceTemplates(ctx)
	if err != nil || len(tpl) != 1 || tpl[0].URITemplate != "mem://notes/{id}" {
		t.Errorf("templates = %v, %v", tpl, err)
	}
	for _, tc := range []struct {
		uri  string
		want []*mcpsdk.ResourceContents
	}{
		{"mem://notes", []*mcpsdk.ResourceContents{{URI: "mem://notes", MIMEType: "text/plain", Text: "buy milk"}}},
		{"mem://logo", []*mcpsdk.ResourceContents{{URI: "mem://logo", MIMEType: "image/png", Blob: []byte{1, 2, 3}}}},
		{"mem://notes/7", []*mcpsdk.ResourceContents{{URI: "mem://notes/7", Text: "note at mem://notes/7"}}},
	} {
		got, err := d.ReadResource(ctx, tc.uri)
		if err != nil {
			t.Errorf("read %s: %v", tc.uri, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("read %s (-want +got):\n%s", tc.uri, diff)
		}
	}
	_, err = d.ReadResource(ctx, "mem://missing")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "mem://missing") {
		t.Errorf("read of an unknown resource: err = %v, want ErrRefused naming the URI", err)
	}
	if _, err := d.ReadResource(ctx, " "); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("read of an empty URI: err = %v", err)
	}
	// The session stays usable after a refusal.
	if got, err := d.ExecuteTool(ctx, "echo", nil); err != nil || got != "echo" {
		t.Errorf("echo after a refused read = %v, %v", got, err)
	}
}

func TestResourceAndPromptTools(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"off", Config{}, []string{"echo"}},
		{"resources", Config{Resources: true}, []string{"echo", "resources__list", "resources__read"}},
		{"prompts", Config{Prompts: true}, []string{"echo", "prompts__get"}},
		{"both", Config{Resources: true, Prompts: true}, []string{"echo", "resources__list", "resources__read", "prompts__get"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := connectInMemory(t, richServer(nil), tt.cfg)
			tools, err := d.ListTools(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}

	d, _ := connectInMemory(t, richServer(nil), Config{Resources: true, Prompts: true})
	ctx := testCtx(t)
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"resources__list", nil, "Resources (2):\n- mem://logo — logo [image/png, 3 bytes]\n- mem://notes — notes [text/plain]: the notes\n" +
			"Resource templates (1; fill in the {placeholders} and read the URI):\n- mem://notes/{id} — note: one note"},
		{"resources__read", map[string]any{"uri": "mem://notes"}, "buy milk"},
		{"resources__read", map[string]any{"uri": "mem://logo"}, "[blob: mem://logo, image/png, 3 bytes]"},
		{"resources__read", map[string]any{"uri": "mem://notes/42"}, "note at mem://notes/42"},
		{"prompts__get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ada"}}, "greets Ada\n\n[user]\nSay hello to Ada\n\n[assistant]\nHello, Ada!"},
		{"prompts__get", map[string]any{"name": "plain"}, "[user]\nplain"},
	}
	for _, c := range calls {
		got, err := d.ExecuteTool(ctx, c.tool, c.args)
		if err != nil {
			t.Errorf("%s %v: %v", c.tool, c.args, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", c.tool, c.args, diff)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"resources__read", nil, `the argument "uri" is missing`},
		{"resources__read", map[string]any{"uri": 7}, `"uri" is a int`},
		{"prompts__get", map[string]any{"name": "nope"}, `get prompt "nope"`},
		{"prompts__get", map[string]any{"name": "greet", "arguments": "Ada"}, "pass an object of strings"},
	} {
		_, err := d.ExecuteTool(ctx, c.tool, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want it to say %q", c.tool, c.args, err, c.want)
		}
	}
	def, ok, err := d.ToolDefinition(ctx, "prompts__get")
	if err != nil || !ok || !strings.Contains(def.Description, "- greet: a greeting; arguments: name (required)") || !strings.Contains(def.Description, "- plain") {
		t.Errorf("prompts__get description = %q, %v, %v", def.Description, ok, err)
	}
}

func TestPrompts(t *testing.T) {
	d, _ := connectInMemory(t, richServer(nil), Config{})
	ctx := testCtx(t)
	ps, err := d.ListPrompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"greet", "plain"}, names); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	res, err := d.GetPrompt(ctx, "greet", map[string]string{"name": "Bo"})
	if err != nil {
		t.Fatal(err)
	}
	if got := promptMessagesText(res); got != "greets Bo\n\n[user]\nSay hello to Bo\n\n[assistant]\nHello, Bo!" {
		t.Errorf("prompt = %q", got)
	}
	many := map[string]string{}
	for i := range MaxPromptArguments + 1 {
		many[fmt.Sprint("a", i)] = "x"
	}
	if _, err := d.GetPrompt(ctx, "greet", many); err == nil || !strings.Contains(err.Error(), "more than 100") {
		t.Errorf("GetPrompt with %d arguments: err = %v", len(many), err)
	}
}

func TestSubscribeMovesTheVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
	}{
		{"current protocol", nil},
		{"protocol 2025-11-25", []string{"2025-11-25"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The server logs "resource subscribed" once the subscription is
			// registered: over the current protocol Subscribe returns before.
			subscribed := make(chan struct{}, 1)
			s := richServer(&mcpsdk.ServerOptions{SupportedProtocolVersions: tc.versions, Logger: slog.New(signal{"resource subscribed", subscribed})})
			d, _ := connectInMemory(t, s, Config{Resources: true})
			changed := make(chan struct{}, 10)
			d.onChange = func() { changed <- struct{}{} }
			ctx := testCtx(t)
			if err := d.Subscribe(ctx, "mem://notes"); err != nil {
				t.Fatal(err)
			}
			select {
			case <-subscribed:
			case <-ctx.Done():
				t.Fatal("the server registered no subscription")
			}
			v := d.ToolsVersion()
			if err := s.ResourceUpdated(ctx, &mcpsdk.ResourceUpdatedNotificationParams{URI: "mem://notes"}); err != nil {
				t.Fatal(err)
			}
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatal("no resources/updated notification reached the driver")
			}
			if d.ToolsVersion() <= v {
				t.Errorf("ToolsVersion did not increase: %d -> %d", v, d.ToolsVersion())
			}
			if err := d.Unsubscribe(ctx, "mem://notes"); err != nil {
				t.Errorf("Unsubscribe: %v", err)
			}
		})
	}
	ctx := testCtx(t)
	// A server without subscriptions says so.
	plain := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "p", Version: "1"}, &mcpsdk.ServerOptions{Logger: discardLogger()})
	plain.AddResource(&mcpsdk.Resource{URI: "mem://a", Name: "a"}, func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
		return &mcpsdk.ReadResourceResult{}, nil
	})
	d2, _ := connectInMemory(t, plain, Config{})
	if err := d2.Subscribe(ctx, "mem://a"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "declares no resource subscriptions") {
		t.Errorf("Subscribe on a server without subscriptions: err = %v", err)
	}
}

func TestRoots(t *testing.T) {
	dir := t.TempDir()
	abs, _ := filepath.Abs(dir)
	fileURI := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "roots", Version: "1"}, &mcpsdk.ServerOptions{Logger: discardLogger()})
	s.AddTool(&mcpsdk.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{"r": &mcpsdk.ListRootsParams{}}}, nil
			}
			res := req.Params.InputResponses["r"].(*mcpsdk.ListRootsResult)
			var out []string
			for _, r := range res.Roots {
				out = append(out, r.Name+" "+r.URI)
			}
			return text(strings.Join(out, "; ")), nil
		})
	for _, tc := range []struct {
		name  string
		roots []string
		want  string
	}{
		{"none", nil, ""},
		{"a directory", []string{dir}, filepath.Base(dir) + " " + fileURI},
		{"a file URI", []string{"file:///srv/data"}, "data file:///srv/data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := connectInMemory(t, s, Config{Roots: tc.roots})
			got, err := d.ExecuteTool(testCtx(t), "roots", nil)
			if err != nil || got != tc.want {
				t.Errorf("roots = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"https://example.com/x", ""} {
		if _, _, err := normalize(Config{Transport: &mcpsdk.InMemoryTransport{}, Roots: []string{bad}}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("root %q: err = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

// The driver's own tools go through the BaseDriver like the server's: a model
// calls them in its output and the result is framed as data.
func TestResourceToolThroughTheDriver(t *testing.T) {
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := richServer(nil).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	d, err := New(testCtx(t), Config{Transport: ct, Resources: true, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	resp := d.ProcessLLMResponse(testCtx(t), `{"tool": "resources__read", "arguments": {"uri": "mem://notes"}}`)
	if !resp.CallExecuted || len(resp.Calls) != 1 || resp.Calls[0].Result != "buy milk" {
		t.Fatalf("response = %+v", resp)
	}
	if !strings.Contains(fmt.Sprint(resp.Messages), "buy milk") {
		t.Errorf("messages = %v", resp.Messages)
	}
	var _ mcs.Driver = d
}

// signal is a log handler that signals once a record with its message is
// handled.
type signal struct {
	msg string
	ch  chan struct{}
}

func (h signal) Enabled(context.Context, slog.Level) bool { return true }
func (h signal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h signal) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signal) WithGroup(string) slog.Handler      { return h }
