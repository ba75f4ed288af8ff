package mcs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

func TestCustomWireFormat(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithFormats(actionsFormat{}, mcs.TextFormat(nil)))
	msg := map[string]any{"actions": []any{map[string]any{"tool_name": "echo", "parameters": map[string]any{"text": "custom"}}}}
	r := d.ProcessLLMResponse(context.Background(), msg)
	want := []call{{ID: "a0", Name: "echo", Args: map[string]any{"text": "custom"}, Result: "custom"}}
	if diff := cmp.Diff(want, calls(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r.Messages[1]["role"] != "tool" {
		t.Errorf("history not shaped by the custom format: %v", r.Messages)
	}

	run := runStream(t, []any{
		map[string]any{"text": "Doing it."},
		map[string]any{"action": map[string]any{"tool_name": "echo", "parameters": map[string]any{"text": "custom"}}},
		map[string]any{"end": true},
	}, false, d)
	if diff := cmp.Diff(want, run.calls()); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
	if run.shown.String() != "Doing it." || run.pending == 0 || run.buf.Format() != "actions" {
		t.Errorf("shown %q, pending rounds %d, format %q", run.shown.String(), run.pending, run.buf.Format())
	}
}

func TestCustomPromptStrategy(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithPromptStrategy(xmlCodec{}))
	ctx := context.Background()
	if msg, _ := d.SystemMessage(ctx, ""); !strings.Contains(msg, `<tool name="echo">Echo the text</tool>`) {
		t.Errorf("system message %q", msg)
	}
	reply := `Sure. <call name="echo">{"text":"xml"}</call> Done.`
	r := d.ProcessLLMResponse(ctx, reply)
	want := []call{{Name: "echo", Args: map[string]any{"text": "xml"}, Result: "xml"}}
	if diff := cmp.Diff(want, calls(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"role": "user", "content": `<result tool="echo">xml</result>`}, r.Messages[1]); diff != "" {
		t.Errorf("result message (-want +got):\n%s", diff)
	}
	for _, size := range []int{1, 4, 9} {
		shown, got := streamTextReply(d, textChunksString(reply, size))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("size %d (-want +got):\n%s", size, diff)
		}
		if shown != "Sure.  Done." {
			t.Errorf("size %d: shown %q", size, shown)
		}
	}
}

// TestFormatPriority: the extraction chain resolves in its fixed order (Chat
// Completions, Responses, Anthropic Messages, Gemini, text), whatever else a
// message carries.
func TestFormatPriority(t *testing.T) {
	chatCall := []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"chat"}`}}}
	tests := []struct {
		name  string
		reply map[string]any
		want  string // the echo text that ran
	}{
		{"chat before anthropic", map[string]any{"role": "assistant", "tool_calls": chatCall,
			"content": []any{map[string]any{"type": "tool_use", "id": "t", "name": "echo", "input": map[string]any{"text": "anthropic"}}}}, "chat"},
		{"responses before gemini", map[string]any{
			"output": []any{map[string]any{"type": "function_call", "call_id": "r", "name": "echo", "arguments": `{"text":"responses"}`}},
			"parts":  []any{map[string]any{"functionCall": map[string]any{"name": "echo", "args": map[string]any{"text": "gemini"}}}}}, "responses"},
		{"anthropic before text", map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": `{"tool":"echo","arguments":{"text":"text"}}`},
			map[string]any{"type": "tool_use", "id": "t", "name": "echo", "input": map[string]any{"text": "anthropic"}}}}, "anthropic"},
	}
	for _, tt := range tests {
		r := mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), tt.reply)
		if len(r.Calls) != 1 || r.Calls[0].Result != tt.want {
			t.Errorf("%s: calls %+v, want one echo of %q", tt.name, r.Calls, tt.want)
		}
	}
}

// TestNativeToolNameNotAString: a native call whose name is not a string is not a
// call, in every format.
func TestNativeToolNameNotAString(t *testing.T) {
	for _, reply := range []map[string]any{
		{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c", "function": map[string]any{"name": 42.0, "arguments": "{}"}}}},
		{"output": []any{map[string]any{"type": "function_call", "call_id": "c", "name": true, "arguments": "{}"}}},
		{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t", "name": []any{"echo"}, "input": map[string]any{}}}},
		{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": nil, "args": map[string]any{}}}}},
	} {
		if r := mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), reply); r.Calls != nil {
			t.Errorf("%v: ran %+v", reply, r.Calls)
		}
	}
}

// TestStreamChunkValues: chunks may be maps, JSON bytes, json.RawMessage, JSON
// strings or provider SDK structs, which are marshalled; NewStreamBuffer without
// strategies knows every built-in format.
func TestStreamChunkValues(t *testing.T) {
	type delta struct {
		Content string `json:"content"`
	}
	type choice struct {
		Index int   `json:"index"`
		Delta delta `json:"delta"`
	}
	type sdkChunk struct {
		Object  string   `json:"object"`
		Choices []choice `json:"choices"`
	}
	buf := mcs.NewStreamBuffer()
	buf.Add(sdkChunk{Object: "chat.completion.chunk", Choices: []choice{{Delta: delta{Content: "a"}}}})
	buf.Add(json.RawMessage(`{"choices":[{"index":0,"delta":{"content":"b"}}]}`))
	buf.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"c"}}]}`))
	buf.Add(`{"choices":[{"index":0,"delta":{"content":"d"}}]}`)
	buf.Add(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{"content": "e"}, "finish_reason": "stop"}}})
	buf.Add(`{"choices":[{"index":0,"delta":{"content":"ignored after the end"}}]}`)
	if buf.Format() != "openai-chat" || buf.Content() != "abcde" || !buf.Finished() || buf.Text() != "abcde" {
		t.Errorf("format %q, content %q, finished %v", buf.Format(), buf.Content(), buf.Finished())
	}
	if diff := cmp.Diff(map[string]any{"role": "assistant", "content": "abcde"}, buf.Message()); diff != "" {
		t.Errorf("Message() (-want +got):\n%s", diff)
	}

	text := mcs.NewStreamBuffer()
	text.Add(`{"tool": "echo"`) // model text that happens to be JSON-like stays text
	text.Add([]byte(`}`))
	if text.Format() != "text" || text.Content() != `{"tool": "echo"}` || text.Finished() {
		t.Errorf("format %q, content %q, finished %v", text.Format(), text.Content(), text.Finished())
	}
	if diff := cmp.Diff(map[string]any{"role": "assistant", "content": `{"tool": "echo"}`}, text.Message()); diff != "" {
		t.Errorf("Message() (-want +got):\n%s", diff)
	}
}

type celsius float64

func (c celsius) String() string { return fmt.Sprintf("%.1f°C", float64(c)) }

func TestResultText(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"as is", "as is"},
		{[]byte("bytes"), "bytes"},
		{json.RawMessage(`{"a":1}`), `{"a":1}`},
		{nil, "null"},
		{42.5, "42.5"},
		{map[string]any{"b": []any{1, "x"}, "a": true}, `{"a":true,"b":[1,"x"]}`},
		{struct {
			City string `json:"city"`
		}{"Oslo"}, `{"city":"Oslo"}`},
		{celsius(21), "21"}, // a Stringer is still JSON
		{fmt.Errorf("quota exceeded"), "quota exceeded"},
		{make(chan int), "0x"}, // not encodable: printed (prefix checked)
	}
	for _, tt := range tests {
		got := mcs.ResultText(tt.in)
		if got != tt.want && !(tt.want == "0x" && strings.HasPrefix(got, "0x")) {
			t.Errorf("ResultText(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

type panickyLister struct{ calcDriver }

func (*panickyLister) ListTools(context.Context) ([]mcs.Tool, error) { panic("listing bug") }

type panickyFormat struct{ actionsFormat }

func (panickyFormat) Extract(mcs.Output) []mcs.ToolCall { panic("extract bug") }
func (panickyFormat) NewAssembler() mcs.Assembler       { return panickyAssembler{&actionsAssembler{}} }

type panickyAssembler struct{ *actionsAssembler }

func (panickyAssembler) CallNames() []string { panic("forming bug") }

// panickyMessage is a provider SDK value whose JSON encoding panics.
type panickyMessage struct{}

func (panickyMessage) MarshalJSON() ([]byte, error) { panic("marshal bug") }

// TestUserPanicsAreContained: a panic in a tool driver's listing, in the JSON
// encoding of a caller's value or in a user's format is contained: processing
// reports nothing, and the buffer keeps working.
func TestUserPanicsAreContained(t *testing.T) {
	ctx := context.Background()
	d := mcs.NewBaseDriver(&panickyLister{})
	if r := d.ProcessLLMResponse(ctx, `{"tool":"echo"}`); r.Calls != nil || r.CallFailed {
		t.Errorf("ProcessLLMResponse: %+v", r)
	}
	shown, got := streamTextReply(d, []string{`a {"tool":"echo"}`, ` b`})
	if got != nil || shown != `a {"tool":"echo"} b` {
		t.Errorf("stream: calls %+v, shown %q", got, shown)
	}

	if r := mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(ctx, panickyMessage{}); r.Calls != nil || r.CallFailed {
		t.Errorf("ProcessLLMResponse of a value that cannot be marshalled: %+v", r)
	}

	f := mcs.NewBaseDriver(&calcDriver{}, mcs.WithFormats(panickyFormat{}, mcs.TextFormat(nil)))
	if r := f.ProcessLLMResponse(ctx, map[string]any{"actions": []any{}}); r.Calls != nil {
		t.Errorf("ProcessLLMResponse with a panicking format: %+v", r)
	}
	buf := f.NewStreamBuffer()
	buf.Add(map[string]any{"text": "hi"})
	if r := f.ProcessStream(ctx, buf); r.Calls != nil || r.CallPending {
		t.Errorf("ProcessStream with a panicking assembler: %+v", r)
	}
	if buf.Text() != "hi" { // the buffer is not left locked
		t.Error("the buffer stopped working after a panic")
	}
}
