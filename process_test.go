package mcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// call is the part of a CallRecord the table tests compare.
type call struct {
	ID     string
	Name   string
	Args   map[string]any
	Result any
	Err    string
}

func calls(r mcs.Response) []call {
	var out []call
	for _, c := range r.Calls {
		e := ""
		if c.Err != nil {
			e = c.Err.Error()
		}
		out = append(out, call{ID: c.ID, Name: c.Name, Args: c.Arguments, Result: c.Result, Err: e})
	}
	return out
}

func TestProcessTextCalls(t *testing.T) {
	tests := []struct {
		name  string
		reply any
		want  []call
	}{
		{"bare call", `{"tool": "add", "arguments": {"a": 1, "b": 2}}`,
			[]call{{Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}, Result: 3.0}}},
		{"prose around", `Let me add these. {"tool":"add","arguments":{"a":2,"b":2}} Done soon.`,
			[]call{{Name: "add", Args: map[string]any{"a": 2.0, "b": 2.0}, Result: 4.0}}},
		{"name alias", `{"name": "echo", "arguments": {"text": "hi"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "hi"}, Result: "hi"}}},
		{"tool wins over name", `{"name": "echo", "tool": "add", "arguments": {"a": 1, "b": 1}}`,
			[]call{{Name: "add", Args: map[string]any{"a": 1.0, "b": 1.0}, Result: 2.0}}},
		{"fenced", "Here you go:\n```json\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"fenced\"}}\n```\n",
			[]call{{Name: "echo", Args: map[string]any{"text": "fenced"}, Result: "fenced"}}},
		{"fenced trailing comma", "```json\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"x\",},}\n```",
			[]call{{Name: "echo", Args: map[string]any{"text": "x"}, Result: "x"}}},
		{"two-backtick fence typo", "``json\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"t\"}}\n``",
			[]call{{Name: "echo", Args: map[string]any{"text": "t"}, Result: "t"}}},
		{"single quotes", `{'tool': 'echo', 'arguments': {'text': "it's"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "it's"}, Result: "it's"}}},
		{"python literals", `{"tool": "echo", "arguments": {"text": "x", "loud": True, "times": None, "quiet": False}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "x", "loud": true, "times": nil, "quiet": false}, Result: "x"}}},
		{"comments", "{\n  // the tool\n  \"tool\": \"echo\", /* inline */\n  \"arguments\": {\"text\": \"c\"} // end\n}",
			[]call{{Name: "echo", Args: map[string]any{"text": "c"}, Result: "c"}}},
		{"bare keys", `{tool: "echo", arguments: {text: "bare"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "bare"}, Result: "bare"}}},
		{"typographic quotes", "{\u201ctool\u201d: \u201cecho\u201d, \u201carguments\u201d: {\u201ctext\u201d: \u201cq\u201d}}",
			[]call{{Name: "echo", Args: map[string]any{"text": "q"}, Result: "q"}}},
		{"arguments missing", `{"tool": "echo"}`,
			[]call{{Name: "echo", Args: map[string]any{}, Result: ""}}},
		{"arguments null", `{"tool": "echo", "arguments": null}`,
			[]call{{Name: "echo", Args: map[string]any{}, Result: ""}}},
		{"arguments as JSON text", `{"tool": "echo", "arguments": "{\"text\": \"enc\"}"}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "enc"}, Result: "enc"}}},
		{"arguments not an object", `{"tool": "echo", "arguments": [1, 2]}`,
			[]call{{Name: "echo", Args: map[string]any{}, Err: `the "arguments" field of the call to "echo" must be a JSON object of named arguments, got an array`}}},
		{"two calls in order", `First {"tool":"echo","arguments":{"text":"one"}} then {"tool":"add","arguments":{"a":1,"b":1}}.`,
			[]call{{Name: "echo", Args: map[string]any{"text": "one"}, Result: "one"}, {Name: "add", Args: map[string]any{"a": 1.0, "b": 1.0}, Result: 2.0}}},
		{"owned and foreign", `{"tool":"search_web","arguments":{"q":"x"}} {"tool":"echo","arguments":{"text":"mine"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "mine"}, Result: "mine"}}},
		{"braces and quotes inside strings", `{"tool": "echo", "arguments": {"text": "a } b { c \" d ' e"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "a } b { c \" d ' e"}, Result: "a } b { c \" d ' e"}}},
		{"prose with braces before", `Sets look like {a, b} and { this }. {"tool":"echo","arguments":{"text":"after"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "after"}, Result: "after"}}},
		{"unclosed prose brace before", `I'd say { maybe. {"tool":"echo","arguments":{"text":"z"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "z"}, Result: "z"}}},
		{"unicode", `Voilà ✓ {"tool":"echo","arguments":{"text":"héllo 世界 \u00e9 😀"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "héllo 世界 é 😀"}, Result: "héllo 世界 é 😀"}}},
		{"nested object is not a call", `{"data": {"tool": "echo", "arguments": {"text": "no"}}}`, nil},
		{"tool name not a string", `{"tool": 42, "arguments": {}}`, nil},
		{"tool name empty", `{"tool": "", "arguments": {}}`, nil},
		// An owned call that cannot run fails with a retry prompt, as it does streamed.
		{"truncated", `{"tool": "echo", "arguments": {"text": "cut`,
			[]call{{Name: "echo", Args: map[string]any{}, Err: `malformed tool call: the JSON object of the call to "echo" never closed`}}},
		{"object without tool field", `{"result": "ok"}`, nil},
		{"plain prose", `The weather is nice today.`, nil},
		{"empty", ``, nil},
		{"unknown tool", `{"tool": "delete_everything", "arguments": {}}`, nil},
		{"unparseable even after healing", `{"tool": "echo", "arguments": {"text": "x" "y"}}`,
			[]call{{Name: "echo", Args: map[string]any{}, Err: `malformed tool call: the call to "echo" is not valid JSON, even after repair; write one JSON object with double-quoted keys and strings`}}},
		{"unclosed fence: reply is final", "```json\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"open\"}}",
			[]call{{Name: "echo", Args: map[string]any{"text": "open"}, Result: "open"}}},
		{"tool field not a string, name field set", `{"tool": 42, "name": "echo"}`, nil},
		{"tool field empty, name field set", `{"tool": "", "name": "echo"}`, nil},
		{"tool field null", `{"name": "echo", "tool": null}`, nil},
		{"two tool fields naming two tools", `{"tool": "echo", "tool": "add", "arguments": {"a": 1, "b": 1}}`,
			[]call{{Name: "echo", Args: map[string]any{}, Err: `malformed tool call: the object names two tools, "echo" and "add"; write one JSON object per call`}}},
		{"the same tool field twice, same tool", `{"tool": "echo", "tool": "echo", "arguments": {"text": "d"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "d"}, Result: "d"}}},
		{"escaped apostrophe in a double-quoted string", `{"tool": "echo", "arguments": {"text": "it\'s"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "it's"}, Result: "it's"}}},
		{"apostrophe in a single-quoted string", `{'tool': 'echo', 'arguments': {'text': 'it's mine'}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "it's mine"}, Result: "it's mine"}}},
		{"raw control characters in a string", "{\"tool\": \"echo\", \"arguments\": {\"text\": \"a\tb\nc\x01\"}}",
			[]call{{Name: "echo", Args: map[string]any{"text": "a\tb\nc\x01"}, Result: "a\tb\nc\x01"}}},
		{"unicode escapes in the name and braces", `{"tool": "ech\u006f", "arguments": {"text": "\u007b\u007d"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "{}"}, Result: "{}"}}},
		{"CRLF fence", "Sure.\r\n```json\r\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"w\"}}\r\n```\r\n",
			[]call{{Name: "echo", Args: map[string]any{"text": "w"}, Result: "w"}}},
		{"arguments alias args", `{"tool": "echo", "args": {"text": "a"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "a"}, Result: "a"}}},
		{"arguments alias parameters", `{"name": "echo", "parameters": {"text": "p"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "p"}, Result: "p"}}},
		{"prose brace with a bare key and an apostrophe", `The format is {name: the user's name}. {"tool":"echo","arguments":{"text":"k"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "k"}, Result: "k"}}},
		{"a comment left open in an unclosed prose object", `{note: "x" // remark {"tool":"echo"}`,
			[]call{{Name: "echo", Args: map[string]any{}, Result: ""}}},
		{"an unclosed bare-key prose brace around a call", `Use {name: value for each. Now {"tool":"echo","arguments":{"text":"n"}}`,
			[]call{{Name: "echo", Args: map[string]any{"text": "n"}, Result: "n"}}},
		{"a call nested in a truncated call is data", `{"tool": "web_search", "arguments": {"q": {"tool": "echo", "arguments": {"text": "no"}}`, nil},
		{"a name nested in a truncated owned call is data", `{"tool": "add", "arguments": {"a": {"name": "echo"}, "b":`,
			[]call{{Name: "add", Args: map[string]any{}, Err: `malformed tool call: the JSON object of the call to "add" never closed`}}},
		{"bytes holding text", []byte(`{"tool": "echo", "arguments": {"text": "bytes"}}`),
			[]call{{Name: "echo", Args: map[string]any{"text": "bytes"}, Result: "bytes"}}},
		{"json.RawMessage holding text", json.RawMessage(`{"tool": "echo", "arguments": {"text": "raw"}}`),
			[]call{{Name: "echo", Args: map[string]any{"text": "raw"}, Result: "raw"}}},
		{"decoded bare call map", map[string]any{"tool": "echo", "arguments": map[string]any{"text": "map"}},
			[]call{{Name: "echo", Args: map[string]any{"text": "map"}, Result: "map"}}},
		{"text content of a chat message", map[string]any{"role": "assistant", "content": `{"tool":"echo","arguments":{"text":"in content"}}`},
			[]call{{Name: "echo", Args: map[string]any{"text": "in content"}, Result: "in content"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mcs.NewBaseDriver(&calcDriver{})
			r := d.ProcessLLMResponse(context.Background(), tt.reply)
			if diff := cmp.Diff(tt.want, calls(r)); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
			if tt.want == nil {
				// No call of this driver: only the foreign calls and the format
				// that found them may be reported.
				for _, c := range r.Foreign {
					if c.Name == "echo" || c.Name == "add" {
						t.Errorf("an owned tool reported as foreign: %+v", c)
					}
				}
				r.Foreign, r.Format = nil, ""
				if diff := cmp.Diff(mcs.Response{}, r, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
					t.Errorf("want the zero Response (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestProcessNativeFormats(t *testing.T) {
	chat := map[string]any{
		"role": "assistant", "content": "Checking.",
		"tool_calls": []any{
			map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "add", "arguments": `{"a":1,"b":2}`}},
			map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "web_search", "arguments": `{"q":"x"}`}},
			map[string]any{"id": "call_3", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"p"}`}},
		},
	}
	tests := []struct {
		name  string
		reply any
		want  []call
		msgs  string // JSON of the expected history
	}{
		{"chat completions, parallel calls, foreign skipped", chat,
			[]call{{ID: "call_1", Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}, Result: 3.0}, {ID: "call_3", Name: "echo", Args: map[string]any{"text": "p"}, Result: "p"}},
			`[{"content":"Checking.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1,\"b\":2}","name":"add"},"id":"call_1","type":"function"},{"function":{"arguments":"{\"text\":\"p\"}","name":"echo"},"id":"call_3","type":"function"}]},{"content":"3","role":"tool","tool_call_id":"call_1"},{"content":"p","role":"tool","tool_call_id":"call_3"}]`},
		{"chat completions envelope", map[string]any{"id": "chatcmpl-1", "choices": []any{map[string]any{"index": 0, "message": map[string]any{
			"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c9", "type": "function", "function": map[string]any{"name": "fail", "arguments": `{}`}}}}}}},
			[]call{{ID: "c9", Name: "fail", Args: map[string]any{}, Err: "the backend is down"}},
			`[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"fail"},"id":"c9","type":"function"}]},{"content":"the backend is down","role":"tool","tool_call_id":"c9"}]`},
		{"ollama: arguments as an object", map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
			map[string]any{"function": map[string]any{"name": "add", "arguments": map[string]any{"a": 5.0, "b": 5.0}}}}},
			[]call{{Name: "add", Args: map[string]any{"a": 5.0, "b": 5.0}, Result: 10.0}},
			// Ollama's history keeps the arguments an object, as Ollama sends and reads them.
			`[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":{"a":5,"b":5},"name":"add"},"id":"","type":"function"}]},{"content":"10","role":"tool","tool_call_id":"","tool_name":"add"}]`},
		{"tool_calls key wins over text content", map[string]any{"role": "assistant",
			"content": `{"tool":"echo","arguments":{"text":"from text"}}`, "tool_calls": []any{}}, nil, `null`},
		{"chat completions malformed arguments", map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text": "x"`}}}},
			[]call{{ID: "c1", Name: "echo", Err: `malformed tool call: the arguments of the call to "echo" are not valid JSON: unexpected end of JSON input`}},
			`[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"echo"},"id":"c1","type":"function"}]},{"content":"malformed tool call: the arguments of the call to \"echo\" are not valid JSON: unexpected end of JSON input","role":"tool","tool_call_id":"c1"}]`},
		{"responses api", map[string]any{"id": "resp_1", "output": []any{
			map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "On it."}}},
			map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "echo", "arguments": `{"text":"r"}`},
			map[string]any{"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "other_tool", "arguments": `{}`},
		}},
			[]call{{ID: "call_a", Name: "echo", Args: map[string]any{"text": "r"}, Result: "r"}},
			`[{"content":[{"text":"On it.","type":"output_text"}],"role":"assistant","type":"message"},{"arguments":"{\"text\":\"r\"}","call_id":"call_a","id":"fc_1","name":"echo","type":"function_call"},{"call_id":"call_a","output":"r","type":"function_call_output"}]`},
		{"anthropic messages", map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Let me add."},
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "add", "input": map[string]any{"a": 1.0, "b": 1.0}},
			map[string]any{"type": "tool_use", "id": "toolu_2", "name": "fail", "input": map[string]any{}},
		}},
			[]call{{ID: "toolu_1", Name: "add", Args: map[string]any{"a": 1.0, "b": 1.0}, Result: 2.0}, {ID: "toolu_2", Name: "fail", Args: map[string]any{}, Err: "the backend is down"}},
			`[{"content":[{"text":"Let me add.","type":"text"},{"id":"toolu_1","input":{"a":1,"b":1},"name":"add","type":"tool_use"},{"id":"toolu_2","input":{},"name":"fail","type":"tool_use"}],"role":"assistant"},{"content":[{"content":"2","tool_use_id":"toolu_1","type":"tool_result"},{"content":"the backend is down","is_error":true,"tool_use_id":"toolu_2","type":"tool_result"}],"role":"user"}]`},
		{"gemini", map[string]any{"role": "model", "parts": []any{
			map[string]any{"text": "Sure."},
			map[string]any{"functionCall": map[string]any{"name": "echo", "args": map[string]any{"text": "g"}}},
		}},
			[]call{{Name: "echo", Args: map[string]any{"text": "g"}, Result: "g"}},
			`[{"parts":[{"text":"Sure."},{"functionCall":{"args":{"text":"g"},"name":"echo"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"echo","response":{"result":"g"}}}],"role":"user"}]`},
		{"gemini envelope with id and error", map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"id": "g1", "name": "fail", "args": map[string]any{}}}}}}}},
			[]call{{ID: "g1", Name: "fail", Args: map[string]any{}, Err: "the backend is down"}},
			`[{"parts":[{"functionCall":{"args":{},"id":"g1","name":"fail"}}],"role":"model"},{"parts":[{"functionResponse":{"id":"g1","name":"fail","response":{"error":"the backend is down"}}}],"role":"user"}]`},
		{"native JSON bytes", []byte(`{"role":"assistant","content":null,"tool_calls":[{"id":"b1","type":"function","function":{"name":"echo","arguments":"{\"text\":\"b\"}"}}]}`),
			[]call{{ID: "b1", Name: "echo", Args: map[string]any{"text": "b"}, Result: "b"}},
			`[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"text\":\"b\"}","name":"echo"},"id":"b1","type":"function"}]},{"content":"b","role":"tool","tool_call_id":"b1"}]`},
		{"a provider struct is marshalled", struct {
			Role      string `json:"role"`
			ToolCalls []any  `json:"tool_calls"`
		}{"assistant", []any{map[string]any{"id": "s1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"s"}`}}}},
			[]call{{ID: "s1", Name: "echo", Args: map[string]any{"text": "s"}, Result: "s"}},
			`[{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"text\":\"s\"}","name":"echo"},"id":"s1","type":"function"}]},{"content":"s","role":"tool","tool_call_id":"s1"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mcs.NewBaseDriver(&calcDriver{})
			r := d.ProcessLLMResponse(context.Background(), tt.reply)
			if diff := cmp.Diff(tt.want, calls(r)); diff != "" {
				t.Errorf("calls mismatch (-want +got):\n%s", diff)
			}
			got, err := json.Marshal(r.Messages)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.msgs, string(got)); diff != "" {
				t.Errorf("history mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResponseFlagsAndRetryPrompt(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{})
	ctx := context.Background()

	r := d.ProcessLLMResponse(ctx, `{"tool":"echo","arguments":{"text":"a"}} {"tool":"fail"}`)
	if !r.CallExecuted || !r.CallFailed || r.CallPending {
		t.Errorf("flags = executed %v failed %v pending %v, want true true false", r.CallExecuted, r.CallFailed, r.CallPending)
	}
	want := "The call to the tool 'fail' failed: the backend is down\n" +
		"Check the tool name and the arguments against the tool list and try again, or answer the user without the tool."
	if r.RetryPrompt != want {
		t.Errorf("RetryPrompt = %q, want %q", r.RetryPrompt, want)
	}
	if !errors.Is(r.Calls[1].Err, errFail) {
		t.Errorf("Calls[1].Err = %v, want it to wrap errFail", r.Calls[1].Err)
	}
	wantMsgs := []map[string]any{
		{"role": "assistant", "content": `{"tool":"echo","arguments":{"text":"a"}} {"tool":"fail"}`},
		{"role": "user", "content": framedResult(`echo {"text":"a"}`, "echo", "a")},
		{"role": "user", "content": framedResult("fail", "fail", "Error: the backend is down")},
	}
	if diff := cmp.Diff(wantMsgs, r.Messages); diff != "" {
		t.Errorf("text history (-want +got):\n%s", diff)
	}

	// No doubled "failed:" prefix.
	prefixed := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(mcs.ToolMiddlewareFunc(
		func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			return nil, errors.New("failed: quota exceeded")
		})))
	r = prefixed.ProcessLLMResponse(ctx, `{"tool":"echo"}`)
	if strings.Contains(r.RetryPrompt, "failed: failed:") || !strings.Contains(r.RetryPrompt, "failed: quota exceeded") {
		t.Errorf("RetryPrompt = %q", r.RetryPrompt)
	}
}

func TestPanicsAreRecovered(t *testing.T) {
	panicky := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		if name == "echo" {
			panic(errors.New("middleware bug"))
		}
		return next(ctx, name, args)
	})
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(panicky))
	r := d.ProcessLLMResponse(context.Background(), `{"tool":"boom"} {"tool":"echo"} {"tool":"add","arguments":{"a":1,"b":1}}`)
	if len(r.Calls) != 3 {
		t.Fatalf("got %d calls, want 3", len(r.Calls))
	}
	for i, name := range []string{"boom", "echo"} {
		var pe *mcs.PanicError
		if !errors.As(r.Calls[i].Err, &pe) || pe.Tool != name {
			t.Errorf("Calls[%d].Err = %v, want a *PanicError for %q", i, r.Calls[i].Err, name)
		}
	}
	if r.Calls[2].Err != nil || r.Calls[2].Result != 2.0 {
		t.Errorf("the call after the panics: %+v", r.Calls[2])
	}
	if !r.CallExecuted || !r.CallFailed {
		t.Errorf("flags: %+v", r)
	}
	// ExecuteTool from outside recovers too.
	if _, err := d.ExecuteTool(context.Background(), "boom", nil); err == nil {
		t.Error("ExecuteTool(boom) returned no error")
	}
}

func TestCancelledContextStopsFurtherCalls(t *testing.T) {
	td := &calcDriver{}
	ctx, cancel := context.WithCancel(context.Background())
	cancelling := mcs.ToolMiddlewareFunc(func(c context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		res, err := next(c, name, args)
		cancel() // the user gives up after the first call
		return res, err
	})
	d := mcs.NewBaseDriver(td, mcs.WithMiddleware(cancelling))
	r := d.ProcessLLMResponse(ctx, `{"tool":"echo","arguments":{"text":"1"}} {"tool":"echo","arguments":{"text":"2"}} {"tool":"echo"}`)
	if td.calls.Load() != 1 {
		t.Errorf("tool ran %d times, want 1", td.calls.Load())
	}
	if len(r.Calls) != 3 || r.Calls[0].Err != nil {
		t.Fatalf("calls: %+v", r.Calls)
	}
	for _, c := range r.Calls[1:] {
		if !errors.Is(c.Err, context.Canceled) {
			t.Errorf("call %q: err = %v, want context.Canceled", c.Name, c.Err)
		}
	}
	if !r.CallExecuted || !r.CallFailed {
		t.Errorf("flags: executed %v failed %v", r.CallExecuted, r.CallFailed)
	}
}

func TestArgumentsRecordedBeforeRewrite(t *testing.T) {
	rewrite := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		return next(ctx, name, map[string]any{"text": strings.ToUpper(args["text"].(string))})
	})
	mutate := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		args["sneaky"] = true // a careless middleware; the record must not change
		return next(ctx, name, args)
	})
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(mutate, rewrite))
	r := d.ProcessLLMResponse(context.Background(), `{"tool":"echo","arguments":{"text":"quiet"}}`)
	if diff := cmp.Diff([]call{{Name: "echo", Args: map[string]any{"text": "quiet"}, Result: "QUIET"}}, calls(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
