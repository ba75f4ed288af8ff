package mcs

import "context"

// CallNext continues a tool call: it runs the rest of the middleware chain and, at
// its end, the driver's tool execution.
type CallNext func(ctx context.Context, name string, args map[string]any) (any, error)

// ToolMiddleware intercepts the tool calls of one driver. It receives the pending
// call and next, the continuation, and may observe the call, rewrite its name or
// arguments before calling next, short-circuit by returning without calling next, or
// catch an error from next and return a result instead.
//
// Middleware carries configuration, not per-call state: one instance may serve many
// drivers at once, so implementations must be safe for concurrent use. Middleware
// must not mutate args in place; to rewrite, pass a new map to next.
type ToolMiddleware interface {
	// OnExecuteTool handles one call; next continues it.
	OnExecuteTool(ctx context.Context, name string, args map[string]any, next CallNext) (any, error)
}

// ToolMiddlewareFunc adapts an ordinary function to [ToolMiddleware].
type ToolMiddlewareFunc func(ctx context.Context, name string, args map[string]any, next CallNext) (any, error)

// OnExecuteTool calls f(ctx, name, args, next).
func (f ToolMiddlewareFunc) OnExecuteTool(ctx context.Context, name string, args map[string]any, next CallNext) (any, error) {
	return f(ctx, name, args, next)
}

var _ ToolMiddleware = ToolMiddlewareFunc(nil)

// Chain wraps terminal in mw and returns the resulting continuation. mw[0] is
// outermost: it sees the call first and the result last. Nil entries are skipped.
// Chain builds the closures once; calling the result allocates nothing of its own,
// so build a chain when the middleware list changes, not per call. The result is
// safe for concurrent use when terminal and every middleware are.
func Chain(terminal CallNext, mw ...ToolMiddleware) CallNext {
	next := terminal
	for i := len(mw) - 1; i >= 0; i-- {
		m := mw[i]
		if m == nil {
			continue
		}
		inner := next
		if f, ok := m.(ToolMiddlewareFunc); ok {
			// call the function directly: one frame less per layer
			next = func(ctx context.Context, name string, args map[string]any) (any, error) {
				return f(ctx, name, args, inner)
			}
			continue
		}
		next = func(ctx context.Context, name string, args map[string]any) (any, error) {
			return m.OnExecuteTool(ctx, name, args, inner)
		}
	}
	return next
}
