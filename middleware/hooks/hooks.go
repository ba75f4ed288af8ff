// Package hooks observes the tool calls of a driver: pre hooks run before a call,
// post hooks after it succeeded and failure hooks after it failed.
//
// Hooks observe; they cannot change a call. Each hook receives its own deep copy of
// the arguments, so nothing a hook does to them reaches the tool or another hook,
// and each post hook receives its own deep copy of the result, so the caller gets
// the result exactly as the tool returned it. A hook that panics is recovered and
// reported (see [WithPanicHandler]); an observer never breaks a call.
//
// Install the [Middleware] on any driver that accepts tool middleware. When it is
// combined with the other concerns, the recommended order is hooks, permission,
// auth, so that the hooks see every call, including the ones the permission
// middleware denies and the ones that end in an authentication challenge:
//
//	d := mcs.NewBaseDriver(td, mcs.WithMiddleware(
//		hooks.New(hooks.WithSet(hooks.SlogAudit(logger))),
//		permission.New(permission.Prompt(os.Stdin, os.Stdout)),
//		auth.New(),
//	))
//
// Two ready-made hook sets write an audit trail with one record per call:
// [SlogAudit] to a [log/slog] logger and [OpenAuditFile] to a JSON-lines file.
//
// # The contract
//
// The hooks concern has a contract, [SupportsHooks], and a capability flag,
// [Capability]. The [Middleware] is one implementation of the contract; a driver
// author may build the concern into a driver instead: the driver implements
// SupportsHooks (AddPre, AddPost and AddFailure, each returning the function that removes the hook) and declares Capability in its Meta, and a client finds
// it with a type assertion. A driver that only has the Middleware configured
// implements neither and does not list the flag: which middleware runs is
// configuration the client applied, not a property of the driver, and the client
// that built the Middleware holds it.
package hooks

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/internal/clone"
)

// Capability is the capability flag of the hooks concern, whose contract is
// [SupportsHooks].
const Capability mcs.Capability = "hooks"

// SupportsHooks is the contract of the hooks concern. An implementation runs the
// pre hooks installed on it before every tool call, and after the call the post
// hooks when it succeeded or the failure hooks when it failed, each kind in the
// order it was installed; each Add method returns the function that removes the
// hook again. [Middleware] implements it. A driver may build the concern in
// instead, and then also declares [Capability] in its Meta; a driver that merely
// has the middleware configured does neither (see the package documentation).
type SupportsHooks interface {
	AddPre(f PreHook) (remove func())
	AddPost(f PostHook) (remove func())
	AddFailure(f FailureHook) (remove func())
}

// PreHook observes a call before it runs. args is the hook's own deep copy of the
// call's arguments; the hook may keep it.
type PreHook func(ctx context.Context, name string, args map[string]any)

// PostHook observes a call that succeeded. args is the hook's own deep copy of the
// arguments as the call received them and result its own deep copy of the result
// the caller gets; the hook may keep both.
type PostHook func(ctx context.Context, name string, args map[string]any, result any)

// FailureHook observes a call that failed with err, which is the error the caller
// gets. args is the hook's own deep copy of the arguments as the call received
// them; the hook may keep it. When the rest of the chain (a later middleware or
// the tool) panicked, err holds an *[mcs.PanicError] with the panic's value and
// stack, and the panic continues with its value after the failure hooks ran, to
// the driver, which reports it the same way.
type FailureHook func(ctx context.Context, name string, args map[string]any, err error)

// ErrPanicked is wrapped by the error failure hooks receive when the rest of the
// chain panicked, as is the *mcs.PanicError that says more.
//
// Deprecated: use errors.As with *mcs.PanicError, or mcs.CodeOf(nil, err) ==
// mcs.CodePanic.
var ErrPanicked = errors.New("tool call panicked")

// Set is a group of hooks added and removed together, such as the pre, post and
// failure hook of an audit trail. Nil fields are skipped.
type Set struct {
	Pre     PreHook
	Post    PostHook
	Failure FailureHook
}

func (s Set) empty() bool { return s.Pre == nil && s.Post == nil && s.Failure == nil }

// entry is one installed Set; its address identifies it for removal.
type entry struct{ Set }

// state is an immutable snapshot of the installed hooks, in installation order.
type state struct {
	entries []*entry
	// lastPost and lastFailure index the last entry with a hook of that kind, -1
	// when there is none.
	lastPost, lastFailure int
}

func newState(entries []*entry) *state {
	s := &state{entries: entries, lastPost: -1, lastFailure: -1}
	for i, e := range entries {
		if e.Post != nil {
			s.lastPost = i
		}
		if e.Failure != nil {
			s.lastFailure = i
		}
	}
	return s
}

// argsFor returns the arguments for the hook at index i: a copy of snapshot, or
// snapshot itself for the last hook of its kind (i == last), after which no hook
// needs it.
func argsFor(snapshot map[string]any, i, last int) map[string]any {
	if i == last {
		return snapshot
	}
	return clone.Args(snapshot)
}

// PanicHandler receives the value of a recovered hook panic together with the call
// during which it happened and the stack of the panic.
type PanicHandler func(ctx context.Context, name string, value any, stack []byte)

// Option configures a [Middleware] built by [New].
type Option func(*config)

// config is what the options of [New] set.
type config struct {
	sets    []Set // in option order
	onPanic PanicHandler
}

// WithPre adds a pre hook; hooks given to New run in the order of the options.
// A nil f is ignored.
func WithPre(f PreHook) Option { return WithSet(Set{Pre: f}) }

// WithPost adds a post hook; hooks given to New run in the order of the options.
// A nil f is ignored.
func WithPost(f PostHook) Option { return WithSet(Set{Post: f}) }

// WithFailure adds a failure hook; hooks given to New run in the order of the
// options. A nil f is ignored.
func WithFailure(f FailureHook) Option { return WithSet(Set{Failure: f}) }

// WithSet adds the hooks of s, such as an audit trail from [SlogAudit].
func WithSet(s Set) Option {
	return func(c *config) { c.sets = append(c.sets, s) }
}

// WithPanicHandler sets the function that receives recovered hook panics. By
// default they are logged to [slog.Default] at error level. A panic in f itself is
// recovered and dropped.
func WithPanicHandler(f PanicHandler) Option {
	return func(c *config) { c.onPanic = f }
}

// Middleware runs hooks around every tool call. Build it with [New]; the zero
// Middleware has no hooks and is ready to use.
//
// For each call it takes a snapshot of the installed hooks, runs the pre hooks in
// order, then the rest of the chain; when that returns an error the failure hooks
// run in order and the error is returned unchanged, otherwise the post hooks run in
// order and the result is returned unchanged. Hooks added or removed while a call
// runs take effect from the next call.
//
// Middleware is safe for concurrent use and may be shared by many drivers. Hooks
// run on the calling goroutine and may run concurrently for concurrent calls; they
// may add or remove hooks, also their own, without deadlock.
type Middleware struct {
	mu      sync.Mutex // serialises writers of hooks
	hooks   atomic.Pointer[state]
	onPanic PanicHandler // set before the Middleware is shared
}

var (
	_ mcs.ToolMiddleware = (*Middleware)(nil)
	_ SupportsHooks      = (*Middleware)(nil)
)

// New returns a Middleware with the hooks of opts installed in option order.
func New(opts ...Option) *Middleware {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	m := &Middleware{onPanic: c.onPanic}
	for _, s := range c.sets {
		m.AddSet(s)
	}
	return m
}

// AddPre installs f after the pre hooks installed so far and returns the function
// that removes it. remove may be called any number of times, also from inside a
// hook and while calls run; a nil f gives a remove that does nothing.
func (m *Middleware) AddPre(f PreHook) (remove func()) { return m.AddSet(Set{Pre: f}) }

// AddPost installs f after the post hooks installed so far and returns the function
// that removes it; see [Middleware.AddPre].
func (m *Middleware) AddPost(f PostHook) (remove func()) { return m.AddSet(Set{Post: f}) }

// AddFailure installs f after the failure hooks installed so far and returns the
// function that removes it; see [Middleware.AddPre].
func (m *Middleware) AddFailure(f FailureHook) (remove func()) {
	return m.AddSet(Set{Failure: f})
}

// AddSet installs the hooks of s, each after the hooks of its kind installed so far,
// and returns the function that removes them together. remove may be called any
// number of times, also from inside a hook and while calls run. A Set without
// hooks gives a remove that does nothing.
func (m *Middleware) AddSet(s Set) (remove func()) {
	if s.empty() {
		return func() {}
	}
	e := &entry{s}
	m.mu.Lock()
	var cur []*entry
	if st := m.hooks.Load(); st != nil {
		cur = st.entries
	}
	m.hooks.Store(newState(append(slices.Clip(cur), e)))
	m.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { m.remove(e) }) }
}

func (m *Middleware) remove(e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.hooks.Load()
	if st == nil {
		return
	}
	i := slices.Index(st.entries, e)
	if i < 0 {
		return
	}
	m.hooks.Store(newState(slices.Delete(slices.Clone(st.entries), i, i+1)))
}

// callCtx is the context hooks receive: the call's context plus the start time
// and the approval the call claimed.
type callCtx struct {
	context.Context
	start   time.Time
	claimed atomic.Pointer[string]
}

var _ approvals.ClaimRecorder = (*callCtx)(nil)

// RecordClaim keeps the id of the approval the call claimed, for [ClaimedApproval].
func (c *callCtx) RecordClaim(id string) { c.claimed.Store(&id) }

type callCtxKey struct{}

func (c *callCtx) Value(key any) any {
	if key == (callCtxKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// CallStart reports when the hooks middleware started the call whose hooks
// received ctx (just before the first pre hook). ok is false for a context that
// did not come from the hooks middleware. Post and failure hooks use it to measure
// the duration of a call.
func CallStart(ctx context.Context) (start time.Time, ok bool) {
	if c, ok := ctx.Value(callCtxKey{}).(*callCtx); ok {
		return c.start, true
	}
	return time.Time{}, false
}

// ClaimedApproval returns the id of the approval request that the call whose
// post or failure hooks received ctx claimed in order to run (see
// middleware/permission's WithApprovals), or "" when it claimed none or ctx did
// not come from the hooks middleware.
func ClaimedApproval(ctx context.Context) string {
	if c, ok := ctx.Value(callCtxKey{}).(*callCtx); ok {
		if id := c.claimed.Load(); id != nil {
			return *id
		}
	}
	return ""
}

// OnExecuteTool runs the hooks around next as described on [Middleware]. The rest
// of the chain receives name and args unchanged, and ctx unchanged but for an
// [approvals.ClaimRecorder] when there are post or failure hooks; hooks receive
// a context that carries the start of the call (see [CallStart]) and the
// approval the call claimed (see [ClaimedApproval]).
func (m *Middleware) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	st := m.hooks.Load()
	if st == nil || len(st.entries) == 0 {
		return next(ctx, name, args)
	}
	hctx := &callCtx{Context: ctx, start: time.Now()}
	for _, e := range st.entries {
		if e.Pre != nil {
			m.guard(hctx, name, func() { e.Pre(hctx, name, clone.Args(args)) })
		}
	}
	if st.lastPost < 0 && st.lastFailure < 0 {
		return next(ctx, name, args)
	}
	// The rest of the chain can tell which approval the call claimed.
	ctx = approvals.ContextWithClaimRecorder(ctx, hctx)
	// Taken before the rest of the chain runs, so that post and failure hooks see
	// the arguments as the call received them.
	snapshot := clone.Args(args)
	returned := false
	if st.lastFailure >= 0 {
		defer func() {
			if returned {
				return
			}
			// next panicked or called runtime.Goexit. A panic is recovered only
			// to read its value, and goes on with that value once the failure
			// hooks ran; the frames of the panic are still on the stack then.
			v := recover()
			if v == nil {
				m.failure(hctx, st, name, snapshot, panicked{&mcs.PanicError{Tool: name, Value: "runtime.Goexit"}})
				return
			}
			m.failure(hctx, st, name, snapshot, panicked{&mcs.PanicError{Tool: name, Value: v, Stack: debug.Stack()}})
			panic(v)
		}()
	}
	res, err := next(ctx, name, args)
	returned = true
	if err != nil {
		m.failure(hctx, st, name, snapshot, err)
		return res, err
	}
	for i, e := range st.entries {
		if e.Post != nil {
			m.guard(hctx, name, func() { e.Post(hctx, name, argsFor(snapshot, i, st.lastPost), clone.Value(res)) })
		}
	}
	return res, err
}

func (m *Middleware) failure(ctx context.Context, st *state, name string, snapshot map[string]any, err error) {
	for i, e := range st.entries {
		if e.Failure != nil {
			m.guard(ctx, name, func() { e.Failure(ctx, name, argsFor(snapshot, i, st.lastFailure), err) })
		}
	}
}

// guard runs f and reports a panic in it instead of letting it escape.
func (m *Middleware) guard(ctx context.Context, name string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			m.reportPanic(ctx, name, v, debug.Stack())
		}
	}()
	f()
}

func (m *Middleware) reportPanic(ctx context.Context, name string, v any, stack []byte) {
	defer func() { _ = recover() }() // a failing report must not break the call either
	if m.onPanic != nil {
		m.onPanic(ctx, name, v, stack)
		return
	}
	slog.Default().ErrorContext(ctx, "hooks: a hook panicked; the call continues",
		slog.String("tool", name), slog.Any("panic", v), slog.String("stack", string(stack)))
}

// panicked is the error failure hooks receive when the rest of the chain
// panicked: the *mcs.PanicError, which still matches the deprecated ErrPanicked.
type panicked struct{ *mcs.PanicError }

func (e panicked) Unwrap() []error { return []error{e.PanicError, ErrPanicked} }
