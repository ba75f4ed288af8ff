package mcs

import (
	"context"
	"errors"
)

// ErrUnknownTool is wrapped by the error of a call whose tool name the driver does
// not publish. Every driver of this module and the orchestrator wrap it, so that
// errors.Is(rec.Err, mcs.ErrUnknownTool) works whatever the client holds.
var ErrUnknownTool = errors.New("unknown tool")

// CallInfo describes the call a middleware is running. BaseDriver puts it in the
// context before its chain runs, so middleware shared by several drivers can tell
// them apart, and audit records and traces can name the driver, the call id and the
// tool's definition. Fields may be added.
type CallInfo struct {
	// Driver is the meta of the driver whose chain is running.
	Driver Meta
	// Label is the orchestrator label of that driver; "" when the call was not routed
	// to it by an orchestrator.
	Label string
	// Tool is the called tool's definition; only Name is set when the driver does not
	// list the tool (the call will fail as unknown).
	Tool Tool
	// CallID is the provider's call id; "" for calls parsed from text and for calls
	// made directly through ExecuteTool.
	CallID string
	// Route is where the driver whose chain is running passes the call on, when it
	// is a [ToolRouter] (an orchestrator that namespaces its names) and can tell:
	// the label of the driver the call reaches and the name that driver is called
	// with. It is the zero ToolRoute for a driver that runs its tools itself, and
	// for a name the router cannot place. Unlike Label, which the orchestrator
	// above sets, Route is the running driver's own answer, so a middleware on an
	// orchestrator's own chain learns the driver a call reaches before it is
	// routed, from the registrations rather than from the text of the name.
	Route ToolRoute
}

// ToolRoute is where a router passes a call: the Label of the driver it reaches
// and the Tool name that driver is called with.
type ToolRoute struct {
	Label string
	Tool  string
}

// ToolRouter is an optional interface of a [ToolDriver] that passes calls on to
// drivers it holds under labels (an orchestrator). RouteTool tells, without
// running anything, where a call of name would go; ok is false when name reaches
// none of those drivers (a tool of the router's own, an unknown name) or the
// router cannot tell (names that do not carry their driver's label). BaseDriver
// calls it to fill [CallInfo.Route] for every call and, when middleware hides
// tools (see [ToolHider]), for every listed tool, so it must be cheap; it must be
// safe for concurrent use.
type ToolRouter interface {
	RouteTool(ctx context.Context, name string) (route ToolRoute, ok bool)
}

type callInfoKey struct{}

// callInfoCtx carries a CallInfo in one allocation: the context and the value
// together. Value hands out a pointer to info, which nothing modifies.
type callInfoCtx struct {
	context.Context
	info CallInfo
}

func (c *callInfoCtx) Value(key any) any {
	if _, ok := key.(callInfoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// ContextWithCallInfo returns a copy of ctx that carries info. BaseDriver calls it
// before running its chain, keeping Label and CallID of a CallInfo already in ctx and
// setting Driver, Tool and Route to its own; an orchestrator calls it with the Label of the
// driver it routes to. Clients rarely need it, except to pass a call id to a direct
// ExecuteTool.
func ContextWithCallInfo(ctx context.Context, info CallInfo) context.Context {
	return &callInfoCtx{Context: ctx, info: info}
}

// CallInfoFromContext returns the CallInfo of the call ctx belongs to, and whether
// there is one. Inside a driver's middleware chain there always is. The slices of
// info.Driver are shared with the driver: read them, do not modify them.
func CallInfoFromContext(ctx context.Context) (CallInfo, bool) {
	if c, ok := ctx.(*callInfoCtx); ok {
		return c.info, true // the common case: no interface lookup
	}
	info, ok := ctx.Value(callInfoKey{}).(*CallInfo)
	if !ok {
		return CallInfo{}, false
	}
	return *info, true
}

// lookupTool returns the definition of name from td (see [ToolDefinition]), or a
// Tool with only Name set when td has none or cannot say.
func lookupTool(ctx context.Context, td ToolDriver, name string) Tool {
	if t, ok, err := ToolDefinition(ctx, td, name); err == nil && ok {
		return t
	}
	return Tool{Name: name}
}

// ExtractCalls returns every call-shaped entry of response, owned by anybody or
// nobody, in order, with the name of the wire format that recognised it ("" when
// none did). Each call has its name, its provider call id (native calls) and its
// arguments; a call that names a tool but cannot run as written (text that is not
// JSON even after repair, arguments that are not an object) has Err set. Calls in
// reasoning blocks are not calls and are not returned. Each call has its Index.
// With no formats it uses [DefaultFormats] over the default prompt strategy; nil
// entries are skipped.
//
// A client of one driver needs it not: [Response.Foreign] reports the calls the
// driver did not own. A client that offers one output to several drivers matches
// these calls by Index with the Calls of every driver's Response and answers the
// rest (a hallucinated tool must not become the final answer, and in native mode
// every call id must be answered, or the provider rejects the next request). It
// never panics; a panic in a format yields no calls.
func ExtractCalls(response any, formats ...WireFormat) (format string, calls []ToolCall) {
	if len(formats) == 0 {
		formats = DefaultFormats(nil)
	}
	defer func() {
		if recover() != nil {
			format, calls = "", nil
		}
	}()
	reply := NewOutput(response)
	for _, f := range formats {
		if f != nil && f.Match(reply) {
			return f.Format(), extractIndexed(f, reply)
		}
	}
	return "", nil
}

// extractIndexed returns f's calls of out, each with its Index among them.
func extractIndexed(f WireFormat, out Output) []ToolCall {
	calls := f.Extract(out)
	for i := range calls {
		calls[i].Index = i
	}
	return calls
}
