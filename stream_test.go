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

// streamRun is what one streamed reply gave: what the user saw, every response
// that carried calls (drivers in turn, round by round), the calls of each driver,
// and the number of rounds with CallPending.
type streamRun struct {
	buf       *mcs.StreamBuffer
	shown     strings.Builder
	responses []mcs.Response
	byDriver  [][]call
	pending   int
	foreign   []mcs.ToolCall // every Response's Foreign, in order
	format    string         // the Format of the last Response with calls or foreign calls
}

// feed runs the client loop over chunks on one buffer shared by drivers: after
// each Add every driver is asked and Text is read; with finish, a Finish round
// follows.
func feed(chunks []any, finish bool, drivers ...*mcs.BaseDriver) *streamRun {
	return feedWith(func(buf *mcs.StreamBuffer, c any) { buf.Add(c) }, chunks, finish, drivers...)
}

// feedWith is feed with add in place of Add.
func feedWith(add func(*mcs.StreamBuffer, any), chunks []any, finish bool, drivers ...*mcs.BaseDriver) *streamRun {
	ctx := context.Background()
	buf := drivers[0].NewStreamBuffer()
	out := &streamRun{buf: buf, byDriver: make([][]call, len(drivers))}
	round := func() {
		for i, d := range drivers {
			r := d.ProcessStream(ctx, buf)
			if r.CallPending {
				out.pending++
			}
			if r.Foreign != nil && r.CallPending {
				panic("foreign calls reported while a call is still forming")
			}
			out.foreign = append(out.foreign, r.Foreign...)
			if r.Calls != nil || r.Foreign != nil {
				out.format = r.Format
			}
			if r.Calls != nil {
				out.responses = append(out.responses, r)
				out.byDriver[i] = append(out.byDriver[i], calls(r)...)
			}
		}
		out.shown.WriteString(buf.Text())
	}
	for _, c := range chunks {
		add(buf, c)
		round()
	}
	if finish {
		buf.Finish()
		round()
	}
	return out
}

// runStream is feed, and then checks that no driver still holds a call.
func runStream(t *testing.T, chunks []any, finish bool, drivers ...*mcs.BaseDriver) *streamRun {
	t.Helper()
	out := feed(chunks, finish, drivers...)
	for _, d := range drivers {
		if r := d.ProcessStream(context.Background(), out.buf); r.CallPending {
			t.Errorf("a call is still pending after the end of the stream")
		}
	}
	return out
}

func (s *streamRun) calls() []call {
	var out []call
	for _, r := range s.responses {
		out = append(out, calls(r)...)
	}
	return out
}

// textChunksString cuts s into chunks of size bytes.
func textChunksString(s string, size int) []string {
	var out []string
	for i := 0; i < len(s); i += size {
		out = append(out, s[i:min(i+size, len(s))])
	}
	return out
}

// textChunks is textChunksString as values for StreamBuffer.Add.
func textChunks(s string, size int) []any { return anys(textChunksString(s, size)) }

func anys(chunks []string) []any {
	out := make([]any, len(chunks))
	for i, c := range chunks {
		out[i] = c
	}
	return out
}

// TestStreamTextEveryBoundary splits replies at every byte offset (and into
// one-byte chunks): the owned call runs exactly once, its JSON is never shown, and
// the prose around it is shown in full.
func TestStreamTextEveryBoundary(t *testing.T) {
	replies := []struct {
		name, before, call, after string
	}{
		{"bare", "Let me check. ", `{"tool": "echo", "arguments": {"text": "hi"}}`, " Done."},
		{"fenced", "Sure:\n", "```json\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"hi\"}}\n```", "\nThat is all."},
		{"call first", "", `{"tool":"echo","arguments":{"text":"hi"}}`, "\nafter"},
		{"braces in strings", "x ", `{"tool":"echo","arguments":{"text":"hi"},"note":"} { \" '"}`, " y"},
	}
	for _, rp := range replies {
		full := rp.before + rp.call + rp.after
		var splits [][]any
		for cut := 1; cut < len(full); cut++ {
			splits = append(splits, []any{full[:cut], full[cut:]})
		}
		splits = append(splits, textChunks(full, 1), textChunks(full, 3), textChunks(full, 16))
		for _, chunks := range splits {
			d := mcs.NewBaseDriver(&calcDriver{})
			run := runStream(t, chunks, true, d)
			if diff := cmp.Diff([]call{{Name: "echo", Args: map[string]any{"text": "hi"}, Result: "hi"}}, run.calls()); diff != "" {
				t.Fatalf("%s, chunks %q: calls (-want +got):\n%s", rp.name, chunks, diff)
			}
			if got, want := run.shown.String(), rp.before+rp.after; got != want {
				t.Fatalf("%s, chunks %q: shown %q, want %q", rp.name, chunks, got, want)
			}
		}
	}
}

func TestStreamForeignCallFlows(t *testing.T) {
	reply := `Searching. {"tool": "web_search", "arguments": {"q": "go"}} ok`
	d := mcs.NewBaseDriver(&calcDriver{})
	run := runStream(t, textChunks(reply, 4), true, d)
	if len(run.responses) != 0 {
		t.Errorf("a foreign call produced responses: %+v", run.responses)
	}
	whole := d.ProcessLLMResponse(context.Background(), reply)
	if diff := cmp.Diff(foreignOf(whole.Foreign), foreignOf(run.foreign)); diff != "" || len(run.foreign) != 1 || run.format != "text" || whole.Format != "text" {
		t.Errorf("foreign whole %+v, streamed %+v (format %q, %q): want the one web_search call, format text", whole.Foreign, run.foreign, whole.Format, run.format)
	}
	if run.shown.String() != reply {
		t.Errorf("shown %q, want the whole reply", run.shown.String())
	}
}

// otherDriver owns different tools than calcDriver.
type otherDriver struct{}

func (*otherDriver) Meta() mcs.Meta { return mcs.Meta{ID: "test/other"} }
func (*otherDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "web_search", Description: "Search.", Parameters: []mcs.Parameter{{Name: "q"}}}}, nil
}
func (*otherDriver) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	return "results for " + args["q"].(string), nil
}

func TestStreamFanOut(t *testing.T) {
	reply := "A: {\"tool\": \"web_search\", \"arguments\": {\"q\": \"go\"}} B: {\"tool\": \"echo\", \"arguments\": {\"text\": \"hi\"}} end"
	for _, size := range []int{1, 5, 64} {
		calc := mcs.NewBaseDriver(&calcDriver{})
		other := mcs.NewBaseDriver(&otherDriver{})
		run := runStream(t, textChunks(reply, size), true, calc, other)
		want := []call{{Name: "web_search", Args: map[string]any{"q": "go"}, Result: "results for go"}, {Name: "echo", Args: map[string]any{"text": "hi"}, Result: "hi"}}
		if diff := cmp.Diff(want, run.calls()); diff != "" {
			t.Errorf("size %d: (-want +got):\n%s", size, diff)
		}
		if got := run.shown.String(); got != "A:  B:  end" {
			t.Errorf("size %d: shown %q", size, got)
		}
	}
}

func TestStreamMalformedOwnedCallIsReleased(t *testing.T) {
	tests := []struct{ name, reply string }{
		{"closed but broken", `Try {"tool": "echo", "arguments": {"text": "a" "b"}} more text`},
		{"never closed", `Try {"tool": "echo", "arguments": {"text": "a"`},
		{"names two tools", `Try {"tool": "echo", "tool": "web_search", "arguments": {}} more text`},
		{"arguments not an object", `Try {"tool": "echo", "arguments": ["a"]} more text`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mcs.NewBaseDriver(&calcDriver{})
			run := runStream(t, textChunks(tt.reply, 3), true, d)
			if len(run.responses) != 1 {
				t.Fatalf("responses: %+v", run.responses)
			}
			r := run.responses[0]
			if !r.CallFailed || r.CallExecuted || r.RetryPrompt == "" || r.Calls[0].Name != "echo" {
				t.Errorf("want a failed echo call with a retry prompt, got %+v", r)
			}
			if strings.Contains(run.shown.String(), `"tool"`) {
				t.Errorf("raw call shown: %q", run.shown.String())
			}
		})
	}
}

func TestStreamHoldThenText(t *testing.T) {
	ctx := context.Background()
	d := mcs.NewBaseDriver(&calcDriver{})
	buf := d.NewStreamBuffer()
	buf.Add("Hello ")
	if r := d.ProcessStream(ctx, buf); r.CallPending || r.Calls != nil {
		t.Fatalf("plain text: %+v", r)
	}
	if got := buf.Text(); got != "Hello " {
		t.Fatalf("Text() = %q", got)
	}
	buf.Add(`{"to`)
	if r := d.ProcessStream(ctx, buf); !r.CallPending {
		t.Fatal("a forming call with an unknown name is not held")
	}
	if got := buf.Text(); got != "" {
		t.Fatalf("Text() while held = %q", got)
	}
	buf.Add(`ol": "echo", "arguments": {"text": "x"}}`)
	r := d.ProcessStream(ctx, buf)
	if !r.CallExecuted || r.CallPending {
		t.Fatalf("complete call: %+v", r)
	}
	want := []map[string]any{{"role": "assistant", "content": `Hello {"tool": "echo", "arguments": {"text": "x"}}`}, {"role": "user", "content": framedResult(`echo {"text":"x"}`, "echo", "x")}}
	if diff := cmp.Diff(want, r.Messages); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if got := buf.Text(); got != "" {
		t.Errorf("Text() after execution = %q", got)
	}
	if got := buf.Content(); !strings.Contains(got, `"echo"`) {
		t.Errorf("Content() = %q, want all text", got)
	}
	buf.Add(" bye")
	d.ProcessStream(ctx, buf)
	if got := buf.Text(); got != " bye" {
		t.Errorf("Text() = %q", got)
	}
	if buf.Finished() {
		t.Error("Finished before Finish")
	}
	buf.Finish()
	if !buf.Finished() {
		t.Error("not Finished after Finish")
	}
}

func jsonChunks(t *testing.T, lines ...string) []any {
	t.Helper()
	var out []any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("bad fixture %s: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestStreamNativeFormats(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []call
		shown  string
		msgs   string
	}{
		{"chat: text only", []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"lo"}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		}, nil, "Hello", ""},
		{"chat: text then parallel calls", []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Working."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"echo","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"add","arguments":"{\"a\":1,"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"hi\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"b\":2}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []call{{ID: "call_1", Name: "echo", Args: map[string]any{"text": "hi"}, Result: "hi"}, {ID: "call_2", Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}, Result: 3.0}},
			"Working.",
			`[{"content":"Working.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"text\":\"hi\"}","name":"echo"},"id":"call_1","type":"function"},{"function":{"arguments":"{\"a\":1,\"b\":2}","name":"add"},"id":"call_2","type":"function"}]},{"content":"hi","role":"tool","tool_call_id":"call_1"},{"content":"3","role":"tool","tool_call_id":"call_2"}]`},
		{"chat: malformed arguments", []string{
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":"{\"text\": \"x"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}, []call{{ID: "c1", Name: "echo", Err: `malformed tool call: the arguments of the call to "echo" are not valid JSON: unexpected end of JSON input`}}, "", ""},
		{"chat: chunk without choices is the delta", []string{
			`{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"o1","function":{"name":"echo","arguments":{"text":"ollama"}}}]}`,
			`{"finish_reason":"stop"}`,
		}, []call{{ID: "o1", Name: "echo", Args: map[string]any{"text": "ollama"}, Result: "ollama"}}, "", ""},
		{"responses: text then call", []string{
			`{"type":"response.created","response":{"id":"r1"}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":"One "}`,
			`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":"moment."}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"echo","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"text\":"}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"\"r\"}"}`,
			`{"type":"response.completed","response":{"id":"r1"}}`,
		}, []call{{ID: "call_9", Name: "echo", Args: map[string]any{"text": "r"}, Result: "r"}}, "One moment.",
			`[{"content":[{"text":"One moment.","type":"output_text"}],"id":"msg_1","role":"assistant","type":"message"},{"arguments":"{\"text\":\"r\"}","call_id":"call_9","id":"fc_1","name":"echo","type":"function_call"},{"call_id":"call_9","output":"r","type":"function_call_output"}]`},
		{"anthropic: text then call", []string{
			`{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me "}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"add."}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"add","input":{}}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 2"}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":", \"b\": 3}"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`,
			`{"type":"message_stop"}`,
		}, []call{{ID: "toolu_1", Name: "add", Args: map[string]any{"a": 2.0, "b": 3.0}, Result: 5.0}}, "Let me add.",
			`[{"content":[{"text":"Let me add.","type":"text"},{"id":"toolu_1","input":{"a":2,"b":3},"name":"add","type":"tool_use"}],"role":"assistant"},{"content":[{"content":"5","tool_use_id":"toolu_1","type":"tool_result"}],"role":"user"}]`},
		{"anthropic: call then text", []string{
			`{"type":"message_start","message":{"id":"msg_2","role":"assistant","content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"echo","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"text\": \"first\"}"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"and then words"}}`,
			`{"type":"message_stop"}`,
		}, []call{{ID: "toolu_9", Name: "echo", Args: map[string]any{"text": "first"}, Result: "first"}}, "and then words", ""},
		{"anthropic: foreign call flows", []string{
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_f","name":"web_search","input":{}}}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"visible"}}`,
			`{"type":"message_stop"}`,
		}, nil, "visible", ""},
		{"gemini: text and call", []string{
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"Sure, "}]}}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"echoing."},{"functionCall":{"name":"echo","args":{"text":"g"}}}]},"finishReason":"STOP"}]}`,
		}, []call{{Name: "echo", Args: map[string]any{"text": "g"}, Result: "g"}}, "Sure, echoing.",
			`[{"parts":[{"text":"Sure, echoing."},{"functionCall":{"args":{"text":"g"},"name":"echo"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"echo","response":{"result":"g"}}}],"role":"user"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mcs.NewBaseDriver(&calcDriver{})
			run := runStream(t, jsonChunks(t, tt.chunks...), false, d)
			if diff := cmp.Diff(tt.want, run.calls()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if got := run.shown.String(); got != tt.shown {
				t.Errorf("shown %q, want %q", got, tt.shown)
			}
			if tt.msgs != "" {
				got, _ := json.Marshal(run.responses[0].Messages)
				if diff := cmp.Diff(tt.msgs, string(got)); diff != "" {
					t.Errorf("history (-want +got):\n%s", diff)
				}
			}
			if len(tt.want) > 0 && run.pending == 0 && !strings.HasPrefix(tt.name, "gemini") {
				t.Error("the native call was never held while forming")
			}
		})
	}
}

func TestStreamChunksAsBytesAndStrings(t *testing.T) {
	lines := []string{
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":"{\"text\":\"sse\"}"}}]}}]}`,
		`data: [DONE]`,
	}
	d := mcs.NewBaseDriver(&calcDriver{})
	run := runStream(t, []any{[]byte(lines[0]), lines[1]}, false, d)
	if diff := cmp.Diff([]call{{ID: "c1", Name: "echo", Args: map[string]any{"text": "sse"}, Result: "sse"}}, run.calls()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// AddString is Add of a string: the same text shown, calls run, content,
// format and message, for model text, data-less chunks before the format is
// known, server-sent events and JSON chunks held as strings.
func TestStreamAddStringIsAdd(t *testing.T) {
	cases := map[string][]string{
		"text with a call": {"Hello ", `{"tool": "echo", `, `"arguments": {"text": "hi"}}`, " bye"},
		"data-less first":  {"  ", "\n", "ok ", `{"tool": "echo", "arguments": {"text": "x"}}`},
		"server-sent events": {
			": keep-alive",
			`data: {"choices":[{"index":0,"delta":{"content":"hi "}}]}`,
			`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":"{\"text\":\"sse\"}"}}]}}]}`,
			`data: [DONE]`,
		},
		"JSON chunks": {
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"echo","input":{}}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"text\": \"j\"}"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_stop"}`,
		},
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			chunks := make([]any, len(lines))
			for i, l := range lines {
				chunks[i] = l
			}
			want := feed(chunks, true, mcs.NewBaseDriver(&calcDriver{}))
			got := feedWith(func(buf *mcs.StreamBuffer, c any) { buf.AddString(c.(string)) }, chunks, true, mcs.NewBaseDriver(&calcDriver{}))
			if len(want.calls()) == 0 {
				t.Fatal("the case runs no call")
			}
			if diff := cmp.Diff(want.calls(), got.calls()); diff != "" {
				t.Errorf("calls (-Add +AddString):\n%s", diff)
			}
			if w, g := want.shown.String(), got.shown.String(); w != g {
				t.Errorf("shown %q with AddString, %q with Add", g, w)
			}
			if w, g := want.buf.Content(), got.buf.Content(); w != g {
				t.Errorf("content %q with AddString, %q with Add", g, w)
			}
			if w, g := want.buf.Format(), got.buf.Format(); w != g {
				t.Errorf("format %q with AddString, %q with Add", g, w)
			}
			if diff := cmp.Diff(want.buf.Message(), got.buf.Message()); diff != "" {
				t.Errorf("message (-Add +AddString):\n%s", diff)
			}
		})
	}
}

func TestStreamNativeCallWithoutEndIsReleasedByFinish(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{})
	chunks := jsonChunks(t, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"echo","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"text\": \"cut"}}`)
	run := runStream(t, chunks, true, d)
	if len(run.responses) != 1 || !run.responses[0].CallFailed || run.responses[0].RetryPrompt == "" {
		t.Fatalf("want one failed call with a retry prompt, got %+v", run.responses)
	}
}

// BenchmarkStream feeds N bytes of prose with one call at the end, in 16-byte chunks,
// calling ProcessStream and Text after every chunk. Time per byte stays flat.
func BenchmarkStream(b *testing.B) {
	call := ` {"tool": "echo", "arguments": {"text": "done"}}`
	for _, n := range []int{64 << 10, 256 << 10} {
		prose := strings.Repeat("The quick brown fox jumps over the lazy dog; it's {not} a call. ", n/64+1)[:n-len(call)]
		reply := prose + call
		chunks := make([]string, 0, len(reply)/16+1)
		for i := 0; i < len(reply); i += 16 {
			chunks = append(chunks, reply[i:min(i+16, len(reply))])
		}
		b.Run(fmt.Sprintf("N=%dKiB", n>>10), func(b *testing.B) {
			d := mcs.NewBaseDriver(&calcDriver{})
			ctx := context.Background()
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				buf := d.NewStreamBuffer()
				executed := false
				for _, c := range chunks {
					buf.Add(c)
					if d.ProcessStream(ctx, buf).CallExecuted {
						executed = true
					}
					buf.Text()
				}
				if !executed {
					b.Fatal("the call did not run")
				}
			}
		})
	}
}
