package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/mcs-go/mcs"
)

// Entry is one registered driver and the label it was registered under.
type Entry struct {
	Label  string
	Driver mcs.ToolDriver
}

// A Strategy lists the tools of a set of labelled drivers and executes calls against
// that set. drivers is in registration order.
//
// drivers is read-only for both sides: a Strategy must not modify it, and a caller
// must not modify it after the call, because strategies may remember data derived
// from a slice (an index of names, for example) for as long as they are handed the
// same slice. The orchestrator only passes immutable snapshots.
//
// ListTools returns the tools as the strategy exposes them. When some drivers fail to
// list their tools it returns the tools of the others together with an error made
// only of [*ListError] values, one per failed driver (joined with [errors.Join]); the
// orchestrator serves such a partial listing and reports the failed labels. Any other
// error means nothing could be listed.
//
// ExecuteTool runs a call by a name the strategy exposes, or can route although it
// does not list it right now (a tool on another page). A name it cannot route gives an
// error that wraps [mcs.ErrUnknownTool] and names the tool.
//
// Implementations must be safe for concurrent use. A Strategy may also implement
// [RegistrationChecker], [mcs.VersionedTools] and [mcs.InstructionProvider], whose
// non-empty instructions the orchestrator appends to its system message; [Pipeline]
// does all three.
type Strategy interface {
	ListTools(ctx context.Context, drivers []Entry) ([]mcs.Tool, error)
	ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any) (any, error)
}

// A Layer is middleware over a Strategy: it receives the inner strategy the way a
// tool middleware receives next, and may add, rename, hide or route tools, and
// contribute instructions for the system message. [Pipeline] stacks layers over
// [Flat].
//
// ListTools should transform whatever tools inner returns and pass inner's error on
// unchanged, so that a partial listing (see [Strategy]) stays partial. ExecuteTool
// handles the names the layer adds and hands every other name to inner, translated
// back when the layer renamed it. Instructions returns text for the system message, or
// "", as [mcs.InstructionProvider] does; ctx is that of the prompt being written.
//
// Implementations must be safe for concurrent use. A layer with state of its own (a
// page, an active target) guards it and implements [mcs.VersionedTools], so that the
// orchestrator forgets its cached listing when that state changes. A stateful layer
// instance belongs to one pipeline; do not share it between orchestrators. A layer may
// also implement [RegistrationChecker].
type Layer interface {
	ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error)
	ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error)
	Instructions(ctx context.Context) string
}

// RegistrationChecker is an optional interface of a Strategy or a Layer that vets a
// proposed driver set before AddDriver commits it. proposed is the current set with
// the new driver appended; exposed is every tool the strategy would expose over it,
// on every page and for every switch target, in order and before duplicate names are
// dropped. A non-nil error makes AddDriver fail and register nothing; the error is
// returned wrapped. Implementations must be safe for concurrent use.
type RegistrationChecker interface {
	CheckRegistration(ctx context.Context, proposed []Entry, exposed []mcs.Tool) error
}

// Versioned is the kernel's listing version, implemented by a Layer, a Strategy or a
// registered ToolDriver whose listing can change while the orchestrator's driver
// set stays the same: a page turned, a target switched, a nested orchestrator that
// gained a driver. The orchestrator reads the versions before each use of its
// cached listing and lists again when one differs from the value the cache was
// built under. The listings of drivers without a version (see [mcs.ToolsVersion])
// are cached until [Orchestrator.Refresh] or a change of the driver set.
// *Orchestrator, *Paginator, *Switching and the Strategy of [Pipeline] implement
// it.
//
// Deprecated: use [mcs.VersionedTools].
type Versioned = mcs.VersionedTools

// Settler is the kernel's [mcs.ToolSettler]. Before the orchestrator's middleware
// first decides on a call of a listing, the orchestrator settles every registered
// driver that implements it, so that the definition in [mcs.CallInfo]
// (annotations a ReadOnly rule trusts, parameter schemas) is the drivers' final
// word and never a cache's. Later calls of the same listing cost one atomic load.
// *Orchestrator implements it for the drivers it holds, so nested orchestrators
// settle too.
//
// Deprecated: use [mcs.ToolSettler].
type Settler = mcs.ToolSettler

// ErrUnknownTool is [mcs.ErrUnknownTool], which the error of a call whose name no
// driver or layer can route wraps.
//
// Deprecated: use mcs.ErrUnknownTool.
var ErrUnknownTool = mcs.ErrUnknownTool

// ListError reports that the driver registered under Label failed to list its tools.
// Strategies return it, joined, with a partial listing (see [Strategy]).
type ListError struct {
	Label string
	Err   error
}

func (e *ListError) Error() string {
	return fmt.Sprintf("driver %q cannot list its tools: %v", e.Label, e.Err)
}

// Unwrap returns the driver's error.
func (e *ListError) Unwrap() error { return e.Err }

// listErrors reports whether err is made only of *ListError values (possibly joined
// and wrapped) and returns them.
func listErrors(err error) ([]*ListError, bool) {
	switch e := err.(type) {
	case nil:
		return nil, false
	case *ListError:
		return []*ListError{e}, true
	case interface{ Unwrap() []error }:
		var out []*ListError
		for _, c := range e.Unwrap() {
			les, ok := listErrors(c)
			if !ok {
				return nil, false
			}
			out = append(out, les...)
		}
		return out, len(out) > 0
	case interface{ Unwrap() error }:
		return listErrors(e.Unwrap())
	}
	return nil, false
}

// unknownTool returns the error for a name nothing can route.
func unknownTool(name, why string) error {
	return fmt.Errorf("%w %q: %s", mcs.ErrUnknownTool, name, why)
}

// memo remembers one value derived from a driver slice, keyed by the slice's
// identity (first element and length). Strategies receive immutable slices, so the
// same identity means the same drivers; the memo holds the slice, so its backing
// array cannot be reused for another slice while remembered. Safe for concurrent use.
type memo[T any] struct{ p atomic.Pointer[memoEntry[T]] }

type memoEntry[T any] struct {
	first *Entry
	n     int
	v     T
}

func sliceKey(drivers []Entry) *Entry {
	if len(drivers) == 0 {
		return nil
	}
	return &drivers[0]
}

func (m *memo[T]) load(drivers []Entry) (T, bool) {
	if e := m.p.Load(); e != nil && e.n == len(drivers) && e.first == sliceKey(drivers) {
		return e.v, true
	}
	var zero T
	return zero, false
}

func (m *memo[T]) store(drivers []Entry, v T) {
	m.p.Store(&memoEntry[T]{first: sliceKey(drivers), n: len(drivers), v: v})
}

// labelIndex maps each label of a driver slice to its position.
func labelIndex(m *memo[map[string]int], drivers []Entry) map[string]int {
	if idx, ok := m.load(drivers); ok {
		return idx
	}
	idx := make(map[string]int, len(drivers))
	for i, e := range drivers {
		if _, dup := idx[e.Label]; !dup {
			idx[e.Label] = i
		}
	}
	m.store(drivers, idx)
	return idx
}

// Flat returns the Strategy that exposes the tools of every driver in registration
// order, duplicates included, and sends a call to the first driver that lists its
// name: priority by registration order. (The orchestrator exposes only the first tool
// of each name, which is the one a call reaches.)
//
// A driver whose ListTools fails or panics is left out and reported with a
// [*ListError]. Flat remembers, for the last driver slice it listed, which driver
// lists each name, so a call costs one map lookup; on a slice it has not listed it
// lists first. The result is safe for concurrent use.
func Flat() Strategy { return &flat{} }

type flat struct {
	routes memo[map[string]int] // name -> position of the first driver listing it
	hint   atomic.Int64         // tools per driver in the last listing, to size the next
}

// size estimates the tools of drivers from the last listing.
func (f *flat) size(drivers []Entry) int { return int(f.hint.Load()) * len(drivers) }

func (f *flat) ListTools(ctx context.Context, drivers []Entry) ([]mcs.Tool, error) {
	tools, routes, err := listEach(ctx, drivers, f.size(drivers))
	if routes == nil {
		return nil, err
	}
	if len(drivers) > 0 {
		f.hint.Store(int64((len(tools) + len(drivers) - 1) / len(drivers)))
	}
	f.routes.store(drivers, routes)
	return tools, err
}

func (f *flat) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any) (any, error) {
	routes, ok := f.routes.load(drivers)
	if !ok {
		var err error
		if _, routes, err = listEach(ctx, drivers, f.size(drivers)); routes == nil {
			return nil, fmt.Errorf("route %q: %w", name, err)
		}
		f.routes.store(drivers, routes)
	}
	i, ok := routes[name]
	if !ok {
		return nil, unknownTool(name, "no registered driver lists it")
	}
	return drivers[i].Driver.ExecuteTool(withLabel(ctx, drivers[i].Label), name, args)
}

// withLabel returns ctx whose [mcs.CallInfo] names label, so that the routed driver's
// chain, and its listing, see the label it is registered under.
func withLabel(ctx context.Context, label string) context.Context {
	info, _ := mcs.CallInfoFromContext(ctx)
	info.Label = label
	return mcs.ContextWithCallInfo(ctx, info)
}

// listEach lists every driver in order, expecting about size tools. routes is nil
// only when ctx ended, and then err is ctx's error.
func listEach(ctx context.Context, drivers []Entry, size int) (tools []mcs.Tool, routes map[string]int, err error) {
	routes = make(map[string]int, size)
	tools = make([]mcs.Tool, 0, size)
	var errs []error
	// Every tool a driver runs, also those its middleware hides from listings: a
	// call of one reaches the driver, which answers it (see engine.HidesTool).
	all := mcs.ContextWithHiddenTools(ctx)
	for i, e := range drivers {
		// The label, as for a call: a driver's middleware may hide tools by it.
		ts, lerr := safeList(withLabel(all, e.Label), e.Driver)
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		if lerr != nil {
			errs = append(errs, &ListError{Label: e.Label, Err: lerr})
			continue
		}
		for _, t := range ts {
			if _, dup := routes[t.Name]; !dup {
				routes[t.Name] = i
			}
		}
		tools = append(tools, ts...)
	}
	return tools, routes, errors.Join(errs...)
}

// safeList calls d.ListTools, turning a panic into an error.
func safeList(ctx context.Context, d mcs.ToolDriver) (tools []mcs.Tool, err error) {
	defer func() {
		if v := recover(); v != nil {
			tools, err = nil, recovered("ListTools", v)
		}
	}()
	return d.ListTools(ctx)
}

// recovered returns the error of a panic with value v in what (such as "ListTools"
// or "the strategy"): an *mcs.PanicError, the one panic error of the module. Its
// message names only the panic value; the stack, which holds source paths, goes to
// the orchestrator's log, not into errors that reach callers and health reports.
// Call it from the deferred function that recovered, so that the stack shows the
// panic.
func recovered(what string, v any) error {
	return &mcs.PanicError{Op: what, Value: v, Stack: debug.Stack()}
}

// Pipeline returns the Strategy that applies layers in order over [Flat]: layers[0]
// is innermost, closest to the drivers, and the last layer sees the call first. Nil
// layers are skipped; with none, Pipeline behaves like Flat.
//
// The result implements [mcs.VersionedTools] (it changes when any layer's version
// changes), [RegistrationChecker] (it runs the check of every layer that implements
// it, in order) and [mcs.InstructionProvider] (it joins the non-empty instructions
// of its layers, innermost first, one per line). It is safe for
// concurrent use when its layers are.
func Pipeline(layers ...Layer) Strategy {
	p := &pipeline{}
	top := Flat()
	check := top
	for _, l := range layers {
		if l == nil {
			continue
		}
		p.layers = append(p.layers, l)
		if v, ok := l.(mcs.VersionedTools); ok {
			p.versioned = append(p.versioned, v)
		}
		if _, ok := l.(windowLayer); ok {
			p.windows = true
		}
		top = &node{layer: l, inner: top}
		check = &checkNode{layer: l, inner: check}
	}
	p.top, p.check = top, check
	return p
}

// windowLayer is implemented by built-in layers that expose only part of their inner
// listing at a time (a page, the active target). For registration checks a pipeline
// asks them for everything they could expose in any state.
type windowLayer interface {
	listEvery(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error)
}

// callableLayer is implemented by built-in layers that route names they do not list
// right now but that a forced call may still use in band (a page tool not offered on
// the current page). The orchestrator owns those names through ProcessLLMResponse.
type callableLayer interface {
	alsoCallable() []string
}

// alsoCallable collects the names the layers route without listing them, as of
// their last listing.
func (p *pipeline) alsoCallable() []string {
	var out []string
	for _, l := range p.layers {
		if c, ok := l.(callableLayer); ok {
			out = append(out, c.alsoCallable()...)
		}
	}
	return out
}

// everyLister is implemented by strategies that can list everything they could expose
// in any state; exact reports whether that listing equals ListTools' (no windows).
type everyLister interface {
	listEvery(ctx context.Context, drivers []Entry) (tools []mcs.Tool, exact bool, err error)
}

type pipeline struct {
	layers    []Layer
	versioned []mcs.VersionedTools
	windows   bool
	top       Strategy // the layers as listed and executed
	check     Strategy // the layers with windows opened, for registration checks
}

var (
	_ mcs.VersionedTools      = (*pipeline)(nil)
	_ mcs.InstructionProvider = (*pipeline)(nil)
	_ RegistrationChecker     = (*pipeline)(nil)
	_ everyLister             = (*pipeline)(nil)
)

func (p *pipeline) ListTools(ctx context.Context, drivers []Entry) ([]mcs.Tool, error) {
	return p.top.ListTools(ctx, drivers)
}

func (p *pipeline) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any) (any, error) {
	return p.top.ExecuteTool(ctx, drivers, name, args)
}

func (p *pipeline) listEvery(ctx context.Context, drivers []Entry) ([]mcs.Tool, bool, error) {
	tools, err := p.check.ListTools(ctx, drivers)
	return tools, !p.windows, err
}

// ToolsVersion returns the sum of the versions of the layers that implement
// mcs.VersionedTools: it increases whenever one of them does.
func (p *pipeline) ToolsVersion() uint64 {
	var v uint64
	for _, l := range p.versioned {
		v += l.ToolsVersion()
	}
	return v
}

// Instructions joins the layers' non-empty instructions, innermost first.
func (p *pipeline) Instructions(ctx context.Context) string {
	var parts []string
	for _, l := range p.layers {
		if s := l.Instructions(ctx); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// CheckRegistration runs the layers' checks in order and returns the first error.
func (p *pipeline) CheckRegistration(ctx context.Context, proposed []Entry, exposed []mcs.Tool) error {
	for _, l := range p.layers {
		if c, ok := l.(RegistrationChecker); ok {
			if err := c.CheckRegistration(ctx, proposed, exposed); err != nil {
				return err
			}
		}
	}
	return nil
}

// node is one layer of a pipeline bound to its inner strategy.
type node struct {
	layer Layer
	inner Strategy
}

func (n *node) ListTools(ctx context.Context, drivers []Entry) ([]mcs.Tool, error) {
	return n.layer.ListTools(ctx, drivers, n.inner)
}

func (n *node) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any) (any, error) {
	return n.layer.ExecuteTool(ctx, drivers, name, args, n.inner)
}

// checkNode is a node of the check chain: window layers list everything.
type checkNode struct {
	layer Layer
	inner Strategy
}

func (n *checkNode) ListTools(ctx context.Context, drivers []Entry) ([]mcs.Tool, error) {
	if w, ok := n.layer.(windowLayer); ok {
		return w.listEvery(ctx, drivers, n.inner)
	}
	return n.layer.ListTools(ctx, drivers, n.inner)
}

func (n *checkNode) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any) (any, error) {
	return n.layer.ExecuteTool(ctx, drivers, name, args, n.inner)
}
