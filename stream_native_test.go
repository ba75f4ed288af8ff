package mcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// event is one step of a model's turn, rendered into each provider's chunk shapes.
type event struct {
	text           string   // a text delta, when name is ""
	id, name, args string   // a call; args is its complete JSON text
	pieces         []string // args split as the provider streams them; nil: one piece
}

func textEv(s string) event { return event{text: s} }

func callEv(id, name, args string) event {
	mid := len(args) / 2
	return event{id: id, name: name, args: args, pieces: []string{args[:mid], args[mid:]}}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// chatChunks renders events as OpenAI Chat Completions chunks.
func chatChunks(evs []event) []string {
	out := []string{`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`}
	idx := 0
	for _, e := range evs {
		if e.name == "" {
			out = append(out, mustJSON(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": e.text}}}}))
			continue
		}
		out = append(out, mustJSON(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
			map[string]any{"index": idx, "id": e.id, "type": "function", "function": map[string]any{"name": e.name, "arguments": ""}}}}}}}))
		for _, p := range e.pieces {
			out = append(out, mustJSON(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{
				map[string]any{"index": idx, "function": map[string]any{"arguments": p}}}}}}}))
		}
		idx++
	}
	return append(out, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
}

// responsesChunks renders events as OpenAI Responses API events.
func responsesChunks(evs []event) []string {
	out := []string{`{"type":"response.created","response":{"id":"resp_1"}}`}
	for i, e := range evs {
		if e.name == "" {
			id := fmt.Sprintf("msg_%d", i)
			out = append(out,
				mustJSON(map[string]any{"type": "response.output_item.added", "output_index": i, "item": map[string]any{"type": "message", "id": id, "role": "assistant", "content": []any{}}}),
				mustJSON(map[string]any{"type": "response.output_text.delta", "item_id": id, "output_index": i, "delta": e.text}))
			continue
		}
		fc := fmt.Sprintf("fc_%d", i)
		out = append(out, mustJSON(map[string]any{"type": "response.output_item.added", "output_index": i, "item": map[string]any{"type": "function_call", "id": fc, "call_id": e.id, "name": e.name, "arguments": ""}}))
		for _, p := range e.pieces {
			out = append(out, mustJSON(map[string]any{"type": "response.function_call_arguments.delta", "item_id": fc, "output_index": i, "delta": p}))
		}
		out = append(out, mustJSON(map[string]any{"type": "response.function_call_arguments.done", "item_id": fc, "output_index": i, "arguments": e.args}))
	}
	return append(out, `{"type":"response.completed","response":{"id":"resp_1","status":"completed"}}`)
}

// anthropicChunks renders events as Anthropic Messages stream events.
func anthropicChunks(evs []event) []string {
	out := []string{`{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}`}
	for i, e := range evs {
		if e.name == "" {
			out = append(out,
				mustJSON(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}}),
				mustJSON(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": e.text}}))
		} else {
			out = append(out, mustJSON(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": e.id, "name": e.name, "input": map[string]any{}}}))
			for _, p := range e.pieces {
				out = append(out, mustJSON(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
			}
		}
		out = append(out, mustJSON(map[string]any{"type": "content_block_stop", "index": i}))
	}
	return append(out, `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, `{"type":"message_stop"}`)
}

// geminiChunks renders events as Gemini stream chunks: calls arrive whole, with
// their arguments as an object (as JSON text when they do not parse).
func geminiChunks(evs []event) []string {
	var out []string
	for _, e := range evs {
		var part map[string]any
		if e.name == "" {
			part = map[string]any{"text": e.text}
		} else {
			var args any
			if json.Unmarshal([]byte(e.args), &args) != nil {
				args = e.args
			}
			part = map[string]any{"functionCall": map[string]any{"id": e.id, "name": e.name, "args": args}}
		}
		out = append(out, mustJSON(map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}}}}))
	}
	return append(out, `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP"}]}`)
}

// TestStreamNativeMatrix runs the recorded shapes of every native provider: text
// only, one call, parallel calls, text then call, call then text, owned and foreign
// calls, malformed arguments.
func TestStreamNativeMatrix(t *testing.T) {
	providers := []struct {
		name   string
		chunks func([]event) []string
	}{
		{"chat", chatChunks}, {"responses", responsesChunks}, {"anthropic", anthropicChunks}, {"gemini", geminiChunks},
	}
	echo := callEv("c1", "echo", `{"text":"hi"}`)
	add := callEv("c2", "add", `{"a":1,"b":2}`)
	echoCall := call{ID: "c1", Name: "echo", Args: map[string]any{"text": "hi"}, Result: "hi"}
	addCall := call{ID: "c2", Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}, Result: 3.0}
	shapes := []struct {
		name      string
		events    []event
		want      []call
		shown     string
		malformed bool // the one call fails with ErrMalformedCall
	}{
		{"text only", []event{textEv("Hello"), textEv(" world")}, nil, "Hello world", false},
		{"one call", []event{echo}, []call{echoCall}, "", false},
		{"parallel calls", []event{echo, add}, []call{echoCall, addCall}, "", false},
		{"text then call", []event{textEv("Let me check."), echo}, []call{echoCall}, "Let me check.", false},
		{"call then text", []event{echo, textEv("Done.")}, []call{echoCall}, "Done.", false},
		{"owned and foreign", []event{callEv("c0", "web_search", `{"q":"x"}`), add}, []call{addCall}, "", false},
		{"malformed arguments", []event{callEv("c1", "echo", `{"text": "cut`)}, []call{{ID: "c1", Name: "echo"}}, "", true},
	}
	for _, p := range providers {
		for _, sh := range shapes {
			t.Run(p.name+"/"+sh.name, func(t *testing.T) {
				var chunks []any
				for _, c := range p.chunks(sh.events) {
					chunks = append(chunks, c) // JSON strings, as read from the wire
				}
				run := runStream(t, chunks, false, mcs.NewBaseDriver(&calcDriver{}))
				got := run.calls()
				if sh.malformed {
					if len(got) != 1 || !errors.Is(run.responses[0].Calls[0].Err, mcs.ErrMalformedCall) || run.responses[0].RetryPrompt == "" {
						t.Fatalf("want one malformed call with a retry prompt, got %+v", run.responses)
					}
					got[0].Err, got[0].Args = "", nil
				}
				if diff := cmp.Diff(sh.want, got); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
				if s := run.shown.String(); s != sh.shown {
					t.Errorf("shown %q, want %q", s, sh.shown)
				}
				// The reassembled message, processed whole, gives the same calls and history.
				whole := mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), run.buf.Message())
				var streamed mcs.Response
				if len(run.responses) > 0 {
					streamed = run.responses[0]
				}
				if diff := cmp.Diff(calls(whole), calls(streamed)); diff != "" {
					t.Errorf("Message() processed whole ran other calls (-whole +stream):\n%s", diff)
				}
				if diff := cmp.Diff(whole.Messages, streamed.Messages); diff != "" {
					t.Errorf("history differs from the non-streaming one (-whole +stream):\n%s", diff)
				}
				// The foreign calls, their Index among all calls and the format are
				// reported alike, once the stream is finished.
				if diff := cmp.Diff(foreignOf(whole.Foreign), foreignOf(run.foreign)); diff != "" {
					t.Errorf("Foreign differs (-whole +stream):\n%s", diff)
				}
				if sh.name == "owned and foreign" && (len(run.foreign) != 1 || run.foreign[0].Index != 0 || whole.Calls[0].Index != 1) {
					t.Errorf("foreign %+v, owned %+v: want web_search at index 0 and add at 1", run.foreign, whole.Calls)
				}
				if whole.Format != run.format && (len(whole.Calls) > 0 || len(whole.Foreign) > 0) {
					t.Errorf("Format: whole %q, streamed %q", whole.Format, run.format)
				}
				if len(sh.want) > 0 {
					if run.pending == 0 {
						t.Error("the owned call was never held while forming")
					}
					if len(run.responses) != 1 {
						t.Errorf("native calls ran in %d batches, want 1", len(run.responses))
					}
				}
			})
		}
	}
}

func TestStreamOllamaChat(t *testing.T) {
	chunks := jsonChunks(t,
		`{"model":"llama3.2","message":{"role":"assistant","content":"Checking"},"done":false}`,
		`{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"echo","arguments":{"text":"a"}}}]},"done":false}`,
		`{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"add","arguments":{"a":2,"b":2}}}]},"done":false}`,
		`{"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`,
	)
	run := runStream(t, chunks, false, mcs.NewBaseDriver(&calcDriver{}))
	want := []call{{Name: "echo", Args: map[string]any{"text": "a"}, Result: "a"}, {Name: "add", Args: map[string]any{"a": 2.0, "b": 2.0}, Result: 4.0}}
	if diff := cmp.Diff(want, run.calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if run.shown.String() != "Checking" {
		t.Errorf("shown %q", run.shown.String())
	}
}

func TestStreamServerSentEvents(t *testing.T) {
	chunks := []any{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[]}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
		"event: ping\ndata: {\"type\": \"ping\"}\n\n",
		[]byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"),
	}
	d := mcs.NewBaseDriver(&calcDriver{})
	run := runStream(t, chunks, false, d)
	if run.shown.String() != "Hi" {
		t.Errorf("shown %q, want Hi", run.shown.String())
	}
	if run.buf.Format() != "anthropic-messages" || !run.buf.Finished() {
		t.Errorf("format %q, finished %v", run.buf.Format(), run.buf.Finished())
	}
}

// TestStreamDatalessFirstChunks: chunks that carry no data (nothing, white space,
// server-sent event lines without data, as a client reading the stream line by line
// passes them) do not decide the wire format, and in a text stream they are not lost.
func TestStreamDatalessFirstChunks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []any
		format string
		shown  string
		want   []call
	}{
		{"anthropic read line by line", []any{
			": keep-alive", "event: message_start", `data: {"type":"message_start","message":{"role":"assistant","content":[]}}`, "",
			"event: content_block_start", `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, "",
			"event: content_block_delta", `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`, "",
			"event: content_block_start", `data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"echo","input":{}}}`, "",
			"event: content_block_delta", `data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"text\":\"sse\"}"}}`, "",
			"event: message_stop", `data: {"type":"message_stop"}`, "",
		}, "anthropic-messages", "Hi", []call{{ID: "t1", Name: "echo", Args: map[string]any{"text": "sse"}, Result: "sse"}}},
		{"openai after an empty chunk", []any{nil, "", []byte("\n"),
			map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{"content": "ok"}, "finish_reason": "stop"}}},
		}, "openai-chat", "ok", nil},
		{"text that starts blank", []any{"", "\n", "Hello ", `{"tool":"echo","arguments":{"text":"b"}}`, " bye"},
			"text", "\nHello  bye", []call{{Name: "echo", Args: map[string]any{"text": "b"}, Result: "b"}}},
		{"text that starts like an event field", []any{": ", "id: 7", " is yours"}, "text", ": id: 7 is yours", nil},
		{"text made only of a data-less chunk", []any{":)"}, "text", ":)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runStream(t, tt.chunks, true, mcs.NewBaseDriver(&calcDriver{}))
			if got := run.buf.Format(); got != tt.format {
				t.Errorf("format %q, want %q", got, tt.format)
			}
			if got := run.shown.String(); got != tt.shown {
				t.Errorf("shown %q, want %q", got, tt.shown)
			}
			if diff := cmp.Diff(tt.want, run.calls()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNilStrategiesAreIgnored: nil entries among the strategies of a driver or a
// buffer are skipped rather than crashing the stream.
func TestNilStrategiesAreIgnored(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithFormats(nil, mcs.ChatCompletionsFormat(), nil, mcs.TextFormat(nil)))
	if n := len(d.Options().Formats); n != 2 {
		t.Errorf("driver has %d strategies, want 2", n)
	}
	shown, got := streamTextReply(d, []string{`a {"tool":"echo","arguments":{"text":"n"}}`, " b"})
	if diff := cmp.Diff([]call{{Name: "echo", Args: map[string]any{"text": "n"}, Result: "n"}}, got); diff != "" || shown != "a  b" {
		t.Errorf("shown %q, calls (-want +got):\n%s", shown, diff)
	}
	buf := mcs.NewStreamBuffer(nil)
	buf.Add(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{"content": "x"}}}})
	if buf.Format() != "openai-chat" || buf.Text() != "x" {
		t.Errorf("NewStreamBuffer(nil): format %q", buf.Format())
	}
}

// TestStreamBrokenNativeStream: a stream that ends without the provider's end
// signal runs none of its native calls; each owned one fails with a retry prompt,
// including a call whose arguments never arrived.
func TestStreamBrokenNativeStream(t *testing.T) {
	td := &calcDriver{}
	chunks := jsonChunks(t,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"echo","arguments":"{\"text\":\"complete\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"add","arguments":""}}]}}]}`,
	)
	run := runStream(t, chunks, true, mcs.NewBaseDriver(td))
	if td.calls.Load() != 0 {
		t.Errorf("a call of a broken stream ran")
	}
	if len(run.responses) != 1 || len(run.responses[0].Calls) != 2 || !run.responses[0].CallFailed || run.responses[0].CallExecuted || run.responses[0].RetryPrompt == "" {
		t.Fatalf("want two failed calls with a retry prompt, got %+v", run.responses)
	}
	for _, c := range run.responses[0].Calls {
		if !errors.Is(c.Err, mcs.ErrMalformedCall) || !strings.Contains(c.Err.Error(), "stream ended") {
			t.Errorf("call %s: err %v", c.Name, c.Err)
		}
	}
}

// TestStreamFanOutSameTool: two drivers own the same tool. A call one driver took
// is still there for a driver asked after it in the same round, and gone for a
// driver that first looks in a later round.
func TestStreamFanOutSameTool(t *testing.T) {
	ctx := context.Background()
	a := mcs.NewBaseDriver(&calcDriver{})
	b := mcs.NewBaseDriver(&calcDriver{})
	late := mcs.NewBaseDriver(&calcDriver{})
	buf := a.NewStreamBuffer()
	buf.Add(`x {"tool":"echo","arguments":{"text":"1"}} y`)
	if r := a.ProcessStream(ctx, buf); !r.CallExecuted {
		t.Fatalf("first driver: %+v", r)
	}
	if r := b.ProcessStream(ctx, buf); !r.CallExecuted {
		t.Fatalf("second driver, same round: %+v", r)
	}
	if got := buf.Text(); got != "x  y" {
		t.Errorf("Text() = %q", got)
	}
	buf.Add(` {"tool":"echo","arguments":{"text":"2"}}`)
	r := late.ProcessStream(ctx, buf)
	if diff := cmp.Diff([]call{{Name: "echo", Args: map[string]any{"text": "2"}, Result: "2"}}, calls(r)); diff != "" {
		t.Errorf("late driver (-want +got):\n%s", diff)
	}
}

// TestStreamHistoryDoesNotRepeat: the Messages of successive Responses of one
// stream, appended in order, hold the reply's text once.
func TestStreamHistoryDoesNotRepeat(t *testing.T) {
	reply := `First {"tool":"echo","arguments":{"text":"1"}} then {"tool":"web_search","arguments":{"q":""}} and {"tool":"add","arguments":{"a":1,"b":1}} end`
	calc := mcs.NewBaseDriver(&calcDriver{})
	other := mcs.NewBaseDriver(&otherDriver{})
	run := runStream(t, textChunks(reply, 5), true, calc, other)
	var assistant strings.Builder
	var results []any
	for _, r := range run.responses {
		for _, m := range r.Messages {
			if m["role"] == "assistant" {
				assistant.WriteString(m["content"].(string))
			} else {
				results = append(results, m["content"])
			}
		}
	}
	if want := strings.TrimSuffix(reply, " end"); assistant.String() != want {
		t.Errorf("assistant text across responses:\n got %q\nwant %q", assistant.String(), want)
	}
	want := []any{
		framedResult(`echo {"text":"1"}`, "echo", "1"),
		framedResult(`web_search {"q":""}`, "web_search", "results for "),
		framedResult(`add {"a":1,"b":1}`, "add", "2"),
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// TestStreamFlowsBeforeTheEnd: text of a call known to be foreign, and prose that
// only looks like the start of an object, is shown while the stream goes on, not
// held until its end.
func TestStreamFlowsBeforeTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
	}{
		{"foreign call", []string{`Searching {"tool": "web_se`, `arch", "arguments": {"q": `, `"go"}} ok`}},
		{"prose brace with a bare key and an apostrophe", []string{`The format is {name: the us`, `er's name} and more`, ` text`}},
		{"inline code", []string{"Run `go test` and ", "``fmt`` now"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			d := mcs.NewBaseDriver(&calcDriver{})
			buf := d.NewStreamBuffer()
			var shown strings.Builder
			for _, c := range tt.chunks {
				buf.Add(c)
				if r := d.ProcessStream(ctx, buf); r.Calls != nil || r.CallPending && c == tt.chunks[len(tt.chunks)-1] {
					t.Fatalf("chunk %q: %+v", c, r)
				}
				shown.WriteString(buf.Text())
			}
			if want := strings.Join(tt.chunks, ""); shown.String() != want {
				t.Errorf("shown before the end %q, want %q", shown.String(), want)
			}
		})
	}
}

// TestStreamTextFormatOfTheDriver: streaming decodes text calls with the text
// format among the driver's strategies, and runs none without one.
func TestStreamTextFormatOfTheDriver(t *testing.T) {
	ps, err := mcs.ParsePromptStrategy("fn.toml", []byte("[parsing]\ntool_field_aliases = [\"function\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	reply := `a {"function":"echo","arguments":{"text":"f"}} b`
	custom := mcs.NewBaseDriver(&calcDriver{}, mcs.WithFormats(mcs.ChatCompletionsFormat(), mcs.TextFormat(ps)))
	shown, got := streamTextReply(custom, []string{reply[:9], reply[9:]})
	if diff := cmp.Diff([]call{{Name: "echo", Args: map[string]any{"text": "f"}, Result: "f"}}, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if shown != "a  b" {
		t.Errorf("shown %q", shown)
	}
	nativeOnly := mcs.NewBaseDriver(&calcDriver{}, mcs.WithFormats(mcs.ChatCompletionsFormat()))
	if _, got := streamTextReply(nativeOnly, []string{`{"tool":"echo"}`}); got != nil {
		t.Errorf("a driver without a text format ran %+v", got)
	}
	if r := nativeOnly.ProcessLLMResponse(context.Background(), `{"tool":"echo"}`); r.Calls != nil {
		t.Errorf("ProcessLLMResponse without a text format ran %+v", r.Calls)
	}
}

// TestStreamConcurrentDrivers asks two drivers at once in every round, while a
// reader polls the buffer; run it with -race.
func TestStreamConcurrentDrivers(t *testing.T) {
	ctx := context.Background()
	reply := `a {"tool":"echo","arguments":{"text":"1"}} b {"tool":"web_search","arguments":{"q":"2"}} c`
	calc, other := mcs.NewBaseDriver(&calcDriver{}), mcs.NewBaseDriver(&otherDriver{})
	buf := calc.NewStreamBuffer()
	var mu sync.Mutex
	var ran []string
	var shown strings.Builder
	round := func() {
		var wg sync.WaitGroup
		for _, d := range []*mcs.BaseDriver{calc, other} {
			wg.Go(func() {
				r := d.ProcessStream(ctx, buf)
				mu.Lock()
				for _, c := range r.Calls {
					ran = append(ran, c.Name)
				}
				mu.Unlock()
			})
		}
		wg.Go(func() { _, _, _ = buf.Content(), buf.Message(), buf.Finished() })
		wg.Wait()
		shown.WriteString(buf.Text())
	}
	for _, c := range textChunksString(reply, 3) {
		buf.Add(c)
		round()
	}
	buf.Finish()
	round()
	if diff := cmp.Diff([]string{"echo", "web_search"}, ran); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if shown.String() != "a  b  c" {
		t.Errorf("shown %q", shown.String())
	}
}

// TestReasoningIsKept: the history hands back what reasoning models need with their
// calls (Anthropic thinking blocks with signatures, Responses reasoning items,
// Gemini thought signatures), streamed or whole, and thoughts are never shown.
func TestReasoningIsKept(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		first  string // JSON of the first history message
	}{
		{"anthropic", []string{
			`{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[]}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig123"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"echo","input":{}}}`,
			`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"text\":\"t\"}"}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`,
			`{"type":"message_stop"}`,
		}, `{"content":[{"signature":"sig123","thinking":"Let me think.","type":"thinking"},{"data":"opaque","type":"redacted_thinking"},{"id":"toolu_1","input":{"text":"t"},"name":"echo","type":"tool_use"}],"role":"assistant"}`},
		{"responses", []string{
			`{"type":"response.created","response":{"id":"r1"}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`,
			`{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"delta":"Thinking"}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Thinking"}],"encrypted_content":"enc"}}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"echo","arguments":""}}`,
			`{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"text\":\"t\"}"}`,
			`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"echo","arguments":"{\"text\":\"t\"}"}}`,
			`{"type":"response.completed","response":{"id":"r1"}}`,
		}, `{"encrypted_content":"enc","id":"rs_1","summary":[{"text":"Thinking","type":"summary_text"}],"type":"reasoning"}`},
		{"gemini", []string{
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"pondering","thought":true}]}}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"echo","args":{"text":"t"}},"thoughtSignature":"sigG"}]},"finishReason":"STOP"}]}`,
		}, `{"parts":[{"text":"pondering","thought":true},{"functionCall":{"args":{"text":"t"},"name":"echo"},"thoughtSignature":"sigG"}],"role":"model"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runStream(t, jsonChunks(t, tt.chunks...), false, mcs.NewBaseDriver(&calcDriver{}))
			if len(run.responses) != 1 || !run.responses[0].CallExecuted {
				t.Fatalf("responses %+v", run.responses)
			}
			if run.shown.String() != "" {
				t.Errorf("thoughts were shown: %q", run.shown.String())
			}
			streamed := run.responses[0].Messages
			if got := mustJSON(streamed[0]); got != tt.first {
				t.Errorf("first history message\n got %s\nwant %s", got, tt.first)
			}
			whole := mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), run.buf.Message())
			if diff := cmp.Diff(whole.Messages, streamed); diff != "" {
				t.Errorf("streamed history differs from the whole one (-whole +stream):\n%s", diff)
			}
		})
	}
}

// foreignOf is the comparable part of foreign calls: id, name, index.
func foreignOf(calls []mcs.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, fmt.Sprintf("%s %s #%d", c.ID, c.Name, c.Index))
	}
	return out
}

// TestStreamForeignOfANativeMessage: a native message that holds calls reports
// the foreign calls of its format only, as the whole message does; a foreign call
// in its text is not a call of that message.
func TestStreamForeignOfANativeMessage(t *testing.T) {
	evs := []event{textEv(`Looking. {"tool": "web_search", "arguments": {"q": "x"}} `), callEv("c1", "echo", `{"text":"hi"}`), callEv("c2", "book_flight", `{}`)}
	run := runStream(t, anys(chatChunks(evs)), false, mcs.NewBaseDriver(&calcDriver{}))
	whole := mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), run.buf.Message())
	if diff := cmp.Diff([]string{"c2 book_flight #1"}, foreignOf(run.foreign)); diff != "" {
		t.Errorf("streamed Foreign (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(foreignOf(whole.Foreign), foreignOf(run.foreign)); diff != "" || run.format != "openai-chat" {
		t.Errorf("Foreign differs from the whole message's (-whole +stream):\n%s; format %q", diff, run.format)
	}
}
