package mcs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
)

// trivialDriver has one tool that returns a constant; it isolates the kernel's cost.
type trivialDriver struct{}

func (trivialDriver) Meta() mcs.Meta { return mcs.Meta{ID: "bench/trivial", Name: "Trivial"} }

// trivialTools is built once, as a real driver caches its listing.
var trivialTools = []mcs.Tool{{Name: "get_weather", Description: "Weather for a city.",
	Parameters: []mcs.Parameter{{Name: "city", Required: true}}}}

func (trivialDriver) ListTools(context.Context) ([]mcs.Tool, error) { return trivialTools, nil }
func (trivialDriver) ExecuteTool(context.Context, string, map[string]any) (any, error) {
	return "sunny", nil
}

func passThrough() mcs.ToolMiddleware {
	return mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		return next(ctx, name, args)
	})
}

// BenchmarkChain measures a call through 0, 1, 4 and 16 pass-through layers.
func BenchmarkChain(b *testing.B) {
	terminal := func(context.Context, string, map[string]any) (any, error) { return nil, nil }
	args := map[string]any{"city": "Paris"}
	ctx := context.Background()
	for _, n := range []int{0, 1, 4, 16} {
		mw := make([]mcs.ToolMiddleware, n)
		for i := range mw {
			mw[i] = passThrough()
		}
		call := mcs.Chain(terminal, mw...)
		b.Run(fmt.Sprintf("layers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(ctx, "get_weather", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// textCall is a 120-byte model reply with one text call.
const textCall = `I'll check that for you. {"tool": "get_weather", "arguments": {"city": "Paris"}} One moment while I look that up, please`

// BenchmarkProcessText processes one text call with a trivial tool and no middleware.
func BenchmarkProcessText(b *testing.B) {
	if len(textCall) != 120 {
		b.Fatalf("reply is %d bytes, want 120", len(textCall))
	}
	d := mcs.NewBaseDriver(trivialDriver{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := d.ProcessLLMResponse(ctx, textCall); !r.CallExecuted {
			b.Fatal("call not executed")
		}
	}
}

// BenchmarkProcessChatCompletions processes one Chat Completions message with one call.
func BenchmarkProcessChatCompletions(b *testing.B) {
	d := mcs.NewBaseDriver(trivialDriver{})
	ctx := context.Background()
	msg := map[string]any{
		"role": "assistant", "content": nil,
		"tool_calls": []any{map[string]any{"id": "call_abc123", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := d.ProcessLLMResponse(ctx, msg); !r.CallExecuted {
			b.Fatal("call not executed")
		}
	}
}

// proseReply returns n bytes of prose without call-shaped bytes (no brace, backtick
// or reasoning tag), followed by one call.
func proseReply(n int) string {
	const unit = "The quick brown fox jumps over the lazy dog; it's 42 degrees (sunny) in Paris, \"nice\" weather. "
	call := ` {"tool": "get_weather", "arguments": {"city": "Paris"}}`
	return strings.Repeat(unit, n/len(unit)+1)[:n-len(call)] + call
}

// BenchmarkScanProse finds the one call at the end of 16, 64 and 256 KiB of prose,
// whole reply: the prose is skipped at memory speed.
func BenchmarkScanProse(b *testing.B) {
	ctx := context.Background()
	d := mcs.NewBaseDriver(trivialDriver{})
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10} {
		reply := proseReply(n)
		b.Run(fmt.Sprintf("N=%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n)) // reported as MB/s
			b.ReportAllocs()
			for b.Loop() {
				if r := d.ProcessLLMResponse(ctx, reply); !r.CallExecuted {
					b.Fatal("call not executed")
				}
			}
		})
	}
}

// floorSink keeps the floor benchmarks' values alive.
var floorSink any

// BenchmarkFloor does only what the Response of one call must hold, with nothing
// found, decoded or run: for a text reply the decoded arguments, the chain's copy
// of them, the assistant message and the framed result message; for a Chat
// Completions message the arguments, their copy, the assistant message with its
// tool_calls and the tool message. It is the lower bound of BenchmarkProcessText
// and BenchmarkProcessChatCompletions while the API promises those values.
func BenchmarkFloor(b *testing.B) {
	frame := strings.Repeat("x", 330) // the default result template, filled
	b.Run("text", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			args := map[string]any{}
			args["city"] = textCall[64:69]
			chain := mcs.CloneArgs(args)
			var sb strings.Builder
			sb.Grow(len(frame) + 8)
			sb.WriteString(frame)
			sb.WriteString("sunny")
			msgs := make([]map[string]any, 0, 2)
			msgs = append(msgs, map[string]any{"role": "assistant", "content": textCall},
				map[string]any{"role": "user", "content": sb.String()})
			floorSink, floorSink = msgs, chain
		}
	})
	b.Run("chat", func(b *testing.B) {
		tc := map[string]any{"id": "call_abc123", "type": "function"}
		b.ReportAllocs()
		for b.Loop() {
			args := map[string]any{}
			args["city"] = textCall[64:69]
			chain := mcs.CloneArgs(args)
			msgs := make([]map[string]any, 0, 2)
			msgs = append(msgs, map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{tc}},
				map[string]any{"role": "tool", "tool_call_id": "call_abc123", "content": "sunny"})
			floorSink, floorSink = msgs, chain
		}
	})
}
