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

// ToolHider is an optional interface of a [ToolMiddleware] that refuses some
// tools whatever the call (a permission Deny rule). BaseDriver leaves out of
// ListTools, and so out of its prompts and native tool objects and out of every
// listing built on them (an orchestrator's, an MCP server's), each tool for which
// a middleware of its chain reports true. info is what the chain would see for a
// call of the tool: Driver, Label (from ctx, as the orchestrator above sets it
// when it lists), Tool and Route; CallID is "".
//
// Hiding only shortens listings: a call of a hidden tool by its name still runs
// through the chain and gets the middleware's answer. HidesTool is asked as if the
// call reached the middleware unchanged, so it must report true only for tools it
// refuses whatever the arguments, the label of a later call and any answer of a
// user; when unsure, false. It must be cheap and safe for concurrent use; a panic
// counts as false.
//
// A [ToolDriver] may implement ToolHider too, for the tools it runs but leaves out
// of its listing: [BaseDriver] does, and an orchestrator asks each registered driver
// that does about the tools it lists under a [ContextWithHiddenTools] context.
type ToolHider interface {
	HidesTool(ctx context.Context, info CallInfo) bool
}

type hiddenToolsKey struct{}

// ContextWithHiddenTools returns a copy of ctx under which [BaseDriver.ListTools]
// lists the tools it hides too. An orchestrator lists its drivers so: it knows
// every tool a driver runs, routes a call of a hidden one to the driver (which
// answers it, with a denial, rather than "unknown tool", and which no other
// driver's tool of the same name takes the place of), and leaves out of its own
// listing the tools a driver's HidesTool reports.
func ContextWithHiddenTools(ctx context.Context) context.Context {
	return context.WithValue(ctx, hiddenToolsKey{}, true)
}

// listsHidden reports whether ctx comes from ContextWithHiddenTools.
func listsHidden(ctx context.Context) bool {
	v, _ := ctx.Value(hiddenToolsKey{}).(bool)
	return v
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
