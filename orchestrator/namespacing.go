package orchestrator

import (
	"context"

	"github.com/mcs-go/mcs"
)

// Separator joins a driver's label and a tool name under [Namespacing].
const Separator = "__"

// Namespacing returns the Layer that, with more than one driver, exposes every tool
// of a driver as <label>__<tool> with its description prefixed "[<label>] ", and routes
// calls by label. With one driver (or none) names and descriptions are unchanged.
//
// The layer presents each driver to the layers inside it under its exposed names, so
// tools that an inner layer adds (such as get_tool_details) keep their own names and
// see namespaced names, and nested orchestrators stack their prefixes:
// outer__inner__tool, "[outer] [inner] text". Namespaced names can never collide with
// each other; they are checked against the 64-character rule when a driver is added.
// A namespaced name longer than 64 characters is shortened the way the REST driver
// shortens its names (its start, "_" and seven hex digits of a hash of the whole
// name; stable across runs) and routed back to the driver's own name; errors that name
// the driver's tool, and the results of a nested [ToolSearch], are renamed to the
// exposed names. The result is safe for concurrent use.
func Namespacing() Layer { return &namespacing{} }

type namespacing struct {
	views  memo[[]Entry]
	always bool // prefix even a single driver (AlwaysNamespacing)
}

// view returns drivers as the inner layers see them: each driver behind its prefix
// when there is more than one. The view is remembered per driver slice, so the inner
// strategy is handed the same slice on every call.
func (n *namespacing) view(drivers []Entry) []Entry {
	if len(drivers) < 2 && !(n.always && len(drivers) == 1) {
		return drivers
	}
	if v, ok := n.views.load(drivers); ok {
		return v
	}
	v := make([]Entry, len(drivers))
	for i, e := range drivers {
		v[i] = Entry{Label: e.Label, Driver: &prefixed{label: e.Label, prefix: e.Label + Separator, d: e.Driver}}
	}
	n.views.store(drivers, v)
	return v
}

func (n *namespacing) ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	return inner.ListTools(ctx, n.view(drivers))
}

func (n *namespacing) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error) {
	return inner.ExecuteTool(ctx, n.view(drivers), name, args)
}

func (n *namespacing) Instructions(context.Context) string { return "" }

// prefixed presents a driver under <label>__ names.
type prefixed struct {
	label, prefix string
	d             mcs.ToolDriver
	short         shortNames // exposed names that were shortened
}

var _ mcs.ToolDriver = (*prefixed)(nil)

func (p *prefixed) Meta() mcs.Meta { return p.d.Meta() }

func (p *prefixed) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	tools, err := p.d.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]mcs.Tool, len(tools))
	shortened := map[string]string{}
	defer p.short.store(shortened)
	for i, t := range tools {
		inner := t.Name
		t.Name = p.expose(inner, shortened)
		s := t.Summary()
		if t.Name != p.prefix+inner {
			// The shortened name keeps a hash, not the driver's own name: the
			// description names it first, so that cutting the description
			// (DetailLoading) keeps it too.
			if s != "" {
				s = "(" + inner + ") " + s
			} else {
				s = "(" + inner + ")"
			}
		}
		if s != "" {
			t.Description = "[" + p.label + "] " + s
		}
		out[i] = t
	}
	return out, nil
}

func (p *prefixed) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	inner, ok := p.internal(ctx, name)
	if !ok {
		return nil, unknownTool(name, "it does not start with "+p.prefix)
	}
	res, err := p.d.ExecuteTool(ctx, inner, args)
	return p.translate(inner, name, res, err)
}

// AlwaysNamespacing returns the Layer of [Namespacing] that prefixes the tools of
// every driver, also when only one is registered: a tool keeps the name
// <label>__<tool> while drivers come and go, so a call written while a second
// driver was being added still reaches its tool. Use it where the driver set
// changes at run time. The result is safe for concurrent use.
//
// With Namespacing, a name that changes (read_file becoming files__read_file when a
// second driver arrives) is answered, for a call made under the old name, with an
// error wrapping [mcs.ErrUnknownTool] that gives the new name; it is never ignored.
func AlwaysNamespacing() Layer { return &namespacing{always: true} }
