package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcs-go/mcs"
)

// ID is the Meta ID of an orchestrator.
const ID = "mcs-go/orchestrator"

const version = "0.1.0"

// The errors of a registration that fails a check; test with errors.Is.
var (
	// ErrInvalidLabel is wrapped when a label does not match [A-Za-z0-9-]{1,32}.
	ErrInvalidLabel = errors.New("invalid label")
	// ErrLabelInUse is wrapped when a driver is already registered under the label.
	ErrLabelInUse = errors.New("label in use")
	// ErrInvalidName is wrapped when an exposed tool name would not match
	// ^[a-zA-Z0-9_-]{1,64}$ (the limit of OpenAI's function names).
	ErrInvalidName = errors.New("invalid exposed tool name")
	// ErrCycle is wrapped when the driver is the orchestrator itself or an
	// orchestrator that contains it, also when wrapped in an *mcs.BaseDriver.
	ErrCycle = errors.New("driver would contain the orchestrator itself")
)

// Orchestrator is many tool drivers behind one driver with its own identity. It
// collects the tools of its registered drivers through a [Strategy], resolves name
// collisions, builds one prompt and dispatches each call to the driver that serves
// it.
//
// It embeds *[mcs.BaseDriver], so it is an [mcs.Driver] and an [mcs.ToolDriver] (it
// can be registered inside another orchestrator) with native tools, streaming and tool
// middleware, and it adds [mcs.SupportsHealthcheck]. Middleware given to [New] runs
// around the orchestrator's own calls and sees the exposed names (crm__list_contacts);
// each registered driver still runs its own middleware, with its own names, because
// the orchestrator calls the driver's ExecuteTool. Through ProcessLLMResponse only
// names the orchestrator currently lists are executed; any other name is reported
// in Response.Foreign, for the client to answer. ExecuteTool routes every name the
// strategy can route (a tool on another page, label__tool) and returns an error
// wrapping [mcs.ErrUnknownTool] otherwise. The non-empty instructions of the strategy's
// layers are appended to the system message.
//
// The exposed listing and its name index are cached, so deciding whether a call is
// owned and routing it cost no scan over the drivers. The cache is dropped when the
// driver set changes, when a layer, the strategy or a registered driver with a
// version ([mcs.VersionedTools]: a nested orchestrator, a tool table, wrapped in an
// [mcs.BaseDriver] or not) reports a change, and on Refresh; a listing cut short by a
// cancelled context is never kept. A driver whose ListTools fails is left out of the
// listing, logged (see SetLogger), and reported by Healthcheck as ERROR naming its
// label; the others keep working. The exposed listing holds the first tool of each
// name, the one a call reaches, when it passes the name rule and [mcs.Tool.Validate];
// when it does not, the name is not exposed at all.
//
// An Orchestrator is safe for concurrent use. The driver set is copy-on-write:
// AddDriver and RemoveDriver may run while calls run, and a call in flight finishes
// against the set it started with. A call starts when ProcessLLMResponse or
// ProcessStream first looks up a name, or when ExecuteTool is entered; a nested
// orchestrator's call starts when the outer one calls it.
type Orchestrator struct {
	*mcs.BaseDriver

	strategy  Strategy
	versioned mcs.VersionedTools // the strategy's, or nil

	mu    sync.Mutex                  // serialises AddDriver and RemoveDriver
	set   atomic.Pointer[driverSet]   // the registered drivers, immutable
	epoch atomic.Uint64               // bumped by Refresh
	stamp atomic.Pointer[stamp]       // the state the cache must match
	cache atomic.Pointer[listing]     // the exposed listing, if built
	build chan struct{}               // one listing is built at a time
	log   atomic.Pointer[slog.Logger] // nil: slog.Default()
}

var (
	_ mcs.Driver              = (*Orchestrator)(nil)
	_ mcs.ToolDriver          = (*Orchestrator)(nil)
	_ mcs.SupportsHealthcheck = (*Orchestrator)(nil)
	_ mcs.VersionedTools      = (*Orchestrator)(nil)
	_ mcs.ToolSettler         = (*Orchestrator)(nil)
	_ mcs.ToolDriverWrapper   = (*Orchestrator)(nil)
	_ mcs.ToolLookup          = (*engine)(nil)
	_ mcs.VersionedTools      = (*engine)(nil)
	_ mcs.InstructionProvider = (*engine)(nil)
)

// driverSet is one immutable snapshot of the registered drivers.
type driverSet struct {
	entries   []Entry
	labels    map[string]int
	versioned []mcs.VersionedTools // the drivers that have a version (mcs.ToolsVersion), in order
	settlers  []mcs.ToolSettler    // the drivers that implement mcs.ToolSettler, in order
}

func newDriverSet(entries []Entry) *driverSet {
	s := &driverSet{entries: entries, labels: make(map[string]int, len(entries))}
	for i, e := range entries {
		s.labels[e.Label] = i
		if _, ok := mcs.ToolsVersion(e.Driver); ok {
			s.versioned = append(s.versioned, e.Driver.(mcs.VersionedTools))
		}
		if v, ok := e.Driver.(mcs.ToolSettler); ok {
			s.settlers = append(s.settlers, v)
		}
	}
	return s
}

// stamp is the state a cached listing was built under. gen numbers stamps; it is the
// orchestrator's ToolsVersion.
type stamp struct {
	gen   uint64
	set   *driverSet
	epoch uint64
	sv    uint64   // the strategy's version
	deps  []uint64 // the versions of set.versioned
}

// listing is the exposed listing of one stamp.
type listing struct {
	stamp   *stamp
	tools   []mcs.Tool
	index   map[string]bool // every name seen; true when exposed
	pos     map[string]int  // exposed name -> its position in tools
	failed  []*ListError    // drivers left out
	dropped []error         // tools left out, with the reason
	err     error           // the listing failed as a whole
	// retired holds names an earlier listing exposed and this one does not, with
	// what they are called now ("" when nothing takes their place), so that a call
	// for a name that just changed is answered as unknown instead of ignored.
	retired map[string]string
	// served is set once the listing was handed out (ListTools, and so the
	// prompts): only names a model may have seen are retired.
	served atomic.Bool
	// settled is set once every mcs.ToolSettler of the stamp's set has settled (see
	// engine.ToolDefinition).
	settled atomic.Bool
}

// New returns an orchestrator with no drivers that exposes tools through strategy;
// nil means Pipeline(Namespacing()). opts configure the embedded BaseDriver: prompt
// strategy, middleware around the orchestrator's calls, native tools and so on.
func New(strategy Strategy, opts ...mcs.Option) *Orchestrator {
	if strategy == nil {
		strategy = Pipeline(Namespacing())
	}
	o := &Orchestrator{strategy: strategy, build: make(chan struct{}, 1)}
	o.versioned, _ = strategy.(mcs.VersionedTools)
	set := newDriverSet(nil)
	o.set.Store(set)
	o.stamp.Store(&stamp{gen: 1, set: set, sv: o.strategyVersion()})
	o.BaseDriver = mcs.NewBaseDriver(&engine{o: o}, opts...)
	return o
}

// Meta returns the orchestrator's own data sheet: ID "mcs-go/orchestrator", no
// bindings, every model, and the capabilities of the contracts *Orchestrator
// implements (standalone, orchestratable, native_tools, streaming, tool_middleware,
// healthcheck), never those of its drivers.
func (o *Orchestrator) Meta() mcs.Meta {
	return mcs.DeriveCapabilities(o.BaseDriver.Meta(), o)
}

// Strategy returns the strategy the orchestrator was created with.
func (o *Orchestrator) Strategy() Strategy { return o.strategy }

// SetLogger sets the logger that reports drivers and tools left out of the listing;
// nil means slog.Default(). Safe for concurrent use.
func (o *Orchestrator) SetLogger(l *slog.Logger) { o.log.Store(l) }

func (o *Orchestrator) logger() *slog.Logger {
	if l := o.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// Labels returns the labels of the registered drivers in registration order.
func (o *Orchestrator) Labels() []string {
	entries := o.set.Load().entries
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Label
	}
	return out
}

// AddDriver registers d under label, after the drivers registered so far; it is
// AddDrivers with context.Background() and one entry.
func (o *Orchestrator) AddDriver(label string, d mcs.ToolDriver) error {
	return o.AddDrivers(context.Background(), Entry{Label: label, Driver: d})
}

// AddDrivers registers entries, in order, after the drivers registered so far, as
// one change: either all of them are registered or, when a check fails, none is. It
// lists the proposed set once (ctx bounds that), so registering many drivers at once
// costs one listing instead of one per driver. The checks:
//
//   - a label must match [A-Za-z0-9-]{1,32} ([ErrInvalidLabel]) and be free
//     ([ErrLabelInUse]); a driver must not be nil, nor this orchestrator or one that
//     contains it ([ErrCycle]);
//   - each new driver must list its tools (the error wraps a [*ListError]); drivers
//     already registered that fail to list are tolerated, as in every listing;
//   - every tool the strategy would expose over the proposed set, on every page and
//     for every switch target, must have a name matching ^[a-zA-Z0-9_-]{1,64}$
//     ([ErrInvalidName]) and pass [mcs.Tool.Validate] (adding a second driver renames
//     the first one's tools under namespacing, so both are checked);
//   - the strategy's [RegistrationChecker], if any, must accept the set.
//
// Registrations are serialised; calls of the orchestrator keep running meanwhile,
// against the previous set, and see the new drivers from their next call on.
func (o *Orchestrator) AddDrivers(ctx context.Context, entries ...Entry) error {
	for i, e := range entries {
		if err := checkLabel(e.Label); err != nil {
			return fmt.Errorf("add driver: %w", err)
		}
		if isNil(e.Driver) {
			return fmt.Errorf("add driver %q: the driver is nil", e.Label)
		}
		if reaches(e.Driver, o, map[*Orchestrator]bool{}) {
			return fmt.Errorf("add driver %q: %w", e.Label, ErrCycle)
		}
		for _, prev := range entries[:i] {
			if prev.Label == e.Label {
				return fmt.Errorf("add driver %q: %w: the label is given twice", e.Label, ErrLabelInUse)
			}
		}
	}
	if len(entries) == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	cur := o.set.Load()
	for _, e := range entries {
		if _, used := cur.labels[e.Label]; used {
			return fmt.Errorf("add driver %q: %w: remove the registered driver first or choose another label", e.Label, ErrLabelInUse)
		}
	}
	next := newDriverSet(slices.Concat(cur.entries, entries))
	fail := func(err error) error {
		if len(entries) == 1 {
			return fmt.Errorf("add driver %q: %w", entries[0].Label, err)
		}
		return fmt.Errorf("add drivers: %w", err)
	}

	// The versions go first: a listing may only be cached under the state it saw.
	epoch, sv, deps := o.epoch.Load(), o.strategyVersion(), depVersions(next)
	tools, exact, err := o.listEvery(ctx, next.entries)
	if err != nil {
		failed, partial := listErrors(err)
		if !partial {
			return fail(fmt.Errorf("list the tools: %w", err))
		}
		for _, f := range failed {
			if i := next.labels[f.Label]; i >= len(cur.entries) {
				return fail(f)
			}
		}
	}
	for _, t := range tools {
		if err := checkTool(t); err != nil {
			return fail(err)
		}
	}
	if rc, ok := o.strategy.(RegistrationChecker); ok {
		if err := rc.CheckRegistration(ctx, next.entries, tools); err != nil {
			return fail(err)
		}
	}
	o.set.Store(next)
	if exact {
		// The check listed exactly what a call would list: cache it.
		for {
			old := o.stamp.Load()
			s := &stamp{gen: old.gen + 1, set: next, epoch: epoch, sv: sv, deps: deps}
			if o.stamp.CompareAndSwap(old, s) {
				l := o.finish(s, tools, err)
				l.retired = retire(o.cache.Load(), l)
				o.cache.Store(l)
				o.report(l)
				break
			}
		}
	}
	return nil
}

// RemoveDriver unregisters the driver registered under label and returns it; false
// when there is none. Calls in flight finish against the set they started with.
func (o *Orchestrator) RemoveDriver(label string) (mcs.ToolDriver, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	cur := o.set.Load()
	i, ok := cur.labels[label]
	if !ok {
		return nil, false
	}
	d := cur.entries[i].Driver
	o.set.Store(newDriverSet(slices.Concat(cur.entries[:i], cur.entries[i+1:])))
	return d, true
}

// Refresh forgets the cached listing, so the next call lists every driver again, and
// refreshes the nested orchestrators registered here. Use it after the tools of a
// registered driver changed (a reloaded specification) and to retry drivers that
// failed to list. Safe for concurrent use.
func (o *Orchestrator) Refresh() {
	for _, e := range o.set.Load().entries {
		if inner, ok := e.Driver.(*Orchestrator); ok {
			inner.Refresh()
		}
	}
	o.epoch.Add(1)
}

// ToolsVersion returns a number that increases whenever the orchestrator's exposed
// listing may have changed: a driver added or removed, a layer state change, a
// change in a nested orchestrator, Refresh. An orchestrator registered in another
// uses it to keep the outer cache current.
func (o *Orchestrator) ToolsVersion() uint64 { return o.currentStamp().gen }

func (o *Orchestrator) strategyVersion() uint64 {
	if o.versioned == nil {
		return 0
	}
	return o.versioned.ToolsVersion()
}

func depVersions(s *driverSet) []uint64 {
	if len(s.versioned) == 0 {
		return nil
	}
	out := make([]uint64, len(s.versioned))
	for i, v := range s.versioned {
		out[i] = v.ToolsVersion()
	}
	return out
}

// currentStamp returns the stamp of the current state, installing a new one when
// the state changed. It allocates nothing when the state is unchanged.
func (o *Orchestrator) currentStamp() *stamp {
	for {
		old := o.stamp.Load()
		set, epoch, sv := o.set.Load(), o.epoch.Load(), o.strategyVersion()
		if old.set == set && old.epoch == epoch && old.sv == sv && depsCurrent(old.deps, set) {
			return old
		}
		s := &stamp{gen: old.gen + 1, set: set, epoch: epoch, sv: sv, deps: depVersions(set)}
		if o.stamp.CompareAndSwap(old, s) {
			return s
		}
	}
}

func depsCurrent(deps []uint64, set *driverSet) bool {
	for i, v := range set.versioned {
		if deps[i] != v.ToolsVersion() {
			return false
		}
	}
	return true
}

// current returns the listing of the current state, building it when needed. The
// returned listing is nil only when ctx ended while waiting for another build.
func (o *Orchestrator) current(ctx context.Context) (*listing, error) {
	s := o.currentStamp()
	if l := o.cache.Load(); l != nil && l.stamp == s {
		return l, l.err
	}
	select {
	case o.build <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-o.build }()
	s = o.currentStamp()
	if l := o.cache.Load(); l != nil && l.stamp == s {
		return l, l.err
	}
	tools, err := o.listTools(ctx, s.set.entries)
	l := o.finish(s, tools, err)
	if c, ok := o.strategy.(callableLayer); ok && l.err == nil {
		for _, name := range c.alsoCallable() {
			if _, seen := l.index[name]; !seen {
				l.index[name] = true
			}
		}
	}
	l.retired = retire(o.cache.Load(), l)
	if l.err == nil || ctx.Err() == nil { // a listing cut short by ctx is not kept
		o.cache.Store(l)
		o.report(l)
	}
	return l, l.err
}

// listTools runs the strategy's ListTools, turning a panic into an error.
func (o *Orchestrator) listTools(ctx context.Context, entries []Entry) (tools []mcs.Tool, err error) {
	defer func() {
		if v := recover(); v != nil {
			tools, err = nil, recovered("the strategy", v)
		}
	}()
	return o.strategy.ListTools(ctx, entries)
}

// listEvery lists what the strategy could expose over entries in any state; exact
// reports whether that is what ListTools returns.
func (o *Orchestrator) listEvery(ctx context.Context, entries []Entry) (tools []mcs.Tool, exact bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			tools, exact, err = nil, false, recovered("the strategy", v)
		}
	}()
	if el, ok := o.strategy.(everyLister); ok {
		return el.listEvery(ctx, entries)
	}
	tools, err = o.strategy.ListTools(ctx, entries)
	return tools, true, err
}

// finish turns a strategy's listing into the exposed listing: the first tool of each
// name when it is valid. A later tool of the same name is never exposed in place of
// an invalid first one, since calls by that name reach the first one.
func (o *Orchestrator) finish(s *stamp, tools []mcs.Tool, err error) *listing {
	l := &listing{stamp: s}
	if err != nil {
		failed, partial := listErrors(err)
		if !partial {
			l.err = fmt.Errorf("list tools: %w", err)
			return l
		}
		l.failed = failed
	}
	l.tools = make([]mcs.Tool, 0, len(tools))
	l.index = make(map[string]bool, len(tools))
	l.pos = make(map[string]int, len(tools))
	for _, t := range tools {
		if _, dup := l.index[t.Name]; dup {
			continue
		}
		if err := checkTool(t); err != nil {
			l.index[t.Name] = false
			l.dropped = append(l.dropped, err)
			continue
		}
		l.index[t.Name] = true
		l.pos[t.Name] = len(l.tools)
		l.tools = append(l.tools, t)
	}
	return l
}

// report logs what a new listing left out.
func (o *Orchestrator) report(l *listing) {
	log := o.logger()
	if l.err != nil {
		log.Error("orchestrator: the tool listing failed", errAttrs(l.err)...)
		return
	}
	for _, f := range l.failed {
		log.Warn("orchestrator: driver left out of the tool listing", append([]any{"label", f.Label}, errAttrs(f.Err)...)...)
	}
	for _, err := range l.dropped {
		log.Warn("orchestrator: tool left out of the tool listing", "error", err)
	}
}

// errAttrs returns the log attributes of err: the error, and the stack of a
// recovered panic in it.
func errAttrs(err error) []any {
	attrs := []any{"error", err}
	if pe, ok := errors.AsType[*mcs.PanicError](err); ok {
		attrs = append(attrs, "stack", string(pe.Stack))
	}
	return attrs
}

// ProcessLLMResponse runs the calls in response whose names the orchestrator lists,
// in order, through its middleware and its strategy, as [mcs.BaseDriver] does; any
// other name is reported in Response.Foreign, except a name that the listing handed out
// before the last change exposed and the current one does not (a tool renamed by
// namespacing when a driver came or went, or removed): such a call is answered as
// a failed call whose error wraps [mcs.ErrUnknownTool] and gives the new name, if any,
// so that it is never dropped silently. [AlwaysNamespacing] keeps names stable. Every call of the response is judged and
// routed against the same listing, the one current when the first call is looked up,
// so an AddDriver or RemoveDriver meanwhile does not reach it. Safe for concurrent
// use.
func (o *Orchestrator) ProcessLLMResponse(ctx context.Context, response any) mcs.Response {
	ctx, _ = o.withPin(ctx)
	return o.BaseDriver.ProcessLLMResponse(ctx, response)
}

// ProcessStream is [mcs.BaseDriver.ProcessStream] with the calls of each invocation
// judged and routed against one listing, as in ProcessLLMResponse. Safe for
// concurrent use.
func (o *Orchestrator) ProcessStream(ctx context.Context, buf *mcs.StreamBuffer) mcs.Response {
	ctx, _ = o.withPin(ctx)
	return o.BaseDriver.ProcessStream(ctx, buf)
}

// ExecuteTool runs the named tool through the orchestrator's middleware and then its
// strategy, against the driver set registered when ExecuteTool is entered: a driver
// removed while the middleware runs still serves the call. It routes every name the
// strategy can route (a tool on another page, label__tool); any other name gives an
// error that wraps [mcs.ErrUnknownTool] and names the tool. A panic in a middleware, the
// strategy or a driver is returned as a *[mcs.PanicError]. Safe for concurrent use.
func (o *Orchestrator) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	ctx, p := o.withPin(ctx)
	if l, _ := o.current(ctx); l != nil {
		p.l.Store(l)
	}
	return o.BaseDriver.ExecuteTool(ctx, name, args)
}

// pinKey keys, in the context of a call, the [pin] of one orchestrator.
type pinKey struct{ o *Orchestrator }

// pin holds the listing one call of the orchestrator works against: the first
// listing looked up under the call's context, then fixed.
type pin struct{ l atomic.Pointer[listing] }

// withPin returns ctx carrying a new, empty pin for o. A new call always gets its
// own pin, even from inside another call of o (a tool that calls back).
func (o *Orchestrator) withPin(ctx context.Context) (context.Context, *pin) {
	p := &pin{}
	return context.WithValue(ctx, pinKey{o}, p), p
}

// listingFor returns the listing of the call that ctx belongs to: the pinned one, or
// else the current one, which it pins.
func (o *Orchestrator) listingFor(ctx context.Context) (*listing, error) {
	p, _ := ctx.Value(pinKey{o}).(*pin)
	if p != nil {
		if l := p.l.Load(); l != nil {
			return l, l.err
		}
	}
	l, err := o.current(ctx)
	if p == nil || l == nil {
		return l, err
	}
	if !p.l.CompareAndSwap(nil, l) {
		l = p.l.Load()
	}
	return l, l.err
}

// engine is the ToolDriver under the orchestrator's BaseDriver.
type engine struct{ o *Orchestrator }

func (e *engine) Meta() mcs.Meta {
	return mcs.Meta{ID: ID, Name: "Orchestrator", Version: version}
}

// ListTools returns a copy of the cached exposed listing.
func (e *engine) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	l, err := e.o.current(ctx)
	if err != nil {
		return nil, err
	}
	l.served.Store(true)
	return slices.Clone(l.tools), nil
}

// HasTool answers from the index of the call's listing. A name the listing does not
// hold but that may belong to a driver left out of it (every driver failed to list,
// or the name carries the label__ prefix of one that did) is an error: the caller
// cannot tell whether the call is the orchestrator's, and says so
// (mcs.Response.Unavailable).
func (e *engine) HasTool(ctx context.Context, name string) (bool, error) {
	l, err := e.o.listingFor(ctx)
	if err != nil {
		return false, err
	}
	if exposed, seen := l.index[name]; seen {
		return exposed, nil
	}
	if _, retired := l.retired[name]; retired {
		return true, nil // owned, so that the call is answered as unknown
	}
	if len(l.failed) == 0 {
		return false, nil
	}
	if len(l.failed) == len(l.stamp.set.entries) {
		return false, l.failed[0]
	}
	for _, f := range l.failed {
		if strings.HasPrefix(name, f.Label+Separator) {
			return false, f
		}
	}
	return false, nil
}

// ExecuteTool routes the call through the strategy over the call's driver set.
func (e *engine) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	o := e.o
	set := o.set.Load()
	if l, _ := o.listingFor(ctx); l != nil {
		set = l.stamp.set
	}
	res, err := o.strategy.ExecuteTool(ctx, set.entries, name, args)
	if err != nil && errors.Is(err, mcs.ErrUnknownTool) {
		if l, _ := o.listingFor(ctx); l != nil {
			if now, ok := l.retired[name]; ok {
				return nil, renamedTool(name, now, err)
			}
		}
	}
	return res, err
}

// maxRetired bounds how many retired names a listing remembers.
const maxRetired = 4096

// retire returns the retired names of next: those the last listing handed out
// exposed that next does not list, each with the exposed name that took its place
// (the one namespacing gave it, or the bare name when namespacing ended), else "".
// prev is the listing before next: when it was handed out its tools count, else
// the names it retired. A name that changed is answered until the listing changes
// again, and then left to whichever driver owns it.
func retire(prev, next *listing) map[string]string {
	if prev == nil || next.err != nil {
		return nil
	}
	var out map[string]string
	add := func(name string) {
		if _, seen := next.index[name]; seen || len(out) >= maxRetired {
			return
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = successor(name, next)
	}
	if !prev.served.Load() {
		for name := range prev.retired {
			add(name)
		}
		return out
	}
	for _, t := range prev.tools {
		add(t.Name)
	}
	return out
}

// successor finds the exposed name of next that name became: <label>__name, or
// the tool part of name.
func successor(name string, next *listing) string {
	if _, tool, ok := strings.Cut(name, Separator); ok && next.index[tool] {
		return tool
	}
	for _, t := range next.tools {
		if strings.HasSuffix(t.Name, Separator+name) {
			return t.Name
		}
	}
	return ""
}

// renamedTool is the error of a call for a name the orchestrator no longer
// exposes because its tools changed (a driver was added or removed, and
// namespacing renamed the tools).
func renamedTool(name, now string, cause error) error {
	if now != "" {
		return fmt.Errorf("%w %q: the orchestrator's tools changed and this tool is now called %q; call it by that name", mcs.ErrUnknownTool, name, now)
	}
	return fmt.Errorf("%w (the orchestrator's tools changed and it is no longer offered; list the tools again)", cause)
}

// ToolsVersion is the orchestrator's, so that its BaseDriver reports the
// orchestrator's listing as versioned (see [mcs.BaseDriver.ToolsVersioned]).
func (e *engine) ToolsVersion() uint64 { return e.o.ToolsVersion() }

// Instructions returns the strategy's instructions as of the current listing.
func (e *engine) Instructions(ctx context.Context) string {
	ip, ok := e.o.strategy.(mcs.InstructionProvider)
	if !ok {
		return ""
	}
	_, _ = e.o.current(ctx) // stateful layers describe the listing they last made
	return ip.Instructions(ctx)
}

// checkLabel reports whether label matches [A-Za-z0-9-]{1,32}.
func checkLabel(label string) error {
	if len(label) == 0 || len(label) > 32 {
		return fmt.Errorf("%w %q: a label has 1 to 32 characters from A-Z, a-z, 0-9 and '-'", ErrInvalidLabel, label)
	}
	for i := 0; i < len(label); i++ {
		c := label[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return fmt.Errorf("%w %q: character %q is not allowed; a label has 1 to 32 characters from A-Z, a-z, 0-9 and '-'", ErrInvalidLabel, label, rune(c))
		}
	}
	return nil
}

// checkTool reports whether t may be exposed: a valid tool whose name matches
// ^[a-zA-Z0-9_-]{1,64}$.
func checkTool(t mcs.Tool) error {
	name := t.Name
	ok := len(name) >= 1 && len(name) <= 64
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%w %q (%d bytes): names must match ^[a-zA-Z0-9_-]{1,64}$; use a shorter label or a driver that names its tools accordingly", ErrInvalidName, name, len(name))
	}
	return t.Validate()
}

// isNil reports whether d is nil or a typed nil pointer.
func isNil(d mcs.ToolDriver) bool {
	if d == nil {
		return true
	}
	v := reflect.ValueOf(d)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// reaches reports whether d is target or contains it: an orchestrator that
// registers it (directly or further down), or an [mcs.ToolDriverWrapper] that
// reports it wraps it (as *mcs.BaseDriver does). seen keeps a shared nested
// orchestrator from being walked twice.
func reaches(d mcs.ToolDriver, target *Orchestrator, seen map[*Orchestrator]bool) bool {
	od, ok := d.(*Orchestrator)
	if !ok {
		w, isWrapper := d.(mcs.ToolDriverWrapper)
		return isWrapper && w.Wraps(target)
	}
	if od == nil {
		return false
	}
	if od == target {
		return true
	}
	if seen[od] {
		return false
	}
	seen[od] = true
	for _, e := range od.set.Load().entries {
		if reaches(e.Driver, target, seen) {
			return true
		}
	}
	return false
}

// Wraps reports whether td is registered in the orchestrator, directly or further
// down (inside a nested orchestrator or an [mcs.ToolDriverWrapper] that reports it
// wraps it). It is how a composition detects a cycle without a way around any
// driver's middleware.
func (o *Orchestrator) Wraps(td mcs.ToolDriver) bool {
	target, ok := td.(*Orchestrator)
	seen := map[*Orchestrator]bool{o: true}
	for _, e := range o.set.Load().entries {
		if ok && reaches(e.Driver, target, seen) {
			return true
		}
		if !ok && sameDriver(e.Driver, td) {
			return true
		}
		if w, isWrapper := e.Driver.(mcs.ToolDriverWrapper); !ok && isWrapper && w.Wraps(td) {
			return true
		}
	}
	return false
}

// sameDriver reports whether a and b are the same driver value, without panicking
// on driver types that are not comparable.
func sameDriver(a, b mcs.ToolDriver) bool {
	if a == nil || b == nil {
		return false
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}
