package hooks_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/hooks"
)

// BenchmarkHooks measures the hooks middleware around a trivial tool: the bare
// chain, a middleware without hooks, one no-op pre and post hook, and the slog
// audit trail writing to a discarding handler.
func BenchmarkHooks(b *testing.B) {
	terminal := func(context.Context, string, map[string]any) (any, error) { return "ok", nil }
	args := map[string]any{"path": "notes.txt", "limit": 10.0}
	cases := []struct {
		name string
		mw   []mcs.ToolMiddleware
	}{
		{"bare", nil},
		{"no_hooks", []mcs.ToolMiddleware{hooks.New()}},
		{"pre_post", []mcs.ToolMiddleware{hooks.New(
			hooks.WithPre(func(context.Context, string, map[string]any) {}),
			hooks.WithPost(func(context.Context, string, map[string]any, any) {}),
		)}},
		{"slog_audit", []mcs.ToolMiddleware{hooks.New(hooks.WithSet(hooks.SlogAudit(slog.New(slog.DiscardHandler))))}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			call := mcs.Chain(terminal, c.mw...)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(ctx, "read_file", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
