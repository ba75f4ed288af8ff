package mcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
)

// bigDriver returns what a huge web page, file or error would hold.
type bigDriver struct {
	calcDriver
	result any
	err    error
}

func (d *bigDriver) ExecuteTool(context.Context, string, map[string]any) (any, error) {
	d.calls.Add(1)
	return d.result, d.err
}

// historySize is the bytes of every message a Response adds to the conversation,
// as JSON, plus its retry prompt.
func historySize(t *testing.T, r mcs.Response) int {
	t.Helper()
	b, err := json.Marshal(r.Messages)
	if err != nil {
		t.Fatal(err)
	}
	return len(b) + len(r.RetryPrompt)
}

// TestAttackHugeResultIsCut: a tool result or error of megabytes enters the
// history cut to the limit, head and tail kept with a notice between them, in
// every format; the record keeps the value as the tool returned it.
func TestAttackHugeResultIsCut(t *testing.T) {
	huge := "HEAD" + strings.Repeat("x", 3<<20) + "TAIL"
	rows := make([]any, 0, 50000)
	for i := range 50000 {
		rows = append(rows, map[string]any{"id": float64(i), "name": "row"})
	}
	type payload struct{ Body string }
	native := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"x"}`}}}}
	for name, td := range map[string]*bigDriver{
		"string": {result: huge}, "rows": {result: rows}, "struct": {result: payload{Body: huge}},
		"bytes": {result: []byte(huge)}, "error": {err: errors.New(huge)},
	} {
		for _, limit := range []int{0, 4096} {
			want := mcs.DefaultMaxResultBytes
			var opts []mcs.Option
			if limit != 0 {
				want, opts = limit, append(opts, mcs.WithMaxResultBytes(limit))
			}
			d := mcs.NewBaseDriver(td, opts...)
			for _, reply := range []any{`{"tool":"echo","arguments":{"text":"x"}}`, native} {
				r := d.ProcessLLMResponse(context.Background(), reply)
				if len(r.Calls) != 1 {
					t.Fatalf("%s: %+v", name, r.Calls)
				}
				// the frame, the call and the retry prompt add a little; the error is
				// in the result message and in the retry prompt
				if n := historySize(t, r); n > 2*want+2048 {
					t.Errorf("%s, limit %d, %T: %d bytes enter the history", name, want, reply, n)
				}
				var content string
				switch m := r.Messages[len(r.Messages)-1]; c := m["content"].(type) {
				case string:
					content = c
				default:
					t.Fatalf("%s: content %T", name, c)
				}
				if !strings.Contains(content, "bytes cut") {
					t.Errorf("%s, %T: no notice in %.200q", name, reply, content)
				}
				if name == "string" && (!strings.Contains(content, "HEAD") || !strings.Contains(content, "TAIL")) {
					t.Errorf("%s, %T: head or tail lost", name, reply)
				}
				if rec := r.Calls[0]; name == "string" && rec.Result != huge || name == "error" && rec.Err.Error() != huge {
					t.Errorf("%s: the record does not keep what the tool returned", name)
				}
			}
		}
	}
	// A result within the limit is untouched.
	d := mcs.NewBaseDriver(&bigDriver{result: "small"})
	r := d.ProcessLLMResponse(context.Background(), `{"tool":"echo","arguments":{"text":"x"}}`)
	if c := r.Messages[1]["content"].(string); !strings.Contains(c, "\nsmall\n") || strings.Contains(c, "cut") {
		t.Errorf("a small result changed: %q", c)
	}
}

// TestAttackHugeArgumentsDoNotRun: a call whose arguments are megabytes never runs
// and its arguments stay out of the history, text and native, whole and streamed;
// without a limit it runs.
func TestAttackHugeArgumentsDoNotRun(t *testing.T) {
	big := strings.Repeat("é", 1<<20) // 2 MiB
	q, _ := json.Marshal(big)
	text := `Here: {"tool":"echo","arguments":{"text":` + string(q) + `}} and {"tool":"echo","arguments":{"text":"small"}} done`
	native := map[string]any{"role": "assistant", "tool_calls": []any{
		map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":` + string(q) + `}`}},
		map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"small"}`}}}}
	check := func(what string, r []mcs.Response, td *calcDriver) {
		t.Helper()
		var recs []mcs.CallRecord
		size := 0
		for _, x := range r {
			recs = append(recs, x.Calls...)
			size += historySize(t, x)
		}
		if len(recs) != 2 || !errors.Is(recs[0].Err, mcs.ErrArgumentsTooLarge) || recs[1].Err != nil || recs[1].Result != "small" {
			t.Fatalf("%s: records %+v", what, calls(mcs.Response{Calls: recs}))
		}
		if !strings.Contains(recs[0].Err.Error(), fmt.Sprint(mcs.DefaultMaxArgumentBytes)) {
			t.Errorf("%s: the error does not say the limit: %v", what, recs[0].Err)
		}
		if n := td.calls.Load(); n != 1 {
			t.Errorf("%s: %d tools ran, want 1", what, n)
		}
		if size > 4096 {
			t.Errorf("%s: %d bytes enter the history", what, size)
		}
	}
	for _, reply := range []any{text, native} {
		td := &calcDriver{}
		r := mcs.NewBaseDriver(td).ProcessLLMResponse(context.Background(), reply)
		check(fmt.Sprintf("whole %T", reply), []mcs.Response{r}, td)
	}
	td := &calcDriver{}
	run := runStream(t, textChunks(text, 1<<16), true, mcs.NewBaseDriver(td))
	check("streamed", run.responses, td)
	if run.shown.String() != "Here:  and  done" {
		t.Errorf("streamed text shown: %.100q", run.shown.String())
	}

	td = &calcDriver{}
	r := mcs.NewBaseDriver(td, mcs.WithMaxArgumentBytes(-1)).ProcessLLMResponse(context.Background(), text)
	if td.calls.Load() != 2 || r.CallFailed {
		t.Errorf("no limit: %d ran, %+v", td.calls.Load(), r.Calls[0].Err)
	}
}

// TestAttackCallsOverLimitAnsweredOnce: the calls of a reply over the per-reply
// limit are answered by one message, not one each, text and native, whole and
// streamed: a reply of thousands of calls cannot grow the history by thousands of
// messages.
func TestAttackCallsOverLimitAnsweredOnce(t *testing.T) {
	const n, limit = 500, 3
	text := strings.Repeat(`{"tool":"echo","arguments":{"text":"x"}} `, n)
	var tcs []any
	for i := range n {
		tcs = append(tcs, map[string]any{"id": fmt.Sprint("c", i), "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"x"}`}})
	}
	native := map[string]any{"role": "assistant", "tool_calls": tcs}
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMaxCalls(limit))

	r := d.ProcessLLMResponse(context.Background(), text)
	if len(r.Calls) != n || len(r.Messages) != 1+limit+1 {
		t.Fatalf("text: %d records, %d messages; want %d and %d", len(r.Calls), len(r.Messages), n, limit+2)
	}
	last := r.Messages[limit+1]["content"].(string)
	if !strings.Contains(last, "every later call") || !strings.Contains(last, fmt.Sprint("at most ", limit)) {
		t.Errorf("the one answer does not say why: %s", last)
	}

	r = d.ProcessLLMResponse(context.Background(), native)
	if len(r.Calls) != n || len(r.Messages) != 1+limit+1 {
		t.Fatalf("native: %d records, %d messages", len(r.Calls), len(r.Messages))
	}
	if tc := r.Messages[0]["tool_calls"].([]any); len(tc) != limit+1 {
		t.Errorf("the assistant message carries %d calls, want %d, each answered", len(tc), limit+1)
	}

	run := runStream(t, textChunks(text, 50), true, d)
	answers := 0
	for _, x := range run.responses {
		for _, m := range x.Messages {
			if m["role"] != "assistant" {
				answers++
			}
		}
	}
	if len(run.calls()) != n || answers != limit+1 {
		t.Errorf("streamed: %d records, %d answers; want %d and %d", len(run.calls()), answers, n, limit+1)
	}
}
