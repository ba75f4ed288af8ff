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

// actionsFormat is a wire format the kernel does not know: {"actions":[{"tool_name",
// "parameters"}]}, streamed as {"action": {...}} chunks and a final {"end": true}.
// It proves that a new provider format needs no fork.
type actionsFormat struct{}

var _ mcs.ExtractionStrategy = actionsFormat{}

func (actionsFormat) Format() string { return "actions" }

func (actionsFormat) Match(r mcs.Reply) bool {
	_, ok := r.Message["actions"]
	return ok
}

func (actionsFormat) Extract(r mcs.Reply) []mcs.ToolCall {
	list, _ := r.Message["actions"].([]any)
	var out []mcs.ToolCall
	for i, a := range list {
		m, _ := a.(map[string]any)
		name, _ := m["tool_name"].(string)
		args, _ := m["parameters"].(map[string]any)
		out = append(out, mcs.ToolCall{ID: fmt.Sprint("a", i), Name: name, Arguments: args})
	}
	return out
}

func (actionsFormat) History(r mcs.Reply, outcomes []mcs.CallOutcome) []map[string]any {
	var results []any
	for _, o := range outcomes {
		results = append(results, map[string]any{"id": o.Call.ID, "output": mcs.ResultText(o.Result)})
	}
	return []map[string]any{{"role": "assistant", "actions": r.Message["actions"]}, {"role": "tool", "results": results}}
}

func (actionsFormat) MatchChunk(chunk any) bool {
	m, ok := chunk.(map[string]any)
	return ok && (m["action"] != nil || m["end"] != nil || m["text"] != nil)
}

func (actionsFormat) NewAssembler() mcs.Assembler { return &actionsAssembler{} }

type actionsAssembler struct {
	actions []any
	names   []string
	done    bool
}

func (a *actionsAssembler) Add(chunk any) string {
	m, _ := chunk.(map[string]any)
	if act, ok := m["action"].(map[string]any); ok {
		a.actions = append(a.actions, act)
		name, _ := act["tool_name"].(string)
		a.names = append(a.names, name)
	}
	if m["end"] == true {
		a.done = true
	}
	text, _ := m["text"].(string)
	return text
}

func (a *actionsAssembler) Message() map[string]any {
	return map[string]any{"actions": append([]any(nil), a.actions...)}
}
func (a *actionsAssembler) Done() bool        { return a.done }
func (a *actionsAssembler) Forming() []string { return a.names }

func TestCustomExtractionStrategy(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithExtractionStrategies(actionsFormat{}, mcs.TextFormat(nil)))
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

// xmlCodec is a prompt dialect the kernel does not know: <call name="tool">{json
// arguments}</call>. It proves that another codec needs no fork, in both the whole
// and the streaming path.
type xmlCodec struct{}

var _ mcs.PromptStrategy = xmlCodec{}

func (xmlCodec) EncodeTools(tools []mcs.Tool) (string, error) {
	var b strings.Builder
	for _, t := range tools {
		fmt.Fprintf(&b, "<tool name=%q>%s</tool>\n", t.Name, t.Summary())
	}
	return b.String(), nil
}
func (xmlCodec) SystemMessage(fd string) string {
	return "Tools:\n" + fd + `Call: <call name="tool">{}</call>`
}
func (xmlCodec) NativeSystemMessage() string { return "Use the tools." }
func (xmlCodec) RetryPrompt(tool, err string) string {
	return "<error tool=\"" + tool + "\">" + err + "</error>"
}
func (xmlCodec) ResultMessage(tool, text string, failed bool) map[string]any {
	return map[string]any{"role": "user", "content": "<result tool=\"" + tool + "\">" + text + "</result>"}
}
func (xmlCodec) NewDecoder() mcs.TextDecoder { return &xmlDecoder{} }

const xmlOpen, xmlClose = `<call name="`, `</call>`

// xmlDecoder scans from the end of the last complete call; a region that starts
// like an open tag is pending.
type xmlDecoder struct {
	pos     int
	pending int // start of a forming call, -1 for none
	name    string
}

func (d *xmlDecoder) Scan(text string) []mcs.ToolCall {
	var out []mcs.ToolCall
	d.pending, d.name = -1, ""
	for {
		rest := text[d.pos:]
		i := strings.Index(rest, xmlOpen)
		if i < 0 {
			// a tail that may still grow into an open tag
			if j := strings.LastIndexByte(rest, '<'); j >= 0 && strings.HasPrefix(xmlOpen, rest[j:]) {
				d.pending = d.pos + j
			}
			return out
		}
		start := d.pos + i
		body := text[start+len(xmlOpen):]
		q := strings.IndexByte(body, '"')
		e := strings.Index(body, xmlClose)
		if q < 0 || e < 0 {
			d.pending = start
			if q >= 0 {
				d.name = body[:q]
			}
			return out
		}
		var args map[string]any
		err := json.Unmarshal([]byte(body[q+2:e]), &args)
		c := mcs.ToolCall{Name: body[:q], Arguments: args, Start: start, End: start + len(xmlOpen) + e + len(xmlClose)}
		if err != nil {
			c.Err = fmt.Errorf("%w: %v", mcs.ErrMalformedCall, err)
		}
		out = append(out, c)
		d.pos = c.End
	}
}

func (d *xmlDecoder) Finish(text string) []mcs.ToolCall { return d.Scan(text) }
func (d *xmlDecoder) Pending() (int, string, bool)      { return d.pending, d.name, d.pending >= 0 }
func (d *xmlDecoder) Malformed() []mcs.ToolCall         { return nil }

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

func (panickyFormat) Extract(mcs.Reply) []mcs.ToolCall { panic("extract bug") }
func (panickyFormat) NewAssembler() mcs.Assembler      { return panickyAssembler{&actionsAssembler{}} }

type panickyAssembler struct{ *actionsAssembler }

func (panickyAssembler) Forming() []string { panic("forming bug") }

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

	f := mcs.NewBaseDriver(&calcDriver{}, mcs.WithExtractionStrategies(panickyFormat{}, mcs.TextFormat(nil)))
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
