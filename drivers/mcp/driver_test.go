package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestListToolsEveryPage(t *testing.T) {
	d, _ := connectInMemory(t, newTestServer(2), Config{})
	tools, err := d.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	want := []string{"ask", "askname", "echo", "fail", "picture", "structured", "wait"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	var echo mcs.Tool
	for _, tl := range tools {
		if tl.Name == "echo" {
			echo = tl
		}
	}
	wantEcho := mcs.Tool{
		Name: "echo", Title: "Echo", Description: "echoes a message",
		Annotations: &mcs.ToolAnnotations{ReadOnly: true, Destructive: true, Idempotent: true, OpenWorld: false},
		Parameters: []mcs.Parameter{
			{Name: "message", Description: "the text to echo", Required: true, Schema: map[string]any{"type": "string", "description": "the text to echo"}},
			{Name: "times", Description: "how often", Schema: map[string]any{"type": "integer", "description": "how often"}},
		},
	}
	if diff := cmp.Diff(wantEcho, echo); diff != "" {
		t.Errorf("echo (-want +got):\n%s", diff)
	}
	for _, tl := range tools {
		if err := tl.Validate(); err != nil {
			t.Errorf("tool %s: %v", tl.Name, err)
		}
	}
}

func TestSchemaMapping(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		want     []mcs.Parameter
		problems bool
	}{
		{
			name:   "defs inlined, sibling keywords kept",
			schema: `{"type":"object","required":["b","a"],"properties":{"a":{"$ref":"#/$defs/id","description":"first"},"b":{"type":"string"},"c":{"type":"boolean"}},"$defs":{"id":{"type":"integer","minimum":1}}}`,
			want: []mcs.Parameter{
				{Name: "b", Required: true, Schema: map[string]any{"type": "string"}},
				{Name: "a", Required: true, Description: "first", Schema: map[string]any{"type": "integer", "minimum": 1.0, "description": "first"}},
				{Name: "c", Schema: map[string]any{"type": "boolean"}},
			},
		},
		{
			name:   "old definitions and pointer escapes",
			schema: `{"type":"object","properties":{"p":{"items":{"$ref":"#/definitions/a~1b"},"type":"array"}},"definitions":{"a/b":{"type":"number"}}}`,
			want:   []mcs.Parameter{{Name: "p", Schema: map[string]any{"type": "array", "items": map[string]any{"type": "number"}}}},
		},
		{
			name:   "cycle cut where it closes",
			schema: `{"type":"object","properties":{"tree":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			want: []mcs.Parameter{{Name: "tree", Schema: map[string]any{"type": "object", "properties": map[string]any{
				"kids": map[string]any{"type": "array", "items": map[string]any{"type": "object", "description": "(recursive: same schema as #/$defs/node, not expanded again)"}},
			}}}},
		},
		{
			name:     "remote reference kept as given",
			schema:   `{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`,
			want:     []mcs.Parameter{{Name: "x", Schema: map[string]any{"$ref": "https://example.com/s.json"}}},
			problems: true,
		},
		{
			name:     "dangling reference kept as given",
			schema:   `{"type":"object","properties":{"x":{"$ref":"#/$defs/none"}}}`,
			want:     []mcs.Parameter{{Name: "x", Schema: map[string]any{"$ref": "#/$defs/none"}}},
			problems: true,
		},
		{
			name:     "top-level oneOf is reported",
			schema:   `{"type":"object","oneOf":[{"required":["a"]},{"required":["b"]}],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			want:     []mcs.Parameter{{Name: "a", Schema: map[string]any{"type": "string"}}, {Name: "b", Schema: map[string]any{"type": "string"}}},
			problems: true,
		},
		{
			name:     "required but undeclared",
			schema:   `{"type":"object","required":["q"]}`,
			want:     []mcs.Parameter{{Name: "q", Required: true, Schema: map[string]any{}}},
			problems: true,
		},
		{
			name:   "no parameters",
			schema: `{"type":"object"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			got, problems := mapParameters(schema)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parameters (-want +got):\n%s", diff)
			}
			if (len(problems) > 0) != tt.problems {
				t.Errorf("problems = %q, want some: %v", problems, tt.problems)
			}
		})
	}
}

func TestSchemaExpansionIsBounded(t *testing.T) {
	// Each level refers to the next twice: 2^40 nodes when expanded naively.
	defs := map[string]any{}
	for i := range 40 {
		next := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"l": next, "r": next}}
	}
	defs["d40"] = map[string]any{"type": "string"}
	schema := map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d0"}}}
	params, problems := mapParameters(schema)
	if len(params) != 1 || !strings.Contains(strings.Join(problems, ";"), "more than") {
		t.Fatalf("params = %d, problems = %q; want one parameter and a size problem", len(params), problems)
	}
	if diff := cmp.Diff(map[string]any{"$ref": "#/$defs/d0"}, params[0].Schema); diff != "" {
		t.Errorf("schema kept as given (-want +got):\n%s", diff)
	}
}

func TestUnrepresentableToolIsListedAndLogged(t *testing.T) {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "odd", Version: "1"}, nil)
	s.AddTool(&mcpsdk.Tool{Name: "pick", InputSchema: json.RawMessage(`{"type":"object","anyOf":[{"required":["a"]}],"properties":{"a":{"type":"string"}}}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) { return text("ok"), nil })
	d, l := connectInMemory(t, s, Config{})
	tools, err := d.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []mcs.Tool{{Name: "pick", Title: "pick", Parameters: []mcs.Parameter{{Name: "a", Schema: map[string]any{"type": "string"}}}}}
	if diff := cmp.Diff(want, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if logged := strings.Join(l.all(), "\n"); !strings.Contains(logged, `"anyOf"`) || !strings.Contains(logged, "tool=pick") {
		t.Errorf("no warning naming the tool and the keyword; logged:\n%s", logged)
	}
}

func TestExecuteTool(t *testing.T) {
	d, _ := connectInMemory(t, newTestServer(0), Config{})
	tests := []struct {
		tool    string
		args    map[string]any
		want    any
		wantErr string
	}{
		{tool: "echo", args: map[string]any{"message": "hi", "times": 2}, want: "hi\nhi"},
		{tool: "picture", want: "a red dot\n[image: image/png, 12 bytes]\n[audio: audio/wav, 100 bytes]\n" +
			"[resource link: file:///tmp/dot.png, image/png, 42 bytes, dot]\n[resource: mem://notes, text/plain, 5 bytes]"},
		{tool: "structured", want: map[string]any{"x": 1.0, "y": 2.0}},
		{tool: "fail", wantErr: `MCP tool "fail" failed: the disk is full`},
		{tool: "echo", args: map[string]any{"times": "x"}, wantErr: `failed: validating "arguments"`},
		{tool: "nope", wantErr: "unknown tool"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got, err := d.ExecuteTool(testCtx(t), tt.tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
	_, err := d.ExecuteTool(testCtx(t), "fail", nil)
	var te *ToolError
	if !errors.As(err, &te) || te.Text != "the disk is full" {
		t.Errorf("err = %#v, want a *ToolError with the server's text", err)
	}
	_, err = d.ExecuteTool(testCtx(t), "nope", nil)
	if !errors.Is(err, mcs.ErrUnknownTool) {
		t.Errorf("err = %v, want mcs.ErrUnknownTool", err)
	}
}

func TestListChanged(t *testing.T) {
	s := newTestServer(0)
	d, _ := connectInMemory(t, s, Config{})
	changed := make(chan struct{}, 10)
	d.onChange = func() { changed <- struct{}{} }
	v := d.ToolsVersion()
	s.AddTool(&mcpsdk.Tool{Name: "late", Description: "added later", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text("late"), nil
		})
	select {
	case <-changed:
	case <-testCtx(t).Done():
		t.Fatal("no list_changed notification")
	}
	if d.ToolsVersion() <= v {
		t.Errorf("ToolsVersion did not increase: %d -> %d", v, d.ToolsVersion())
	}
	ok, err := d.HasTool(testCtx(t), "late")
	if err != nil || !ok {
		t.Fatalf("HasTool(late) = %v, %v; want true", ok, err)
	}
	got, err := d.ExecuteTool(testCtx(t), "late", nil)
	if err != nil || got != "late" {
		t.Errorf("late = %v, %v", got, err)
	}
	s.RemoveTools("late")
	<-changed
	if ok, _ := d.HasTool(testCtx(t), "late"); ok {
		t.Error("removed tool still listed")
	}
}

func TestElicitation(t *testing.T) {
	var asked []string
	tests := []struct {
		name    string
		cfg     Config
		tool    string
		want    string
		wantAsk bool
	}{
		{name: "accepted", cfg: Config{Consent: func(_ context.Context, name string, args map[string]any) (bool, error) {
			asked = append(asked, name+": "+args["elicitation"].(string))
			return true, nil
		}}, tool: "ask", want: "accept true", wantAsk: true},
		{name: "declined", cfg: Config{Consent: func(context.Context, string, map[string]any) (bool, error) {
			asked = append(asked, "asked")
			return false, nil
		}}, tool: "ask", want: "decline <nil>", wantAsk: true},
		{name: "no decision", cfg: Config{Consent: func(context.Context, string, map[string]any) (bool, error) {
			asked = append(asked, "asked")
			return false, errors.New("no terminal")
		}}, tool: "ask", want: "cancel <nil>", wantAsk: true},
		{name: "no handler", tool: "ask", want: "decline <nil>"},
		{name: "input a yes cannot give", cfg: Config{Consent: func(context.Context, string, map[string]any) (bool, error) {
			asked = append(asked, "asked")
			return true, nil
		}}, tool: "askname", want: "decline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			d, _ := connectInMemory(t, newTestServer(0), tt.cfg)
			ctx := mcs.ContextWithCallInfo(testCtx(t), mcs.CallInfo{Tool: mcs.Tool{Name: tt.tool}})
			got, err := d.ExecuteTool(ctx, tt.tool, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("result = %q, want %q", got, tt.want)
			}
			if (len(asked) > 0) != tt.wantAsk {
				t.Errorf("asked = %q, want asked: %v", asked, tt.wantAsk)
			}
		})
	}
	if want := "ask: Delete the draft?"; len(asked) > 0 && asked[0] != want && asked[0] != "asked" {
		t.Errorf("question = %q, want %q", asked[0], want)
	}
}

func TestCancelledCallCancelsTheServersContext(t *testing.T) {
	d, _ := connectInMemory(t, newTestServer(0), Config{})
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := d.ExecuteTool(ctx, "wait", nil)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	// The session still works.
	if got, err := d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "x"}); err != nil || got != "x" {
		t.Errorf("echo after cancel = %v, %v", got, err)
	}
}

func TestCallTimeout(t *testing.T) {
	d, _ := connectInMemory(t, newTestServer(0), Config{CallTimeout: 50 * 1e6})
	_, err := d.ExecuteTool(testCtx(t), "wait", nil)
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("err = %v, want a timeout naming the server", err)
	}
}

func TestInvalidConfig(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "set Command"},
		{Config{URL: "ftp://x"}, "not an absolute http or https URL"},
		{Config{URL: "https://user:secret@host/mcp?key=1"}, "valid HTTP header"},
		{Config{Command: []string{""}}, "program"},
		{Config{Command: []string{"x"}, Env: []string{"NOEQUALS"}}, "KEY=VALUE"},
		{Config{Command: []string{"x"}, CallTimeout: -1}, "negative"},
	}
	tests[2].cfg.Headers = map[string]string{"Bad Name": "v"}
	for _, tt := range tests {
		_, err := NewToolDriver(context.Background(), tt.cfg)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want ErrInvalidConfig with %q", tt.cfg, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("error shows a credential: %v", err)
		}
	}
}

func TestChildEnvironment(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "OPENAI_API_KEY=sk-1", "LC_ALL=C", "HOME=/h", "AWS_SECRET=x"}, []string{"TOKEN=t"})
	want := []string{"PATH=/bin", "LC_ALL=C", "HOME=/h", "TOKEN=t"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 8}
	_, _ = tl.Write([]byte("hello "))
	_, _ = tl.Write([]byte("wörld\x1b[31m"))
	if got, want := tl.String(), "...rld?[31m"; got != want {
		t.Errorf("tail = %q, want %q", got, want)
	}
	var nilTail *tail
	if nilTail.String() != "" {
		t.Error("nil tail not empty")
	}
	_ = os.Getpid
}

func TestOrchestratorSeesListChanged(t *testing.T) {
	s := newTestServer(0)
	ct, st := mcpsdk.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	d, err := New(testCtx(t), Config{Transport: ct, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	changed := make(chan struct{}, 10)
	d.td.onChange = func() { changed <- struct{}{} }
	o := orchestrator.New(orchestrator.Flat())
	if err := o.AddDriver("srv", d); err != nil {
		t.Fatal(err)
	}
	if resp := o.ProcessLLMResponse(testCtx(t), `{"tool":"late","arguments":{}}`); len(resp.Calls) != 0 {
		t.Fatalf("late owned before it exists: %+v", resp)
	}
	s.AddTool(&mcpsdk.Tool{Name: "late", Description: "added later", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text("late ran"), nil
		})
	<-changed
	resp := o.ProcessLLMResponse(testCtx(t), `{"tool":"late","arguments":{}}`)
	if !resp.CallExecuted || resp.Calls[0].Result != "late ran" {
		t.Errorf("after list_changed the orchestrator runs late: %+v", resp)
	}
}

func TestElicitationFromAnOlderServer(t *testing.T) {
	// A server of protocol 2025-11-25 sends elicitation/create as a request of
	// its own, outside the call.
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "old", Version: "1"}, &mcpsdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	s.AddTool(&mcpsdk.Tool{Name: "confirm", Description: "asks first", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcpsdk.ElicitParams{Message: "Proceed?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
			if err != nil {
				return nil, err
			}
			return text(res.Action), nil
		})
	var asked []string
	d, _ := connectInMemory(t, s, Config{Consent: func(_ context.Context, name string, args map[string]any) (bool, error) {
		asked = append(asked, name+" "+args["elicitation"].(string))
		return true, nil
	}})
	got, err := d.ExecuteTool(testCtx(t), "confirm", nil)
	if err != nil || got != "accept" {
		t.Fatalf("confirm = %v, %v", got, err)
	}
	if diff := cmp.Diff([]string{"elicitation Proceed?"}, asked); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
}

func TestNamesAModelCannotCall(t *testing.T) {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "dots", Version: "1"}, &mcpsdk.ServerOptions{Logger: discardLogger()})
	s.AddTool(&mcpsdk.Tool{Name: "files.read", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text("called " + req.Params.Name), nil
		})
	d, l := connectInMemory(t, s, Config{})
	tools, err := d.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "files_read" || tools[0].Title != "files.read" {
		t.Fatalf("tools = %+v, want files.read listed as files_read", tools)
	}
	got, err := d.ExecuteTool(testCtx(t), "files_read", nil)
	if err != nil || got != "called files.read" {
		t.Errorf("files_read = %v, %v; want the server's own name called", got, err)
	}
	if !strings.Contains(strings.Join(l.all(), "\n"), "renamed") {
		t.Error("rename not logged")
	}
}

func TestHugeResultIsCut(t *testing.T) {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "big", Version: "1"}, nil)
	s.AddTool(&mcpsdk.Tool{Name: "dump", Description: "a lot of text", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return text(strings.Repeat("é", MaxResultBytes)), nil // 2 MiB
		})
	d, _ := connectInMemory(t, s, Config{})
	got, err := d.ExecuteTool(testCtx(t), "dump", nil)
	if err != nil {
		t.Fatal(err)
	}
	str := got.(string)
	if len(str) > MaxResultBytes+100 || !strings.HasSuffix(str, "[... 1048576 more bytes cut]") {
		t.Errorf("result of %d bytes ends %q", len(str), str[len(str)-40:])
	}
}
