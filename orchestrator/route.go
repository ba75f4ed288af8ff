package orchestrator

import (
	"context"
	"strings"

	"github.com/mcs-go/mcs"
)

var _ mcs.ToolRouter = (*engine)(nil)

// RouteTool tells which registered driver a call of name reaches, so that the
// orchestrator's own middleware ([mcs.CallInfo].Route) can tell the drivers apart
// before the call is routed. It can when the names carry their driver's label: the
// strategy is a [Pipeline] of the layers of this package with [Namespacing] prefixing
// the call's driver set (two drivers or more, or [AlwaysNamespacing]), so that every
// name a driver serves begins with its label and "__". The route is then that label
// and the driver's own name for the tool, a shortened name resolved.
//
// It reports false for a name of a layer's own (tools__search, the page tools), for
// a label no driver of the call's set is registered under, and for every name when
// names carry no label: under [Flat], Namespacing over one driver, [ToolSwitching]
// outside Namespacing, or a layer or strategy of one's own, which may rename. The
// text of a name alone never names a driver.
func (e *engine) RouteTool(ctx context.Context, name string) (mcs.ToolRoute, bool) {
	ns, ok := namespacedBy(e.o.strategy, name)
	if !ok {
		return mcs.ToolRoute{}, false
	}
	label, rest, ok := strings.Cut(name, Separator)
	if !ok || rest == "" {
		return mcs.ToolRoute{}, false
	}
	set := e.o.set.Load()
	if l, _ := e.o.listingFor(ctx); l != nil {
		set = l.stamp.set
	}
	if len(set.entries) < 2 && !(ns.always && len(set.entries) == 1) {
		return mcs.ToolRoute{}, false
	}
	i, ok := set.labels[label]
	if !ok {
		return mcs.ToolRoute{}, false
	}
	if len(name) == maxExposedName && looksShortened(name) {
		// The driver's own name is known from the view's last listing only.
		view, ok := ns.views.load(set.entries)
		if !ok {
			return mcs.ToolRoute{}, false
		}
		p, ok := view[i].Driver.(*prefixed)
		if !ok {
			return mcs.ToolRoute{}, false
		}
		inner, ok := p.short.lookup(name)
		if !ok {
			return mcs.ToolRoute{}, false
		}
		rest = inner
	}
	return mcs.ToolRoute{Label: label, Tool: rest}, true
}

// namespacedBy returns the Namespacing layer of s when s is a Pipeline of this
// package's layers in which that layer sees the whole driver set, and name is not
// the name of a tool a layer adds; ok is false otherwise.
func namespacedBy(s Strategy, name string) (ns *namespacing, ok bool) {
	p, isPipeline := s.(*pipeline)
	if !isPipeline {
		return nil, false
	}
	for _, l := range p.layers {
		switch l := l.(type) {
		case *namespacing:
			if ns != nil {
				return nil, false // prefixes stacked in one orchestrator
			}
			ns = l
		case *Switching:
			if ns != nil && !ns.always {
				return nil, false // namespacing sees one driver at a time
			}
		case *toolSearch:
			if name == SearchTool {
				return nil, false
			}
		case *Paginator:
			if name == NextPageTool || name == PrevPageTool {
				return nil, false
			}
		case *detailLoading:
			if name == DetailsTool {
				return nil, false
			}
		case rejectConflicts:
		default:
			return nil, false // a layer of one's own may rename
		}
	}
	return ns, ns != nil
}

var _ mcs.ToolHider = (*engine)(nil)

// HidesTool reports whether the registered driver that serves the exposed tool of
// info hides it (see [mcs.ToolHider]; the orchestrator lists its drivers with the
// tools they hide, so that it routes their calls). The driver is found by the route
// (see RouteTool) or, when names carry no label, by the listing of [Flat] under a
// Pipeline of this package's layers; when it cannot be told, the tool is shown.
func (e *engine) HidesTool(ctx context.Context, info mcs.CallInfo) bool {
	set := e.o.set.Load()
	if l, _ := e.o.listingFor(ctx); l != nil {
		set = l.stamp.set
	}
	var entry Entry
	def := info.Tool
	if r, ok := e.RouteTool(ctx, def.Name); ok {
		entry, def.Name = set.entries[set.labels[r.Label]], r.Tool
	} else if i, ok := flatRoute(e.o.strategy, set.entries, def.Name); ok {
		entry = set.entries[i]
	} else {
		return false
	}
	h, ok := entry.Driver.(mcs.ToolHider)
	return ok && h.HidesTool(ctx, mcs.CallInfo{Label: entry.Label, Tool: def})
}

// flatRoute returns the position in drivers of the driver that [Flat] sends a call
// of name to, as of its last listing of drivers, when s is Flat or a Pipeline of
// this package's layers that hands Flat the drivers unchanged (no Namespacing over
// two drivers or more, no ToolSwitching).
func flatRoute(s Strategy, drivers []Entry, name string) (int, bool) {
	var f *flat
	switch s := s.(type) {
	case *flat:
		f = s
	case *pipeline:
		for _, l := range s.layers {
			switch l := l.(type) {
			case *namespacing:
				if l.always || len(drivers) > 1 {
					return 0, false
				}
			case *toolSearch, *Paginator, *detailLoading, rejectConflicts:
			default:
				return 0, false
			}
		}
		n := s.top
		for f == nil {
			switch x := n.(type) {
			case *node:
				n = x.inner
			case *flat:
				f = x
			default:
				return 0, false
			}
		}
	default:
		return 0, false
	}
	routes, ok := f.routes.load(drivers)
	if !ok {
		return 0, false
	}
	i, ok := routes[name]
	return i, ok
}
