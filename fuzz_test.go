package mcs_test

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
)

// FuzzProcessLLMResponse feeds random replies, as text and as JSON bytes: processing
// never panics and never executes a tool the driver does not list.
func FuzzProcessLLMResponse(f *testing.F) {
	for _, s := range []string{
		`{"tool": "echo", "arguments": {"text": "hi"}}`,
		"```json\n{'tool': 'add', 'arguments': {'a': 1, 'b': 2,},}\n```",
		`{"tool": "rm_rf", "arguments": {}}`,
		`prose { with "braces" } and {"name": "echo"}`,
		`{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"echo","arguments":"{}"}}]}`,
		`{"output":[{"type":"function_call","call_id":"c","name":"delete_all","arguments":"{}"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"echo","input":{}}]}`,
		`{"role":"model","parts":[{"functionCall":{"name":"echo","args":{}}}]}`,
		"{\"tool\": \"echo\" // comment\n}",
		`{{{{{{{{"tool":"echo"}`,
	} {
		f.Add(s)
	}
	listed := map[string]bool{"add": true, "echo": true, "fail": true, "boom": true}
	f.Fuzz(func(t *testing.T, reply string) {
		var ran []string
		guard := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			ran = append(ran, name)
			return next(ctx, name, args)
		})
		d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(guard))
		for _, in := range []any{reply, []byte(reply)} {
			r := d.ProcessLLMResponse(context.Background(), in)
			for _, c := range r.Calls {
				if !listed[c.Name] {
					t.Fatalf("executed unlisted tool %q from %q", c.Name, reply)
				}
			}
			if (r.Calls == nil) != (r.Messages == nil) {
				t.Fatalf("Calls and Messages disagree: %+v", r)
			}
			if r.CallFailed && r.RetryPrompt == "" {
				t.Fatalf("failed without a retry prompt: %+v", r)
			}
		}
		for _, name := range ran {
			if !listed[name] {
				t.Fatalf("middleware saw unlisted tool %q", name)
			}
		}
		// The same reply streamed byte by byte must not panic either.
		if utf8.ValidString(reply) {
			buf := d.NewStreamBuffer()
			for i := range len(reply) {
				buf.Add(reply[i : i+1])
				r := d.ProcessStream(context.Background(), buf)
				for _, c := range r.Calls {
					if !listed[c.Name] {
						t.Fatalf("stream executed unlisted tool %q", c.Name)
					}
				}
				buf.Text()
			}
			buf.Finish()
			d.ProcessStream(context.Background(), buf)
			buf.Text()
		}
	})
}
