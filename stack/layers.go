package stack

import "github.com/mcs-go/mcs/orchestrator"

func init() {
	RegisterLayerKind(LayerKind{Name: "namespacing", Summary: "label__tool names once there are several drivers",
		Decode: func(*Table) orchestrator.Layer { return orchestrator.Namespacing() }})
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
	RegisterLayerKind(LayerKind{Name: "switching", Summary: "one driver active at a time, switched by the model",
		Decode: func(*Table) orchestrator.Layer { return orchestrator.ToolSwitching() }})
}
