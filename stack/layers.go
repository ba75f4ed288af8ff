package stack

import "github.com/mcs-go/mcs/orchestrator"

// The built-in orchestrator layers. Each reads its settings from the
// [orchestrator] table:
//
//	[orchestrator]
//	strategy = ["namespacing", "tool_search"]   # innermost first
//	max_results = 5                             # tool_search: tools per search, 1 to 100
//	max_description = 200                       # detail_loading: characters, at least 20
//	page_size = 20                              # pagination: tools per page
//
// namespacing prefixes names with the label once there are two drivers;
// always_namespacing prefixes them always (use one of the two).

func init() {
	RegisterLayerKind(LayerKind{Name: "namespacing", Summary: "label__tool names once there are several drivers",
		Decode: func(*Table) orchestrator.Layer { return orchestrator.Namespacing() }})
	RegisterLayerKind(LayerKind{Name: "always_namespacing", Summary: "label__tool names also for a single driver, stable while drivers come and go",
		Decode: func(*Table) orchestrator.Layer { return orchestrator.AlwaysNamespacing() }})
	RegisterLayerKind(LayerKind{Name: "reject_conflicts", Summary: "refuse a stack in which two tools share a name",
		Decode: func(*Table) orchestrator.Layer { return orchestrator.RejectConflicts() }})
	RegisterLayerKind(LayerKind{Name: "detail_loading", Summary: "cut descriptions to max_description characters (default 200); details on demand",
		Decode: func(t *Table) orchestrator.Layer {
			n := t.Int("max_description", 20, 1<<20)
			if n == 0 {
				n = 200
			}
			return orchestrator.DetailLoading(int(n))
		}})
	RegisterLayerKind(LayerKind{Name: "pagination", Summary: "show page_size tools at a time (default 20)",
		Decode: func(t *Table) orchestrator.Layer {
			n := t.Int("page_size", 1, 1<<20)
			if n == 0 {
				n = 20
			}
			return orchestrator.Pagination(int(n))
		}})
	RegisterLayerKind(LayerKind{Name: "tool_search", Summary: "a compact index and a search tool returning at most max_results tools (default 5) instead of the full listing; put it after namespacing",
		Decode: func(t *Table) orchestrator.Layer {
			n := t.Int("max_results", 1, 100)
			if n == 0 {
				n = 5
			}
			return orchestrator.ToolSearch(int(n))
		}})
	RegisterLayerKind(LayerKind{Name: "switching", Summary: "one driver active at a time, switched by the model",
		Decode: func(*Table) orchestrator.Layer { return orchestrator.ToolSwitching() }})
}
