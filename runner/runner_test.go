package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
)

// script is a runner.Model that answers from a list of Chat Completions
// messages, streamed as one chunk per message field.
type script struct {
	mu      sync.Mutex
	name    string
	replies []map[string]any
	reqs    []runner.Request
	ctxs    []context.Context
}

func (s *script) Name() string { return s.name }

func (s *script) next(ctx context.Context, req runner.Request) (runner.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	s.ctxs = append(s.ctxs, ctx)
	if len(s.reqs) > len(s.replies) {
		return runner.Reply{}, errors.New("script: no more replies")
	}
	return runner.Reply{Message: s.replies[len(s.reqs)-1], Usage: runner.Usage{InputTokens: 10, OutputTokens: 1}}, nil
}

func (s *script) Generate(ctx context.Context, req runner.Request) (runner.Reply, error) {
	return s.next(ctx, req)
}

func (s *script) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	r, err := s.next(ctx, req)
	if err != nil {
		return r, err
	}
	delta := map[string]any{}
	for k, v := range r.Message {
		delta[k] = v
	}
	if tcs, ok := delta["tool_calls"].([]any); ok {
		indexed := make([]any, len(tcs))
		for i, tc := range tcs {
			m := map[string]any{"index": float64(i)}
			for k, v := range tc.(map[string]any) {
				m[k] = v
			}
			indexed[i] = m
		}
		delta["tool_calls"] = indexed
	}
	finish := "stop"
	if _, ok := delta["tool_calls"]; ok {
		finish = "tool_calls"
	}
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": delta}}})
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{}, "finish_reason": finish}}})
	return r, nil
}

func call(id, name, args string) map[string]any {
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
		map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
}

func answer(text string) map[string]any { return map[string]any{"role": "assistant", "content": text} }

func TestMaxRounds(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			m := &script{name: "m", replies: []map[string]any{
				call("c1", "get_weather", `{"city":"A"}`), call("c2", "get_weather", `{"city":"B"}`), answer("never")}}
			opts := []runner.Option{runner.WithMaxRounds(2), runner.WithNativeTools(true)}
			if stream {
				opts = append(opts, runner.WithStream(nil))
			}
			res, err := runner.New((&replay.Weather{}).Driver(), m, opts...).Run(context.Background(), nil, "go")
			if !errors.Is(err, runner.ErrMaxRounds) {
				t.Fatalf("err = %v, want ErrMaxRounds", err)
			}
			if res.Rounds != 2 || len(res.Calls) != 2 || res.Usage.InputTokens != 20 {
				t.Errorf("Rounds %d, Calls %d, Usage %+v", res.Rounds, len(res.Calls), res.Usage)
			}
			var roles []string
			for _, h := range res.History {
				roles = append(roles, h["role"].(string))
			}
			if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant", "tool"}, roles); diff != "" {
				t.Errorf("history roles (-want +got):\n%s", diff)
			}
		})
	}
}

// modelDriver records the model names its prompts were asked for.
type modelDriver struct {
	*mcs.BaseDriver
	mu     sync.Mutex
	models []string
}

func (d *modelDriver) SystemMessage(ctx context.Context, model string) (string, error) {
	d.mu.Lock()
	d.models = append(d.models, "system "+model)
	d.mu.Unlock()
	return d.BaseDriver.SystemMessage(ctx, model)
}

func (d *modelDriver) NativeToolContext(ctx context.Context, model string) (mcs.NativeToolContext, error) {
	d.mu.Lock()
	d.models = append(d.models, "native "+model)
	d.mu.Unlock()
	return d.BaseDriver.NativeToolContext(ctx, model)
}

func TestModelNameAndRoundHook(t *testing.T) {
	type key struct{}
	for _, native := range []bool{false, true} {
		d := &modelDriver{BaseDriver: (&replay.Weather{}).Driver()}
		m := &script{name: "llama3.2", replies: []map[string]any{call("c1", "get_time", `{"zone":"UTC"}`), answer("noon")}}
		var rounds []string
		hook := func(ctx context.Context, info runner.RoundInfo) (context.Context, func(runner.Reply, error)) {
			rounds = append(rounds, fmt.Sprintf("start %s %d tools=%d", info.Model, info.Round, len(info.Request.Tools)))
			return context.WithValue(ctx, key{}, info.Round), func(r runner.Reply, err error) {
				rounds = append(rounds, fmt.Sprintf("end %d %d %v", info.Round, r.Usage.InputTokens, err))
			}
		}
		res, err := runner.New(d, m, runner.WithNativeTools(native), runner.WithRoundHook(hook)).Run(context.Background(), nil, "time?")
		if err != nil || res.Text != "noon" {
			t.Fatalf("Run: %v %q", err, res.Text)
		}
		kind, tools := "system", 0
		if native {
			kind, tools = "native", 2
		}
		if diff := cmp.Diff([]string{kind + " llama3.2", kind + " llama3.2"}, d.models); diff != "" {
			t.Errorf("native=%v: model names (-want +got):\n%s", native, diff)
		}
		want := []string{fmt.Sprintf("start llama3.2 1 tools=%d", tools), "end 1 10 <nil>", fmt.Sprintf("start llama3.2 2 tools=%d", tools), "end 2 10 <nil>"}
		if diff := cmp.Diff(want, rounds); diff != "" {
			t.Errorf("hook (-want +got):\n%s", diff)
		}
		for i, ctx := range m.ctxs {
			if ctx.Value(key{}) != i+1 {
				t.Errorf("request %d did not run in the hook's context", i+1)
			}
		}
	}
}

// A text reply with an owned call and, after it, a call of a tool that does not
// exist: the driver's messages, the rest of the reply, then one retry prompt.
func TestTextCallsOwnedAndForeign(t *testing.T) {
	reply := `First {"tool": "get_time", "arguments": {"zone": "UTC"}} then {"tool": "get_tme", "arguments": {}}`
	for _, stream := range []bool{false, true} {
		m := &script{name: "m", replies: []map[string]any{answer(reply), answer("done")}}
		w := &replay.Weather{}
		var opts []runner.Option
		if stream {
			opts = append(opts, runner.WithStream(nil))
		}
		res, err := runner.New(w.Driver(), m, opts...).Run(context.Background(), nil, "go")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"get_time map[zone:UTC]"}, w.Calls()); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		h := m.reqs[1].Messages
		var got []string
		for _, e := range h {
			got = append(got, fmt.Sprintf("%v: %v", e["role"], e["content"]))
		}
		want := []string{
			"user: go",
			"assistant: " + reply, // streamed or not, the driver's echo holds all of it
			framed("get_time", map[string]any{"zone": "UTC"}, "12:00 UTC"),
			"user: The call to the tool 'get_tme' failed: unknown tool: tool \"get_tme\" does not exist; the closest tools are \"get_time\", \"get_weather\"\n" +
				"Check the tool name and the arguments against the tool list and try again, or answer the user without the tool.",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stream=%v: second request (-want +got):\n%s", stream, diff)
		}
		if len(res.Calls) != 2 || !errors.Is(res.Calls[1].Err, mcs.ErrUnknownTool) {
			t.Errorf("Calls = %+v", res.Calls)
		}
	}
}

// A driver without streaming gets non-streaming requests; show gets the answer.
func TestStreamWithoutStreamingDriver(t *testing.T) {
	m := &script{name: "m", replies: []map[string]any{answer("plain")}}
	var shown []string
	d := struct{ mcs.Driver }{(&replay.Weather{}).Driver()}
	res, err := runner.New(d, m, runner.WithStream(func(s string) { shown = append(shown, s) })).Run(context.Background(), nil, "x")
	if err != nil || res.Text != "plain" || !cmp.Equal(shown, []string{"plain"}) {
		t.Errorf("Run: %v %q shown %q", err, res.Text, shown)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := runner.New((&replay.Weather{}).Driver(), &script{name: "m"}).Run(ctx, []map[string]any{{"role": "user", "content": "a"}}, "b")
	if !errors.Is(err, context.Canceled) || len(res.History) != 2 || res.Rounds != 0 {
		t.Errorf("err %v, history %d, rounds %d", err, len(res.History), res.Rounds)
	}
}

func TestModelError(t *testing.T) {
	inner := errors.New("dial tcp: connection refused")
	err := error(&runner.ModelError{Provider: "openai", Endpoint: "http://127.0.0.1:1/v1", Model: "m", Kind: runner.ErrUnreachable,
		Detail: inner.Error(), Hint: "is the server running?", Err: inner})
	want := `openai model "m" at http://127.0.0.1:1/v1: model endpoint unreachable: dial tcp: connection refused; is the server running?`
	if err.Error() != want {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, runner.ErrUnreachable) || !errors.Is(err, inner) {
		t.Error("ModelError does not unwrap to Kind and Err")
	}
	if strings.Contains(want, "%!") {
		t.Error("bad format")
	}
}

// framed is a text-protocol tool result as the default codec puts it in the
// history: a user turn that frames the content as data the tool returned.
func framed(tool string, args map[string]any, content string) string {
	m := mcs.DefaultPromptStrategy().ResultMessage(mcs.ToolCall{Name: tool, Arguments: args}, content, false)
	return fmt.Sprintf("%v: %v", m["role"], m["content"])
}
