package permission_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/hooks"
	"github.com/mcs-go/mcs/middleware/permission"
)

// BenchmarkStacked measures the overhead of the three concerns stacked in the
// recommended order (hooks with one no-op pre and post hook, permission with an
// always-allow handler, auth) around a trivial tool, against the bare chain.
//
// "stacked" and "stacked_cancellable" ask on the calling goroutine (no timeout;
// a context that cannot end and one that can); "stacked_timeout" takes the path
// that runs the handler on its own goroutine; in "stacked_rule_allow_cancellable"
// an Allow rule decides and no handler runs.
func BenchmarkStacked(b *testing.B) {
	terminal := func(context.Context, string, map[string]any) (any, error) { return "ok", nil }
	args := map[string]any{"path": "notes.txt", "limit": 10.0}
	stack := func(opts ...permission.Option) []mcs.ToolMiddleware {
		return []mcs.ToolMiddleware{
			hooks.New(
				hooks.WithPre(func(context.Context, string, map[string]any) {}),
				hooks.WithPost(func(context.Context, string, map[string]any, any) {}),
			),
			permission.New(allowAll, opts...),
			auth.New(),
		}
	}
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	cases := []struct {
		name string
		ctx  context.Context
		mw   []mcs.ToolMiddleware
	}{
		{"bare", context.Background(), nil},
		{"stacked", context.Background(), stack()},
		{"stacked_timeout", context.Background(), stack(permission.WithTimeout(time.Minute))},
		{"stacked_cancellable", cancellable, stack()},
		{"stacked_rule_allow_cancellable", cancellable, stack(permission.WithRules(permission.Allow("read_*")))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			call := mcs.Chain(terminal, c.mw...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(c.ctx, "read_file", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApprovalsAllowed measures a call an Allow rule decides with approvals
// configured, and proves that it never reaches the store: the store counts its
// accesses, and any is a failure.
func BenchmarkApprovalsAllowed(b *testing.B) {
	store := &countingStore{Store: approvals.NewMemoryStore()}
	m := permission.New(nil, permission.WithRules(permission.Allow("read_*")), permission.WithApprovals(store, time.Hour))
	call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return "ok", nil }, m)
	args := map[string]any{"path": "notes.txt"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := call(ctx, "read_file", args); err != nil {
			b.Fatal(err)
		}
	}
	if n := store.n.Load(); n != 0 {
		b.Fatalf("%d store accesses for allowed calls, want none", n)
	}
}
