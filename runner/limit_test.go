package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
)

// endless is a runner.Model whose stream never ends on its own: it sends chunks
// until its context ends, and then reports what ended it.
type endless struct {
	chunk  func(i int) any // the i-th chunk
	whole  map[string]any  // Generate's reply
	sent   int
	cause  error // context.Cause of the stream's context once it ended
	maxReq int   // Request.MaxReplyBytes of the last request
}

func (e *endless) Name() string { return "m" }

func (e *endless) Generate(ctx context.Context, req runner.Request) (runner.Reply, error) {
	e.maxReq = req.MaxReplyBytes
	return runner.Reply{Message: e.whole}, nil
}

func (e *endless) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	e.maxReq = req.MaxReplyBytes
	for ; ; e.sent++ {
		if ctx.Err() != nil {
			e.cause = context.Cause(ctx)
			return runner.Reply{}, fmt.Errorf("endless: %w", ctx.Err())
		}
		if e.sent > 1<<15 {
			return runner.Reply{}, errors.New("endless: 32768 chunks and still not cancelled")
		}
		chunk(e.chunk(e.sent))
	}
}

func delta(d map[string]any) map[string]any {
	return map[string]any{"object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0.0, "delta": d}}}
}

var kib = strings.Repeat("a", 1024)

// A model that streams without end, as text, as call arguments, as server-sent
// events or as chunks that carry nothing, is cut off at the limit: the stream's
// context is cancelled and Run returns a *ModelError wrapping ErrReplyTooLarge.
func TestAttackEndlessStream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		max   int // 0: the default
		chunk func(i int) any
	}{
		{"text", 64 << 10, func(int) any { return delta(map[string]any{"content": kib}) }},
		{"text with the default limit", 0, func(int) any { return delta(map[string]any{"content": kib + kib + kib + kib}) }},
		{"plain strings", 64 << 10, func(int) any { return kib }},
		{"JSON text without strings", 64 << 10, func(int) any { return `{"` + kib + `": 1}` }},
		{"call arguments", 64 << 10, func(i int) any {
			tc := map[string]any{"index": 0.0, "function": map[string]any{"arguments": kib}}
			if i == 0 {
				tc["id"], tc["function"].(map[string]any)["name"] = "c1", "get_weather"
			}
			return delta(map[string]any{"tool_calls": []any{tc}})
		}},
		{"anthropic events", 64 << 10, func(i int) any {
			if i == 0 {
				return json.RawMessage(`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"c"}}`)
			}
			if i == 1 {
				return json.RawMessage(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			}
			return json.RawMessage(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + kib + `"}}`)
		}},
		{"empty chunks", 64 << 10, func(int) any { return delta(map[string]any{}) }},
		{"a new call in every chunk", 64 << 10, func(i int) any {
			return delta(map[string]any{"tool_calls": []any{map[string]any{"index": float64(i)}}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &endless{chunk: tc.chunk}
			limit := tc.max
			if limit == 0 {
				limit = runner.DefaultMaxReplyBytes
			}
			res, err := runner.New((&replay.Weather{}).Driver(), m, runner.WithStream(nil), runner.WithMaxReplyBytes(tc.max)).
				Run(context.Background(), nil, "go")
			var me *runner.ModelError
			if !errors.As(err, &me) || !errors.Is(err, runner.ErrReplyTooLarge) {
				t.Fatalf("err = %v, want a *ModelError wrapping ErrReplyTooLarge", err)
			}
			if !errors.Is(m.cause, runner.ErrReplyTooLarge) {
				t.Errorf("the stream's context ended with %v, want the limit", m.cause)
			}
			if m.sent > limit/16+1 {
				t.Errorf("%d chunks were taken before the limit of %d bytes stopped the stream", m.sent, limit)
			}
			if m.maxReq != limit {
				t.Errorf("Request.MaxReplyBytes = %d, want %d", m.maxReq, limit)
			}
			if !strings.Contains(err.Error(), "WithMaxReplyBytes") || len(res.Calls) != 0 {
				t.Errorf("err %v, calls %d", err, len(res.Calls))
			}
		})
	}
}

// A non-streamed reply past the limit is refused before any of its calls runs.
func TestAttackHugeReply(t *testing.T) {
	w := &replay.Weather{}
	m := &endless{whole: call("c1", "get_weather", `{"city":"`+strings.Repeat(kib, 80)+`"}`)}
	res, err := runner.New(w.Driver(), m, runner.WithNativeTools(true), runner.WithMaxReplyBytes(64<<10)).Run(context.Background(), nil, "go")
	if !errors.Is(err, runner.ErrReplyTooLarge) {
		t.Fatalf("err = %v, want ErrReplyTooLarge", err)
	}
	if len(w.Calls()) != 0 || len(res.Calls) != 0 {
		t.Errorf("the call ran: %v", w.Calls())
	}
}

// A reply within the limit goes through, streamed or not; a negative limit
// removes it.
func TestReplyWithinLimit(t *testing.T) {
	text := strings.Repeat(kib, 32)
	for _, tc := range []struct {
		max    int
		stream bool
	}{{64 << 10, false}, {64 << 10, true}, {-1, true}, {-1, false}} {
		m := &script{name: "m", replies: []map[string]any{answer(text)}}
		opts := []runner.Option{runner.WithMaxReplyBytes(tc.max)}
		if tc.stream {
			opts = append(opts, runner.WithStream(nil))
		}
		res, err := runner.New((&replay.Weather{}).Driver(), m, opts...).Run(context.Background(), nil, "go")
		if err != nil || res.Text != text {
			t.Errorf("max %d stream %v: %v", tc.max, tc.stream, err)
		}
	}
	m := &endless{whole: answer(strings.Repeat(kib, 9<<10))} // 9 MiB, past the default
	if _, err := runner.New((&replay.Weather{}).Driver(), m, runner.WithMaxReplyBytes(-1)).Run(context.Background(), nil, "go"); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if m.maxReq != -1 {
		t.Errorf("Request.MaxReplyBytes = %d, want -1", m.maxReq)
	}
}
