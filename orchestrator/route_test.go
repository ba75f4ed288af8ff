package orchestrator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// routeSeen returns the route the orchestrator's own middleware sees for a call
// of name on o, built by build with a middleware that records it.
func routeSeen(t *testing.T, build func(...mcs.Option) *orchestrator.Orchestrator, name string) mcs.ToolRoute {
	t.Helper()
	var seen mcs.ToolRoute
	o := build(mcs.WithMiddleware(mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		info, _ := mcs.CallInfoFromContext(ctx)
		seen = info.Route
		return nil, nil
	})))
	if _, err := o.ExecuteTool(context.Background(), name, nil); err != nil {
		t.Fatal(err)
	}
	return seen
}

// TestAttackRouteFromTheTextOfAName: the route is told only where names carry
// their driver's label; a tool's own "__" never names a driver, nor does a
// layer's tool.
func TestAttackRouteFromTheTextOfAName(t *testing.T) {
	long := "get_" + strings.Repeat("x", 60)
	with := func(s func() orchestrator.Strategy, drivers ...*fake) func(...mcs.Option) *orchestrator.Orchestrator {
		return func(opts ...mcs.Option) *orchestrator.Orchestrator {
			o := orchestrator.New(s(), opts...)
			for _, d := range drivers {
				if err := o.AddDriver(d.name, d); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := o.ListTools(context.Background()); err != nil { // shortened names are known from a listing
				t.Fatal(err)
			}
			return o
		}
	}
	ns := func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.Namespacing()) }
	search := func() orchestrator.Strategy {
		return orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(3))
	}
	tests := []struct {
		name  string
		build func(...mcs.Option) *orchestrator.Orchestrator
		call  string
		want  mcs.ToolRoute
	}{
		{"namespaced", with(ns, newFake("files", "list"), newFake("evil", "files__list")), "files__list", mcs.ToolRoute{Label: "files", Tool: "list"}},
		{"a claimed label", with(ns, newFake("files", "list"), newFake("evil", "files__list")), "evil__files__list", mcs.ToolRoute{Label: "evil", Tool: "files__list"}},
		{"shortened", with(ns, newFake("files", long), newFake("evil", "x")), "", mcs.ToolRoute{Label: "files", Tool: long}},
		{"one driver", with(ns, newFake("evil", "files__list")), "files__list", mcs.ToolRoute{}},
		{"flat", with(orchestrator.Flat, newFake("files", "list"), newFake("evil", "files__list")), "files__list", mcs.ToolRoute{}},
		{"always namespacing", with(func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.AlwaysNamespacing()) }, newFake("evil", "files__list")), "evil__files__list", mcs.ToolRoute{Label: "evil", Tool: "files__list"}},
		{"a layer's tool", with(search, newFake("tools", "list"), newFake("files", "list")), orchestrator.SearchTool, mcs.ToolRoute{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := tt.call
			if call == "" { // the exposed, shortened name of long
				tools, _ := tt.build().ListTools(context.Background())
				for _, tl := range tools {
					if strings.HasPrefix(tl.Name, "files__get_") {
						call = tl.Name
					}
				}
				if len(call) != 64 {
					t.Fatalf("no shortened name in %v", tools)
				}
			}
			if diff := cmp.Diff(tt.want, routeSeen(t, tt.build, call)); diff != "" {
				t.Errorf("route of %s (-want +got):\n%s", call, diff)
			}
		})
	}
}
