package mcs_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
)

// hostileTexts returns replies of n bytes built to defeat a naive scanner. The text
// decoder must stay linear on each: compare the 64 KiB and 256 KiB runs of
// BenchmarkStreamHostile and BenchmarkProcessHostile (4 times the bytes, about 4
// times the time).
func hostileTexts(n int) map[string]string {
	fill := func(unit string) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }
	return map[string]string{
		// every brace opens a candidate that the next byte refutes
		"braces": fill("{"),
		// one endless run of backticks, then fences opening and closing
		"backticks": fill("`"),
		"fences":    fill("```\n"),
		// keys that are quoted strings holding braces and the other quote
		"quoted-keys": fill(`{"{'`),
		// braces in comments and quoted keys before the first key, refuted far away
		"comment-braces": fill("{/*")[:n-3] + "*/!",
		"key-braces":     fill(`{"{`)[:n-2] + `"!`,
		// a fence that never closes, full of complete foreign calls
		"fenced-calls": "```json\n" + fill(`{"tool":"web_search"}` + "\n")[:n-8],
		// an owned call whose arguments nest without end, never closed
		"nested-unclosed": `{"tool":"echo","arguments":{"a":` + fill("[")[:n-32],
		// objects that open and never close: Finish restarts a bounded number of times
		"unclosed-objects": fill(`{"a": {"b": `),
		// many complete foreign calls that are not JSON even after repair
		"foreign-malformed": fill(`{"tool":"web_search","arguments":{"a" "b"}} `),
		// prose that looks like objects with bare keys and apostrophes
		"prose-keys": fill(`{note: it's x} `),
		// an owned malformed call holds display; many owned calls run behind it
		"owned-behind-hold": `{"tool":"echo" "x"} ` + fill(`{"tool":"echo"} `)[:n-20],
	}
}

// BenchmarkStreamHostile streams each hostile text in 16-byte chunks, with
// ProcessStream and Text after every chunk and a final Finish round.
func BenchmarkStreamHostile(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{64 << 10, 256 << 10} {
		texts := hostileTexts(n)
		for _, name := range slices.Sorted(maps.Keys(texts)) {
			text := texts[name]
			chunks := textChunksString(text, 16)
			b.Run(fmt.Sprintf("%s/N=%dKiB", name, n>>10), func(b *testing.B) {
				d := mcs.NewBaseDriver(&calcDriver{})
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					buf := d.NewStreamBuffer()
					for _, c := range chunks {
						buf.Add(c)
						d.ProcessStream(ctx, buf)
						buf.Text()
					}
					buf.Finish()
					d.ProcessStream(ctx, buf)
					buf.Text()
				}
			})
		}
	}
}

// BenchmarkProcessHostile processes each hostile text whole.
func BenchmarkProcessHostile(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{64 << 10, 256 << 10} {
		texts := hostileTexts(n)
		for _, name := range slices.Sorted(maps.Keys(texts)) {
			text := texts[name]
			b.Run(fmt.Sprintf("%s/N=%dKiB", name, n>>10), func(b *testing.B) {
				d := mcs.NewBaseDriver(&calcDriver{})
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					d.ProcessLLMResponse(ctx, text)
				}
			})
		}
	}
}

// BenchmarkStreamNativeCalls streams a Chat Completions message with one foreign
// call per chunk: the per-chunk cost must not grow with the calls seen so far.
func BenchmarkStreamNativeCalls(b *testing.B) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		n    int
	}{{"web_search", 4096}, {"web_search", 16384}, {"", 4096}, {"", 16384}} {
		n := tc.n
		chunks := make([]map[string]any, n)
		for i := range chunks {
			fn := map[string]any{"arguments": `{}`}
			if tc.name != "" {
				fn["name"] = tc.name
			}
			chunks[i] = map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{"tool_calls": []any{
				map[string]any{"index": float64(i), "id": fmt.Sprint("c", i), "function": fn}}}}}}
		}
		label := fmt.Sprintf("calls=%d", n)
		if tc.name == "" {
			label = fmt.Sprintf("unnamed=%d", n) // a name that never comes holds the stream: each chunk must not copy every later call
		}
		b.Run(label, func(b *testing.B) {
			d := mcs.NewBaseDriver(&calcDriver{})
			b.ReportAllocs()
			for b.Loop() {
				buf := d.NewStreamBuffer()
				for _, c := range chunks {
					buf.Add(c)
					d.ProcessStream(ctx, buf)
					buf.Text()
				}
				buf.Finish()
				d.ProcessStream(ctx, buf)
			}
		})
	}
}
