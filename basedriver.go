package mcs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// InstructionProvider is an optional interface of a [ToolDriver] that contributes
// instructions to the system message (an orchestrator's pagination hint, for
// example). BaseDriver appends non-empty instructions, after a blank line, to the
// system message it generates, both the text and the native one.
type InstructionProvider interface {
	Instructions(ctx context.Context) string
}

// PanicError is the error of a call during which a tool or a middleware panicked.
// The panic is recovered; it never crashes the host.
//
// It is the one panic error of the module: the orchestrator reports a panic of a
// driver's ListTools or of a strategy with it too, with Op set and Tool empty.
type PanicError struct {
	Tool  string // the tool name the call was made with; "" when no call was running
	Op    string // what panicked when Tool is "", such as "ListTools" or "the strategy"
	Value any    // the value passed to panic
	Stack []byte // the stack of the panicking goroutine, for logs; never in Error
}

// Error returns a message that names the tool (or Op) and the panic value; never
// the stack, which holds source paths.
func (e *PanicError) Error() string {
	if e.Tool == "" {
		op := e.Op
		if op == "" {
			op = "the driver"
		}
		return fmt.Sprintf("%s panicked: %v", op, e.Value)
	}
	return fmt.Sprintf("tool %q panicked: %v", e.Tool, e.Value)
}

// BaseDriver is the LLM-facing half shared by every hybrid driver: it turns a
// [ToolDriver] into a complete driver that writes prompts, recognises the model's
// wire format, extracts calls, runs each owned call through its middleware chain and
// shapes the history. Concrete drivers embed *BaseDriver and write only the
// ToolDriver half.
//
// *BaseDriver implements Driver, ToolDriver, SupportsNativeTools, SupportsStreaming
// and SupportsToolMiddleware. It keeps no conversation state and is safe for
// concurrent use, including AddMiddleware while calls run.
//
// A driver that embeds *BaseDriver and adds optional contracts (such as
// SupportsHealthcheck) should override Meta to derive its flags from itself:
//
//	func (d *Driver) Meta() mcs.Meta { return mcs.DeriveCapabilities(d.BaseDriver.Meta(), d) }
type BaseDriver struct {
	td        ToolDriver
	opts      Options
	ps        PromptStrategy
	formats   []WireFormat
	streaming []StreamingFormat // the formats of formats that stream, guarded
	text      *textFormat       // the first text format among formats; nil for none
	terminal  CallNext

	metaOnce sync.Once
	meta     Meta

	mu    sync.Mutex // serialises AddMiddleware
	chain atomic.Pointer[chainState]
}

type chainState struct {
	mw     []ToolMiddleware
	call   CallNext
	hiders []ToolHider // the middleware of mw that implement ToolHider
}

// newChain returns the chain of mw around terminal.
func newChain(terminal CallNext, mw []ToolMiddleware) *chainState {
	c := &chainState{mw: mw, call: Chain(terminal, mw...)}
	for _, m := range mw {
		if h, ok := m.(ToolHider); ok {
			c.hiders = append(c.hiders, h)
		}
	}
	return c
}

var (
	_ Driver                 = (*BaseDriver)(nil)
	_ ToolDriver             = (*BaseDriver)(nil)
	_ SupportsNativeTools    = (*BaseDriver)(nil)
	_ SupportsStreaming      = (*BaseDriver)(nil)
	_ SupportsToolMiddleware = (*BaseDriver)(nil)
)

// NewBaseDriver returns a BaseDriver over td configured by opts. It panics when td
// is nil, which is a programming error.
func NewBaseDriver(td ToolDriver, opts ...Option) *BaseDriver {
	if td == nil {
		panic("mcs: NewBaseDriver called with a nil ToolDriver")
	}
	b := &BaseDriver{td: td}
	for _, o := range opts {
		if o != nil {
			o(&b.opts)
		}
	}
	b.ps = b.opts.PromptStrategy
	if b.ps == nil {
		b.ps = DefaultPromptStrategy()
	}
	b.formats = b.opts.Formats
	if len(b.formats) == 0 {
		b.formats = DefaultFormats(b.ps)
	}
	for _, f := range b.formats {
		if tf, ok := f.(textFormat); ok && b.text == nil {
			b.text = &tf
		}
		if sf, ok := f.(StreamingFormat); ok {
			b.streaming = append(b.streaming, guardFormat(sf))
		}
	}
	b.terminal = td.ExecuteTool
	mw := append([]ToolMiddleware(nil), b.opts.Middleware...)
	b.chain.Store(newChain(b.terminal, mw))
	return b
}

// Wraps reports whether td is the ToolDriver b was built over, or is wrapped by it
// further down: when that tool driver has a method Wraps(ToolDriver) bool itself
// (another BaseDriver, an orchestrator), it is asked in turn. It answers the
// question a composition needs (would registering b inside td make a cycle?)
// without handing out the tool driver: a caller that held it could run its tools
// around b's middleware.
func (b *BaseDriver) Wraps(td ToolDriver) bool {
	if td == nil {
		return false
	}
	if sameDriver(b.td, td) {
		return true
	}
	if w, ok := b.td.(ToolDriverWrapper); ok {
		return w.Wraps(td)
	}
	return false
}

// sameDriver reports whether a and b are the same driver value. Unlike a == b it
// never panics, even for driver types that are not comparable.
func sameDriver(a, b ToolDriver) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// PromptStrategy returns the driver's prompt codec.
func (b *BaseDriver) PromptStrategy() PromptStrategy { return b.ps }

// Options returns a copy of the options the driver was built with. Middleware lists
// the middleware installed now, including AddMiddleware's.
func (b *BaseDriver) Options() Options {
	o := b.opts
	o.Middleware = b.Middleware()
	o.Formats = b.Formats()
	return o
}

// Formats returns a copy of the driver's chain of wire formats, in the order they
// are asked: those of WithFormats, or the default chain. A client that answers the
// calls a driver did not own (see [Response.Foreign]) finds the format named by
// [Response.Format] here.
func (b *BaseDriver) Formats() []WireFormat {
	return append([]WireFormat(nil), b.formats...)
}

// Middleware returns a copy of the middleware chain, outermost first.
func (b *BaseDriver) Middleware() []ToolMiddleware {
	return append([]ToolMiddleware(nil), b.chain.Load().mw...)
}

// Meta returns the tool driver's meta with its flags derived by
// [DeriveCapabilities] from *BaseDriver: standalone, orchestratable, native_tools,
// streaming and tool_middleware are added, and a flag of a contract *BaseDriver does
// not implement is dropped (healthcheck of a tool driver that has one: a driver that
// embeds *BaseDriver and forwards Healthcheck derives its meta from itself, see
// above). SupportedLLMs is ["*"] when the tool driver names none. The installed
// middleware never appears in it.
func (b *BaseDriver) Meta() Meta {
	out := b.sharedMeta()
	out.Bindings = append([]Binding(nil), b.meta.Bindings...)
	out.SupportedLLMs = append([]string(nil), b.meta.SupportedLLMs...)
	out.Capabilities = append([]Capability(nil), b.meta.Capabilities...)
	return out
}

// sharedMeta returns the meta computed once; its slices are shared, not copied.
func (b *BaseDriver) sharedMeta() Meta {
	b.metaOnce.Do(func() {
		m := DeriveCapabilities(b.td.Meta(), b)
		if len(m.SupportedLLMs) == 0 {
			m.SupportedLLMs = []string{"*"}
		}
		b.meta = m
	})
	return b.meta
}

// AddMiddleware appends mw innermost: after the middleware installed so far, closest
// to the tool. It takes effect for the next call; calls already running finish with
// the chain they started with. Safe for concurrent use. Nil entries are ignored.
func (b *BaseDriver) AddMiddleware(mw ...ToolMiddleware) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.chain.Load()
	list := append([]ToolMiddleware(nil), cur.mw...)
	for _, m := range mw {
		if m != nil {
			list = append(list, m)
		}
	}
	b.chain.Store(newChain(b.terminal, list))
}

// ListTools returns the tool driver's tools without those BaseDriver hides (see
// [BaseDriver.HidesTool]); under a context from [ContextWithHiddenTools], all of
// them.
func (b *BaseDriver) ListTools(ctx context.Context) ([]Tool, error) {
	tools, err := b.td.ListTools(ctx)
	if err != nil || listsHidden(ctx) {
		return tools, err
	}
	return b.visible(ctx, tools), nil
}

var _ ToolHider = (*BaseDriver)(nil)

// HidesTool reports whether ListTools leaves the tool of info out: a middleware
// of the chain hides it (see [ToolHider]), or the tool driver does, when it is a
// ToolHider itself (an orchestrator asks its drivers so). info.Tool is the tool's
// definition as listed, and info.Label the label the driver is registered under;
// Driver and Route are set to this driver's own. A call of a hidden tool still runs
// through the chain. Safe for concurrent use.
func (b *BaseDriver) HidesTool(ctx context.Context, info CallInfo) bool {
	info.Driver, info.Route, info.CallID = b.sharedMeta(), b.route(ctx, info.Tool.Name), ""
	return b.hides(ctx, b.chain.Load().hiders, info)
}

// hides reports whether a middleware of hiders or the tool driver hides the tool
// of info.
func (b *BaseDriver) hides(ctx context.Context, hiders []ToolHider, info CallInfo) bool {
	if hidden(ctx, hiders, info) {
		return true
	}
	if h, ok := b.td.(ToolHider); ok {
		return hidden(ctx, []ToolHider{h}, info)
	}
	return false
}

// visible returns tools without those b hides; tools itself, which may be the tool
// driver's own slice, is never modified.
func (b *BaseDriver) visible(ctx context.Context, tools []Tool) []Tool {
	hiders := b.chain.Load().hiders
	if _, ok := b.td.(ToolHider); (len(hiders) == 0 && !ok) || len(tools) == 0 {
		return tools
	}
	outer, _ := CallInfoFromContext(ctx)
	info := CallInfo{Driver: b.sharedMeta(), Label: outer.Label}
	var out []Tool // nil until a tool is hidden
	for i := range tools {
		info.Tool, info.Route = tools[i], b.route(ctx, tools[i].Name)
		if !b.hides(ctx, hiders, info) {
			if out != nil {
				out = append(out, tools[i])
			}
			continue
		}
		if out == nil {
			out = make([]Tool, i, len(tools)-1)
			copy(out, tools[:i])
		}
	}
	if out == nil {
		return tools
	}
	return out
}

// hidden reports whether one of hiders hides the tool of info; a panic counts as
// not hidden (a call still meets the middleware).
func hidden(ctx context.Context, hiders []ToolHider, info CallInfo) (hide bool) {
	defer func() {
		if recover() != nil {
			hide = false
		}
	}()
	for _, h := range hiders {
		if h.HidesTool(ctx, info) {
			return true
		}
	}
	return false
}

// route returns where the tool driver passes a call of name on, when it is a
// ToolRouter that can tell.
func (b *BaseDriver) route(ctx context.Context, name string) ToolRoute {
	if r, ok := b.td.(ToolRouter); ok {
		if route, ok := r.RouteTool(ctx, name); ok {
			return route
		}
	}
	return ToolRoute{}
}

// ExecuteTool runs the named tool through the middleware chain and the tool driver.
// Every call goes through the chain, whether it comes from ProcessLLMResponse or from
// outside (an orchestrator), so a consent policy on the driver always applies. A nil
// args is passed on as an empty map. A panic in a middleware or the tool is returned
// as a *PanicError.
//
// Before the chain runs, ctx gains a [CallInfo] with this driver's Meta, the tool's
// definition and, for a [ToolRouter], the route; Label and CallID are kept from a
// CallInfo already in ctx.
func (b *BaseDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			result, err = nil, &PanicError{Tool: name, Value: v, Stack: debug.Stack()}
		}
	}()
	info, _ := CallInfoFromContext(ctx)
	return b.execute(ctx, info, name, args, nil)
}

// execute runs the chain with info completed by this driver's meta and the tool's
// definition; a panic is the caller's to recover. The call's context is built in
// slot when it is not nil (so that it shares an allocation with the caller's
// records), in a new value otherwise.
func (b *BaseDriver) execute(ctx context.Context, info CallInfo, name string, args map[string]any, slot *callInfoCtx) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	info.Driver = b.sharedMeta()
	info.Tool = lookupTool(ctx, b.td, name)
	info.Route = b.route(ctx, name)
	if slot == nil {
		slot = new(callInfoCtx)
	}
	*slot = callInfoCtx{Context: ctx, info: info}
	return b.chain.Load().call(slot, name, args)
}

// safeExecute is ExecuteTool for a call of a reply, with its provider call id.
func (b *BaseDriver) safeExecute(ctx context.Context, callID, name string, args map[string]any, slot *callInfoCtx) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			result, err = nil, &PanicError{Tool: name, Value: v, Stack: debug.Stack()}
		}
	}()
	info, _ := CallInfoFromContext(ctx)
	info.CallID = callID
	return b.execute(ctx, info, name, args, slot)
}

// FunctionDescription returns the tools (those ListTools returns, so without the
// hidden ones) rendered by the prompt codec, or the text set
// with WithToolDescription. model is not used by the default codec. An error of the
// tool driver's ListTools or an invalid tool is returned wrapped.
func (b *BaseDriver) FunctionDescription(ctx context.Context, model string) (string, error) {
	if b.opts.ToolDescription != "" {
		return b.opts.ToolDescription, nil
	}
	tools, err := b.validTools(ctx)
	if err != nil {
		return "", err
	}
	return b.ps.EncodeTools(tools)
}

func (b *BaseDriver) validTools(ctx context.Context) ([]Tool, error) {
	tools, err := b.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	for _, t := range tools {
		if err := t.Validate(); err != nil {
			return nil, err
		}
	}
	return tools, nil
}

// SystemMessage returns the codec's system template with the function description
// and the call example filled in, followed by the tool driver's instructions (see
// InstructionProvider); or the text set with WithSystemMessage.
func (b *BaseDriver) SystemMessage(ctx context.Context, model string) (string, error) {
	if b.opts.SystemMessage != "" {
		return b.opts.SystemMessage, nil
	}
	fd, err := b.FunctionDescription(ctx, model)
	if err != nil {
		return "", err
	}
	return b.withInstructions(ctx, b.ps.SystemMessage(fd)), nil
}

func (b *BaseDriver) withInstructions(ctx context.Context, msg string) string {
	if ip, ok := b.td.(InstructionProvider); ok {
		if extra := ip.Instructions(ctx); extra != "" {
			return msg + "\n\n" + extra
		}
	}
	return msg
}

// NativeToolContext returns, when the WithNativeTools predicate accepts model, the
// codec's native system message (plus instructions), or the text set with
// WithSystemMessage, and every tool as a [FunctionTool] built by NewFunctionTool.
// Otherwise it returns the full text system message (see SystemMessage) and nil
// Tools. An error of the tool driver's ListTools or an invalid tool is returned
// wrapped.
func (b *BaseDriver) NativeToolContext(ctx context.Context, model string) (NativeToolContext, error) {
	if b.opts.NativeTools == nil || !b.opts.NativeTools(model) {
		msg, err := b.SystemMessage(ctx, model)
		if err != nil {
			return NativeToolContext{}, err
		}
		return NativeToolContext{SystemMessage: msg}, nil
	}
	tools, err := b.validTools(ctx)
	if err != nil {
		return NativeToolContext{}, err
	}
	out := make([]FunctionTool, len(tools))
	for i, t := range tools {
		out[i] = NewFunctionTool(t)
	}
	msg := b.opts.SystemMessage
	if msg == "" {
		msg = b.withInstructions(ctx, b.ps.NativeSystemMessage())
	}
	return NativeToolContext{SystemMessage: msg, Tools: out}, nil
}

// ProcessLLMResponse recognises the format of response (formats asked in their
// fixed order), extracts every call, keeps the calls whose tool this driver lists,
// runs each in order through the middleware chain, and returns the Response.
//
// Calls of tools the driver does not publish never run: they are reported in
// Response.Foreign, in order, for the client to answer (a response with no owned
// call has no Calls and no Messages). Every call, owned or foreign, carries its
// Index among all calls of the output, and Response.Format names the format that
// recognised it. A tool error, a middleware error, malformed arguments or a panic
// become a failed CallRecord with a retry prompt; nothing escapes to the caller.
// When ctx is done, no further call starts and the remaining ones fail with ctx's
// error. Owned calls beyond the per-reply limit (see WithMaxCalls) fail without
// running and are answered in the history by one message; calls whose arguments
// are over the size limit (WithMaxArgumentBytes) fail without running; results
// enter the history cut to the size limit (WithMaxResultBytes). When the tool
// listing fails, so that the driver cannot tell its calls from others',
// Response.Unavailable says so, and the calls that could not be told apart are
// neither run nor reported as Foreign. A panic in a wire format is logged with
// slog.Default and gives the zero Response.
func (b *BaseDriver) ProcessLLMResponse(ctx context.Context, response any) Response {
	format, out, calls := b.extract(response)
	if format == nil || len(calls) == 0 {
		return Response{}
	}
	owned, foreign, err := b.owned(ctx, calls)
	if len(owned) == 0 {
		return Response{Foreign: foreign, Format: safeFormat(format), Unavailable: err}
	}
	resp := b.run(ctx, format, out, owned, 0)
	resp.Foreign, resp.Format, resp.Unavailable = foreign, safeFormat(format), err
	return resp
}

// extract finds the format that matches response and its calls, each with its
// Index. A panic in a format (or in marshalling a caller's value) is logged and
// gives nothing.
func (b *BaseDriver) extract(response any) (format WireFormat, out Output, calls []ToolCall) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("extracting the calls of an output", format, v)
			format, calls = nil, nil
		}
	}()
	out = NewOutput(response) // may marshal a caller's value
	for _, f := range b.formats {
		format = f
		if f.Match(out) {
			return f, out, extractIndexed(f, out)
		}
	}
	return nil, out, nil
}

// logPanic logs a recovered panic of user code (a format, a decoder) with its
// stack, on slog.Default.
func logPanic(doing string, s WireFormat, v any) {
	attrs := []any{"panic", fmt.Sprint(v), "stack", string(debug.Stack())}
	if s != nil {
		attrs = append(attrs, "format", safeFormat(s))
	}
	slog.Default().Error("mcs: recovered a panic while "+doing, attrs...)
}

// safeFormat returns s.Format(), or "" when s is nil or Format panics.
func safeFormat(s WireFormat) (name string) {
	defer func() { _ = recover() }()
	if s == nil {
		return ""
	}
	return s.Format()
}

// UnavailableError is the error of [Response.Unavailable]: the driver could not
// list its tools, so it could not tell which calls of a reply are its own.
type UnavailableError struct {
	Driver string // the Name of the driver's Meta
	Err    error  // why the tools could not be listed
}

// Error says which driver is unavailable and why.
func (e *UnavailableError) Error() string {
	return fmt.Sprintf("driver %q is unavailable: it cannot list its tools: %v", e.Driver, e.Err)
}

// Unwrap returns the listing's error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// owned splits calls into those whose tool the driver publishes and the foreign
// ones, each in order. When the tools cannot be listed (an error, or a panic in the
// tool driver) the calls that could not be judged are in neither, and err, an
// *UnavailableError, says why. owned reuses the backing array of calls (the calls
// are the caller's to reuse); foreign is allocated only when there is one.
func (b *BaseDriver) owned(ctx context.Context, calls []ToolCall) (out, foreign []ToolCall, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, foreign, err = nil, nil, b.unavailable(&PanicError{Op: "ListTools", Value: v, Stack: debug.Stack()})
		}
	}()
	// Filtering in place is safe: a foreign call is copied out before a later owned
	// call can overwrite its slot.
	out = calls[:0]
	keep := func(c ToolCall, mine bool) {
		if mine {
			out = append(out, c)
		} else {
			foreign = append(foreign, c)
		}
	}
	if tl, ok := b.td.(ToolLookup); ok {
		for _, c := range calls {
			has, lerr := tl.HasTool(ctx, c.Name)
			if lerr != nil {
				if err == nil {
					err = b.unavailable(lerr)
				}
				continue
			}
			keep(c, has)
		}
		return out, foreign, err
	}
	tools, lerr := b.td.ListTools(ctx)
	if lerr != nil {
		return nil, nil, b.unavailable(lerr)
	}
	if len(calls) > 1 && len(tools) > 1 {
		names := make(map[string]bool, len(tools))
		for i := range tools {
			names[tools[i].Name] = true
		}
		for _, c := range calls {
			keep(c, names[c.Name])
		}
		return out, foreign, nil
	}
	for _, c := range calls {
		mine := false
		for i := range tools {
			if tools[i].Name == c.Name {
				mine = true
				break
			}
		}
		keep(c, mine)
	}
	return out, foreign, nil
}

func (b *BaseDriver) unavailable(err error) error {
	if ue, ok := err.(*UnavailableError); ok {
		return ue
	}
	return &UnavailableError{Driver: b.td.Meta().Name, Err: err}
}

// ownsName reports whether the driver publishes name; err is set when that cannot
// be told.
func (b *BaseDriver) ownsName(ctx context.Context, name string) (bool, error) {
	out, _, err := b.owned(ctx, []ToolCall{{Name: name}})
	return len(out) == 1, err
}

// ErrTooManyCalls is wrapped by the error of a call beyond the per-reply limit
// (see [WithMaxCalls]); such a call never runs.
var ErrTooManyCalls = errors.New("too many tool calls in one reply")

// maxCalls returns the per-reply limit; -1 for none.
func (b *BaseDriver) maxCalls() int {
	switch n := b.opts.MaxCalls; {
	case n == 0:
		return DefaultMaxCalls
	case n < 0:
		return -1
	default:
		return n
	}
}

// run executes the owned calls in order and builds the Response. before is how
// many owned calls of the same output ran in earlier rounds (streaming), for the
// per-reply limit. The records report each call as extracted; the history gets
// the bounded form of each (arguments over the limit left out, results cut).
func (b *BaseDriver) run(ctx context.Context, f WireFormat, out Output, calls []ToolCall, before int) Response {
	var resp Response
	// answered is what the history answers: the records themselves until a call
	// is answered otherwise (a bounded result, arguments left out, a call over
	// the limit that the first one's answer covers); then a copy of its own.
	var answered []CallRecord
	same := true
	var slot *callInfoCtx // the context of the one call
	if len(calls) == 1 {
		// One call, the common case: record and the call's context in one
		// allocation. A tool may keep the context after it returns (a goroutine
		// it started): the slot is never reused.
		one := new(struct {
			rec [1]CallRecord
			ctx callInfoCtx
		})
		resp.Calls, slot = one.rec[:0], &one.ctx
	} else {
		resp.Calls = make([]CallRecord, 0, len(calls))
	}
	lim := b.callLimits(f, before)
	var big []int // the calls whose arguments are over the limit
	for i, c := range calls {
		rec := CallRecord{ToolCall: c}
		over, answer := lim.overCalls(c, i)
		var tooLarge error
		if over == nil {
			tooLarge = lim.argumentsError(c)
		}
		switch {
		case over != nil:
			rec.Err = over
		case c.Err != nil:
			rec.Err = c.Err
		case tooLarge != nil:
			rec.Err = tooLarge
			big = append(big, i)
		case ctx.Err() != nil:
			rec.Err = fmt.Errorf("call to %q not started: %w", c.Name, context.Cause(ctx))
		default:
			// The chain gets its own copy: a tool that changes nested arguments
			// changes neither the record nor the history.
			rec.Result, rec.Err = b.safeExecute(ctx, c.ID, c.Name, CloneArgs(c.Arguments), slot)
		}
		if rec.Err != nil {
			rec.Result = nil
		}
		ans := rec
		changed := false
		if tooLarge != nil {
			ans.Arguments, ans.ToolCall.Err = map[string]any{}, rec.Err // out of the history
			changed = true
		}
		changed = lim.boundOutcome(&ans) || changed // what enters the history
		if rec.Err != nil {
			resp.CallFailed = true
			if resp.RetryPrompt == "" {
				resp.RetryPrompt = b.ps.RetryPrompt(c.Name, ans.Err.Error())
			}
		} else {
			resp.CallExecuted = true
		}
		resp.Calls = append(resp.Calls, rec)
		if same && (changed || !answer) {
			same = false
			answered = append(make([]CallRecord, 0, len(calls)), resp.Calls[:len(resp.Calls)-1]...)
		}
		if !same && answer {
			answered = append(answered, ans)
		}
	}
	if same {
		answered = resp.Calls
	}
	if len(big) > 0 && lim.text {
		out.Text = textWithout(out.Text, calls, big, lim.args)
	}
	func() {
		defer func() {
			if v := recover(); v != nil {
				logPanic("shaping the history of an output", f, v)
				resp.Messages = nil
			}
		}()
		resp.Messages = f.History(out, answered)
	}()
	return resp
}
