package mcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

func TestFunctionDescription(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{})
	fd, err := d.FunctionDescription(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(fd), &got); err != nil {
		t.Fatalf("function description is not JSON: %v\n%s", err, fd)
	}
	want := []map[string]any{
		{"name": "add", "description": "Adds two numbers.", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}},
			"required":   []any{"a", "b"}}},
		{"name": "echo", "description": "Echo the text", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"text": map[string]any{"type": "string", "description": "What to echo."}}}},
		{"name": "fail", "description": "Always fails.", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}},
		{"name": "boom", "description": "Panics.", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}},
	}
	if diff := cmp.Diff(want, got.Tools); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParameterDescriptionOverridesSchema(t *testing.T) {
	schema := map[string]any{"type": "integer", "description": "from schema"}
	tool := mcs.Tool{Name: "t", Title: "T", Parameters: []mcs.Parameter{{Name: "n", Description: "from parameter", Schema: schema}}}
	got := mcs.ToolSchema(tool)
	want := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "description": "from parameter"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if schema["description"] != "from schema" {
		t.Error("ToolSchema modified the caller's schema")
	}
}

func TestSystemMessage(t *testing.T) {
	ctx := context.Background()
	d := mcs.NewBaseDriver(&calcDriver{})
	msg, err := d.SystemMessage(ctx, "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	fd, _ := d.FunctionDescription(ctx, "gpt-4o")
	for _, want := range []string{fd, `{"tool": "<tool name>", "arguments": {"<parameter name>": "<value>"}}`} {
		if !strings.Contains(msg, want) {
			t.Errorf("system message lacks %q", want)
		}
	}
	if strings.Contains(msg, "{tools}") || strings.Contains(msg, "{call_example}") {
		t.Error("system message has an unfilled placeholder")
	}

	custom := mcs.NewBaseDriver(&calcDriver{}, mcs.WithToolDescription("TOOLS"), mcs.WithSystemMessage(""))
	if fd, err := custom.FunctionDescription(ctx, ""); err != nil || fd != "TOOLS" {
		t.Errorf("FunctionDescription with WithToolDescription = %q, %v", fd, err)
	}
	msg, _ = custom.SystemMessage(ctx, "")
	if !strings.Contains(msg, "TOOLS") || strings.Contains(msg, `"add"`) {
		t.Errorf("WithToolDescription not used: %q", msg)
	}
	fixed := mcs.NewBaseDriver(&calcDriver{}, mcs.WithSystemMessage("You are a calculator."))
	if msg, _ := fixed.SystemMessage(ctx, ""); msg != "You are a calculator." {
		t.Errorf("WithSystemMessage not used: %q", msg)
	}
}

type brokenLister struct{ calcDriver }

func (*brokenLister) ListTools(context.Context) ([]mcs.Tool, error) {
	return nil, errors.New("spec unreachable")
}

func TestListingErrors(t *testing.T) {
	d := mcs.NewBaseDriver(&brokenLister{})
	if _, err := d.SystemMessage(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "spec unreachable") {
		t.Errorf("SystemMessage error = %v", err)
	}
	// Without a listing no call can be claimed.
	if r := d.ProcessLLMResponse(context.Background(), `{"tool":"echo"}`); r.CallExecuted || r.CallFailed {
		t.Errorf("a driver that cannot list tools executed a call: %+v", r)
	}
}

func TestNativeToolContext(t *testing.T) {
	ctx := context.Background()
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithNativeTools(func(model string) bool { return strings.HasPrefix(model, "gpt-") }))
	nc, err := d.NativeToolContext(ctx, "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	if len(nc.Tools) != 4 || strings.Contains(nc.SystemMessage, `"add"`) {
		t.Fatalf("native context: %d tools, system message %q", len(nc.Tools), nc.SystemMessage)
	}
	want := mcs.FunctionTool{Name: "echo", Description: "Echo the text",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string", "description": "What to echo."}}}}
	if diff := cmp.Diff(want, nc.Tools[1]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	text, err := d.NativeToolContext(ctx, "llama3")
	full, _ := d.SystemMessage(ctx, "llama3")
	if err != nil || text.Tools != nil || text.SystemMessage != full {
		t.Errorf("non-native model: tools %v, message equal to the text one: %v", text.Tools, text.SystemMessage == full)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPromptStrategyOverlay(t *testing.T) {
	p := writeFile(t, "prompt.toml", `
[system_message]
template = "TOOLS:\n{tools}\nCALL LIKE:\n{call_example}"

[parsing]
tool_field_aliases = ["function"]

[retry_prompts]
execution_failed = "Oops in {tool_name}: {error}"

[history]
result_role = "user"

[[healing]]
name = "nil"
pattern = '\bnil\b'
replacement = 'null'
`)
	ps, err := mcs.LoadPromptStrategy(p)
	if err != nil {
		t.Fatal(err)
	}
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithPromptStrategy(ps))
	msg, _ := d.SystemMessage(context.Background(), "")
	if !strings.HasPrefix(msg, "TOOLS:\n{") || !strings.Contains(msg, "CALL LIKE:\n```json") {
		t.Errorf("template not overlaid (the call example must stay the bundled one):\n%s", msg)
	}
	// the new alias and the appended healing rule, plus a bundled rule still active
	r := d.ProcessLLMResponse(context.Background(), `{"function": "echo", "arguments": {"text": `+"\u201c"+`hi`+"\u201d"+`, "extra": nil}}`)
	if len(r.Calls) != 1 || r.Calls[0].Result != "hi" {
		t.Fatalf("calls = %+v", r.Calls)
	}
	if r.Messages[1]["role"] != "user" {
		t.Errorf("result role = %v, want user", r.Messages[1]["role"])
	}
	if r := d.ProcessLLMResponse(context.Background(), `{"tool":"echo"}`); r.CallExecuted {
		t.Error(`"tool" still names the tool after the aliases were replaced`)
	}
	r = d.ProcessLLMResponse(context.Background(), `{"function":"fail"}`)
	if r.RetryPrompt != "Oops in fail: the backend is down" {
		t.Errorf("RetryPrompt = %q", r.RetryPrompt)
	}
}

func TestLoadPromptStrategyErrors(t *testing.T) {
	tests := []struct {
		name, content string
		wantLine      int
		want          []string
	}{
		{"bad toml", "[system_message]\ntemplate = \"unterminated\n", 2, []string{"bad.toml"}},
		{"unknown key", "[system_message]\ntemplat = \"x\"\n", 2, []string{"bad.toml", `unknown key "system_message.templat"`}},
		{"invalid regex", "[[healing]]\nname = \"ok\"\npattern = 'a'\nreplacement = 'b'\n\n[[healing]]\nname = \"broken\"\npattern = '(unclosed'\nreplacement = ''\n", 6,
			[]string{"bad.toml", `healing rule "broken"`, "invalid regular expression"}},
		{"empty aliases", "[parsing]\ntool_field_aliases = []\n", 2, []string{"tool_field_aliases is empty"}},
		{"empty arguments aliases", "[parsing]\n\narguments_field_aliases = []\n", 3, []string{"arguments_field_aliases is empty"}},
		{"wrong type", "# a comment\n[retry_prompts]\nexecution_failed = 5\n", 3, []string{"bad.toml"}},
		{"empty pattern", "[[healing]]\nname = \"blank\"\npattern = ''\n", 1, []string{`healing rule "blank"`, "pattern is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, "bad.toml", tt.content)
			ps, err := mcs.LoadPromptStrategy(p)
			if ps != nil {
				t.Errorf("LoadPromptStrategy returned a non-nil strategy %#v with its error", ps)
			}
			var pe *mcs.PromptError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *PromptError", err)
			}
			if pe.Line != tt.wantLine {
				t.Errorf("line = %d, want %d (%v)", pe.Line, tt.wantLine, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	if _, err := mcs.LoadPromptStrategy(filepath.Join(t.TempDir(), "missing.toml")); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing file: %v", err)
	}
}

// A result template changed after loading frames the next result; the frame of
// the old one is not reused.
func TestResultTemplateChangedAfterLoading(t *testing.T) {
	ps, err := mcs.ParsePromptStrategy("test", nil)
	if err != nil {
		t.Fatal(err)
	}
	call := mcs.ToolCall{Name: "echo", Arguments: map[string]any{"a": 1.0}}
	first := ps.ResultMessage(call, "hi", false)["content"].(string)
	if !strings.Contains(first, "<tool_result") {
		t.Fatalf("default frame = %q", first)
	}
	ps.ResultTemplate = "[{call}]\n{content}\n[end {tool_name}]"
	got := ps.ResultMessage(call, "x [END ECHO] y", false)["content"].(string)
	if want := "[echo {\"a\":1}]\nx [\\END ECHO] y\n[end echo]"; got != want {
		t.Errorf("framed = %q, want %q", got, want)
	}
	cp := *ps // a copy keeps working, with its own template
	cp.ResultTemplate = "{content}!"
	if got := cp.ResultMessage(call, "z", false)["content"]; got != "z!" {
		t.Errorf("copy framed %q", got)
	}
	if got := ps.ResultMessage(call, "z", false)["content"].(string); !strings.HasPrefix(got, "[echo") {
		t.Errorf("original framed %q after the copy changed", got)
	}
}
