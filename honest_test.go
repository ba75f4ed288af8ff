package mcs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// checkedDriver is calcDriver with a Healthcheck that says ERROR and a meta that
// advertises it.
type checkedDriver struct{ calcDriver }

func (d *checkedDriver) Meta() mcs.Meta {
	return mcs.DeriveCapabilities(d.calcDriver.Meta(), d)
}

func (*checkedDriver) Healthcheck(context.Context) mcs.HealthResult {
	return mcs.HealthResult{Status: mcs.HealthError, Detail: "down"}
}

// TestBaseDriverMetaIsHonest: a BaseDriver over a tool driver with a healthcheck has
// no Healthcheck, so its meta must not advertise one.
func TestBaseDriverMetaIsHonest(t *testing.T) {
	td := &checkedDriver{}
	if !td.Meta().HasCapability(mcs.CapabilityHealthcheck) {
		t.Fatal("the tool driver's own meta lacks healthcheck")
	}
	b := mcs.NewBaseDriver(td)
	_, implements := any(b).(mcs.SupportsHealthcheck)
	if got := b.Meta().HasCapability(mcs.CapabilityHealthcheck); got != implements {
		t.Errorf("BaseDriver meta says healthcheck=%v, the type assertion says %v", got, implements)
	}
}

// TestDeriveCapabilitiesDropsUnimplemented: core flags of contracts v does not
// implement are dropped, custom flags kept.
func TestDeriveCapabilitiesDropsUnimplemented(t *testing.T) {
	m := mcs.Meta{Capabilities: []mcs.Capability{"custom", mcs.CapabilityHealthcheck, mcs.CapabilityStreaming, mcs.CapabilityOrchestratable}}
	got := mcs.DeriveCapabilities(m, &calcDriver{}).Capabilities
	want := []mcs.Capability{"custom", mcs.CapabilityOrchestratable}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNoMethodHandsOutTheToolDriver: no exported method of *BaseDriver returns a
// ToolDriver, so nothing offers a way around the driver's middleware.
func TestNoMethodHandsOutTheToolDriver(t *testing.T) {
	td := reflect.TypeFor[mcs.ToolDriver]()
	typ := reflect.TypeFor[*mcs.BaseDriver]()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		for j := range m.Type.NumOut() {
			if out := m.Type.Out(j); out.Implements(td) || out == td {
				t.Errorf("(*BaseDriver).%s returns %v, a path around the middleware", m.Name, out)
			}
		}
	}
	b := mcs.NewBaseDriver(&calcDriver{})
	inner := &calcDriver{}
	if mcs.NewBaseDriver(inner).Wraps(&calcDriver{}) || !mcs.NewBaseDriver(inner).Wraps(inner) || !mcs.NewBaseDriver(b).Wraps(b) {
		t.Error("Wraps is wrong")
	}
}

// mutator changes the nested arguments it receives.
type mutator struct{ calcDriver }

func (*mutator) ExecuteTool(_ context.Context, _ string, args map[string]any) (any, error) {
	args["text"] = "changed"
	if m, ok := args["nested"].(map[string]any); ok {
		m["deep"] = "changed"
	}
	if l, ok := args["list"].([]any); ok {
		l[0] = "changed"
	}
	return "ok", nil
}

// TestToolCannotChangeTheRecord: a tool that mutates nested arguments changes
// neither CallRecord.Arguments nor the history, in both formats.
func TestToolCannotChangeTheRecord(t *testing.T) {
	d := mcs.NewBaseDriver(&mutator{})
	for name, reply := range map[string]any{
		"text": `{"tool":"echo","arguments":{"text":"a","nested":{"deep":"b"},"list":["c"]}}`,
		"anthropic": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t1", "name": "echo",
			"input": map[string]any{"text": "a", "nested": map[string]any{"deep": "b"}, "list": []any{"c"}}}}},
	} {
		r := d.ProcessLLMResponse(context.Background(), reply)
		want := map[string]any{"text": "a", "nested": map[string]any{"deep": "b"}, "list": []any{"c"}}
		if len(r.Calls) != 1 {
			t.Fatalf("%s: %+v", name, r)
		}
		if diff := cmp.Diff(want, r.Calls[0].Arguments); diff != "" {
			t.Errorf("%s: record changed by the tool (-want +got):\n%s", name, diff)
		}
		if hist := fmt.Sprint(r.Messages); strings.Contains(hist, "changed") {
			t.Errorf("%s: history changed by the tool: %s", name, hist)
		}
	}
}

// TestNoFormatsMeansDefault: WithFormats() with none behaves as the default chain,
// whole and streamed; so does the deprecated WithExtractionStrategies.
func TestNoFormatsMeansDefault(t *testing.T) {
	reply := `{"tool":"echo","arguments":{"text":"x"}}`
	for _, opt := range []mcs.Option{mcs.WithFormats(), mcs.WithFormats(nil), mcs.WithExtractionStrategies(), mcs.WithExtractionStrategies(nil)} {
		d := mcs.NewBaseDriver(&calcDriver{}, opt)
		whole := calls(d.ProcessLLMResponse(context.Background(), reply))
		streamed := feed(textChunks(reply, 5), true, d).calls()
		if len(whole) != 1 || cmp.Diff(whole, streamed) != "" {
			t.Errorf("whole %+v, streamed %+v", whole, streamed)
		}
	}
}

// TestPerReplyCallLimit: calls over the limit fail without running, whole and
// streamed, text and native.
func TestPerReplyCallLimit(t *testing.T) {
	text := strings.Repeat(`{"tool":"echo","arguments":{"text":"x"}} `, 40)
	var tcs []any
	var evs []event
	for i := range 40 {
		tcs = append(tcs, map[string]any{"id": fmt.Sprint("c", i), "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"x"}`}})
		evs = append(evs, callEv(fmt.Sprint("c", i), "echo", `{"text":"x"}`))
	}
	native := map[string]any{"role": "assistant", "tool_calls": tcs}
	check := func(t *testing.T, what string, recs []mcs.CallRecord, td *calcDriver, limit int) {
		t.Helper()
		if len(recs) != 40 {
			t.Fatalf("%s: %d records, want 40", what, len(recs))
		}
		for i, r := range recs {
			over := i >= limit
			if over != errors.Is(r.Err, mcs.ErrTooManyCalls) {
				t.Fatalf("%s: call %d: err %v", what, i, r.Err)
			}
		}
		if n := td.calls.Load(); n != int64(limit) {
			t.Errorf("%s: %d tools ran, want %d", what, n, limit)
		}
	}
	for _, limit := range []int{mcs.DefaultMaxCalls, 3} {
		opts := []mcs.Option{}
		if limit != mcs.DefaultMaxCalls {
			opts = append(opts, mcs.WithMaxCalls(limit))
		}
		for _, reply := range []any{text, native} {
			td := &calcDriver{}
			r := mcs.NewBaseDriver(td, opts...).ProcessLLMResponse(context.Background(), reply)
			check(t, fmt.Sprintf("whole %T limit %d", reply, limit), r.Calls, td, limit)
			if !strings.Contains(r.Calls[39].Err.Error(), fmt.Sprint("at most ", limit)) {
				t.Errorf("the error does not say the limit: %v", r.Calls[39].Err)
			}
		}
		for name, chunks := range map[string][]any{"text": textChunks(text, 7), "chat": anys(chatChunks(evs))} {
			td := &calcDriver{}
			run := feed(chunks, true, mcs.NewBaseDriver(td, opts...))
			var recs []mcs.CallRecord
			for _, r := range run.responses {
				recs = append(recs, r.Calls...)
			}
			check(t, "streamed "+name, recs, td, limit)
		}
	}
	td := &calcDriver{}
	r := mcs.NewBaseDriver(td, mcs.WithMaxCalls(-1)).ProcessLLMResponse(context.Background(), text)
	if td.calls.Load() != 40 || r.CallFailed {
		t.Errorf("no limit: %d ran", td.calls.Load())
	}
}

// brokenDriver cannot list its tools.
type brokenDriver struct{ calcDriver }

func (*brokenDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return nil, errors.New("the specification does not load")
}

// TestUnavailableDriverIsVisible: a driver whose listing fails says so when a reply
// holds calls, and stays silent on a reply without calls.
func TestUnavailableDriverIsVisible(t *testing.T) {
	d := mcs.NewBaseDriver(&brokenDriver{})
	r := d.ProcessLLMResponse(context.Background(), `{"tool":"echo","arguments":{}}`)
	var ue *mcs.UnavailableError
	if !errors.As(r.Unavailable, &ue) || !strings.Contains(r.Unavailable.Error(), "does not load") || r.CallFailed || r.Calls != nil {
		t.Errorf("whole reply: %+v", r)
	}
	if r := d.ProcessLLMResponse(context.Background(), "just prose"); r.Unavailable != nil {
		t.Errorf("prose: %+v", r)
	}
	run := feed(textChunks(`{"tool":"echo","arguments":{}}`, 4), true, d)
	n := 0
	buf := d.NewStreamBuffer()
	for _, c := range textChunks(`a {"tool":"echo","arguments":{}} b`, 4) {
		buf.Add(c)
		if d.ProcessStream(context.Background(), buf).Unavailable != nil {
			n++
		}
	}
	buf.Finish()
	if d.ProcessStream(context.Background(), buf).Unavailable != nil {
		n++
	}
	if n != 1 || len(run.responses) != 0 {
		t.Errorf("stream: Unavailable reported %d times, want once; responses %+v", n, run.responses)
	}
}

// TestReasoningBlocksNeverRun: a call inside a reasoning block is the model thinking
// aloud, in text (whole and streamed at every boundary) and in native parts.
func TestReasoningBlocksNeverRun(t *testing.T) {
	owned := `{"tool":"add","arguments":{"a":1,"b":2}}`
	inner := `{"tool":"echo","arguments":{"text":"thought"}}`
	want := []call{{Name: "add", Args: map[string]any{"a": 1.0, "b": 2.0}, Result: 3.0}}
	for _, reply := range []string{
		"<think>I could call " + inner + " but no.</think> " + owned,
		"<thinking>\n```json\n" + inner + "\n```\n</thinking>" + owned,
		owned + " <think>maybe " + inner,
	} {
		d := mcs.NewBaseDriver(&calcDriver{})
		if diff := cmp.Diff(want, calls(d.ProcessLLMResponse(context.Background(), reply))); diff != "" {
			t.Errorf("%q whole (-want +got):\n%s", reply, diff)
		}
		for _, chunks := range chunkings(reply) {
			shown, got := streamTextReply(mcs.NewBaseDriver(&calcDriver{}), chunks)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q streamed %q (-want +got):\n%s", reply, chunks, diff)
			}
			if strings.Contains(shown, `"add"`) {
				t.Fatalf("owned call shown: %q", shown)
			}
		}
	}
	// A user's own tags, from the TOML codec.
	ps, err := mcs.ParsePromptStrategy("p.toml", []byte("[[reasoning]]\nopen = \"[[plan]]\"\nclose = \"[[/plan]]\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithPromptStrategy(ps))
	if got := calls(d.ProcessLLMResponse(context.Background(), "[[plan]]"+inner+"[[/plan]] "+owned)); cmp.Diff(want, got) != "" {
		t.Errorf("custom tags: %+v", got)
	}
	if _, err := mcs.ParsePromptStrategy("p.toml", []byte("[[reasoning]]\nopen = \"<x>\"\n")); err == nil {
		t.Error("a reasoning block without close was accepted")
	}
	// Native reasoning parts that carry text.
	for name, msg := range map[string]map[string]any{
		"anthropic thinking": {"role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": inner, "text": inner, "signature": "s"},
			map[string]any{"type": "text", "text": owned}}},
		"typed reasoning part": {"role": "assistant", "content": []any{
			map[string]any{"type": "reasoning", "text": inner}, map[string]any{"type": "text", "text": owned}}},
		"gemini thought": {"role": "model", "parts": []any{map[string]any{"text": inner, "thought": true}, map[string]any{"text": owned}}},
		"responses reasoning": {"output": []any{
			map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": inner}}},
			map[string]any{"type": "message", "content": []any{map[string]any{"type": "output_text", "text": owned}}}}},
	} {
		got := calls(mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), msg))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// ExtractCalls, which clients use to find unowned calls, skips them too.
	if _, got := mcs.ExtractCalls("<think>" + inner + "</think>"); len(got) != 0 {
		t.Errorf("ExtractCalls found %+v in a reasoning block", got)
	}
}

// TestStreamFencedCallRunsInItsRound: a fenced call runs in the round whose chunk
// brings the closing fence, even when that chunk is the stream's last and Finish is
// never called.
func TestStreamFencedCallRunsInItsRound(t *testing.T) {
	chunks := []string{"Here:\n```json\n", `{"tool":"echo","arguments":{"text":"f"}}`, "\n```"}
	d := mcs.NewBaseDriver(&calcDriver{})
	buf := d.NewStreamBuffer()
	for i, c := range chunks {
		buf.Add(c)
		r := d.ProcessStream(context.Background(), buf)
		if ran := r.CallExecuted; ran != (i == len(chunks)-1) {
			t.Fatalf("chunk %d: executed=%v, want it exactly in the last round: %+v", i, ran, r)
		}
	}
	// Unfenced: the closing brace's round.
	buf = d.NewStreamBuffer()
	buf.Add(`x {"tool":"echo","arguments":{"text":"u"}`)
	if d.ProcessStream(context.Background(), buf).CallExecuted {
		t.Fatal("ran before the closing brace")
	}
	buf.Add("}")
	if !d.ProcessStream(context.Background(), buf).CallExecuted {
		t.Fatal("did not run in the round of the closing brace")
	}
}

// TestStreamNativeCallWithoutArguments: a native call whose arguments never arrive
// fails with a retry prompt at the end of the stream; the tool never runs.
func TestStreamNativeCallWithoutArguments(t *testing.T) {
	streams := map[string][]string{
		"chat": {
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"echo","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`},
		"responses": {
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc1","call_id":"c1","name":"echo","arguments":""}}`,
			`{"type":"response.completed"}`},
	}
	for name, chunks := range streams {
		td := &calcDriver{}
		run := feed(anys(chunks), true, mcs.NewBaseDriver(td))
		if len(run.responses) != 1 {
			t.Fatalf("%s: %+v", name, run.responses)
		}
		r := run.responses[0]
		if !r.CallFailed || r.RetryPrompt == "" || !errors.Is(r.Calls[0].Err, mcs.ErrMalformedCall) || td.calls.Load() != 0 {
			t.Errorf("%s: want a failed call that never ran, got %+v (ran %d)", name, r, td.calls.Load())
		}
	}
}

// TestStreamExecutedBatchLeavesTheMessage: from the Add after the round that ran
// them, Message no longer carries the executed native calls; foreign ones stay.
func TestStreamExecutedBatchLeavesTheMessage(t *testing.T) {
	evs := []event{callEv("c1", "echo", `{"text":"x"}`), callEv("c2", "web_search", `{"q":"y"}`)}
	streams := map[string][]string{"chat": chatChunks(evs), "responses": responsesChunks(evs), "anthropic": anthropicChunks(evs)}
	for name, chunks := range streams {
		d := mcs.NewBaseDriver(&calcDriver{})
		run := feed(anys(chunks), true, d)
		if len(run.responses) != 1 || !run.responses[0].CallExecuted {
			t.Fatalf("%s: %+v", name, run.responses)
		}
		run.buf.Add("") // the next Add
		msg := mustJSON(run.buf.Message())
		if strings.Contains(msg, `"echo"`) || !strings.Contains(msg, "web_search") {
			t.Errorf("%s: message after the batch: %s", name, msg)
		}
	}
}

// TestWholeAndStreamAgreeOnMalformed: an owned call whose braces closed but that
// cannot be decoded fails with a retry prompt in both paths, in the same order as
// the calls around it.
func TestWholeAndStreamAgreeOnMalformed(t *testing.T) {
	reply := `{"tool":"echo","arguments":{"text":"1"}} {"tool": "echo", "arguments": {"text": "a" "b"}} {"tool":"add","arguments":{"a":1,"b":1}}`
	whole := calls(mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), reply))
	if len(whole) != 3 || whole[1].Err == "" {
		t.Fatalf("whole: %+v", whole)
	}
	for _, chunks := range chunkings(reply) {
		_, got := streamTextReply(mcs.NewBaseDriver(&calcDriver{}), chunks)
		if diff := cmp.Diff(whole, got); diff != "" {
			t.Fatalf("chunks %q (-whole +stream):\n%s", chunks, diff)
		}
	}
}

// slowLister blocks its first listing until release is closed.
type slowLister struct {
	calcDriver
	entered chan struct{}
	release chan struct{}
}

func (d *slowLister) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	select {
	case d.entered <- struct{}{}:
	default:
	}
	<-d.release
	return d.calcDriver.ListTools(ctx)
}

// TestStreamListingDoesNotBlockDisplay: while a driver's listing is slow inside
// ProcessStream, Add, Text and Content on the UI goroutine still return.
func TestStreamListingDoesNotBlockDisplay(t *testing.T) {
	td := &slowLister{entered: make(chan struct{}, 1), release: make(chan struct{})}
	d := mcs.NewBaseDriver(td)
	buf := d.NewStreamBuffer()
	buf.Add(`{"tool":"echo","arguments":{"text":"x"}}`)
	done := make(chan mcs.Response)
	go func() { done <- d.ProcessStream(context.Background(), buf) }()
	<-td.entered // the listing runs now
	buf.Add(" more")
	buf.Text()
	if !strings.HasSuffix(buf.Content(), " more") {
		t.Errorf("content %q", buf.Content())
	}
	close(td.release)
	if r := <-done; !r.CallExecuted {
		t.Errorf("the call did not run: %+v", r)
	}
}

// panicDecoderCodec is the default codec with a decoder that panics.
type panicDecoderCodec struct{ mcs.PromptStrategy }

func (panicDecoderCodec) NewDecoder() mcs.TextDecoder { return panicDecoder{} }

type panicDecoder struct{ mcs.TextDecoder }

func (panicDecoder) Scan(string) []mcs.ToolCall   { panic("decoder bug") }
func (panicDecoder) Finish(string) []mcs.ToolCall { panic("decoder bug") }

// TestStrategyPanicKeepsNativeCalls: a panic in a user's text decoder is logged and
// the stream's native calls still run.
func TestStrategyPanicKeepsNativeCalls(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithPromptStrategy(panicDecoderCodec{mcs.DefaultPromptStrategy()}))
	evs := []event{textEv("Let me see."), callEv("c1", "echo", `{"text":"n"}`)}
	run := feed(anys(chatChunks(evs)), true, d)
	if got := run.calls(); len(got) != 1 || got[0].Result != "n" {
		t.Errorf("native calls: %+v", got)
	}
	if !strings.Contains(logs.String(), "decoder bug") {
		t.Errorf("the panic was not logged: %q", logs.String())
	}
}

// TestExtractCalls: every call-shaped entry, owned or not, with ids, arguments and
// the format; malformed ones with Err; nothing from reasoning blocks or prose.
func TestExtractCalls(t *testing.T) {
	type got struct {
		ID, Name string
		Args     map[string]any
		Bad      bool
	}
	flat := func(calls []mcs.ToolCall) []got {
		var out []got
		for _, c := range calls {
			out = append(out, got{c.ID, c.Name, c.Arguments, c.Err != nil})
		}
		return out
	}
	tests := []struct {
		name   string
		reply  any
		format string
		want   []got
	}{
		{"text", `a {"tool":"echo","arguments":{"text":"x"}} b {"tool":"nobody_has_it"} <think>{"tool":"no"}</think> {"tool":"bad" "x"}`, "text",
			[]got{{"", "echo", map[string]any{"text": "x"}, false}, {"", "nobody_has_it", map[string]any{}, false}, {"", "bad", map[string]any{}, true}}},
		{"chat", map[string]any{"role": "assistant", "tool_calls": []any{
			map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "ghost", "arguments": `{"a":1}`}},
			map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "echo", "arguments": `[1]`}}}}, "openai-chat",
			[]got{{"c1", "ghost", map[string]any{"a": 1.0}, false}, {"c2", "echo", nil, true}}},
		{"prose", "nothing to see {here}", "text", nil},
		{"nil", nil, "text", nil},
	}
	for _, tt := range tests {
		format, calls := mcs.ExtractCalls(tt.reply)
		if format != tt.format {
			t.Errorf("%s: format %q, want %q", tt.name, format, tt.format)
		}
		if diff := cmp.Diff(tt.want, flat(calls)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if format, calls := mcs.ExtractCalls("x", nil, mcs.TextFormat(nil)); format != "text" || calls != nil {
		t.Errorf("nil strategy: %q %v", format, calls)
	}
}
