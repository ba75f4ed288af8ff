package approvals

import (
	"context"
	"slices"

	"github.com/mcs-go/mcs"
)

// CallName returns the name under which driver runs the call of r, for running
// an approved request through the driver's whole stack (with ContextWithRun):
// r.Tool when r has no label; otherwise, when driver is a router over drivers
// under labels (an orchestrator whose names carry their driver's label), the
// name that reaches the driver labelled r.Label: the one its [mcs.ToolRouter]
// routes there, else r.Label+"__"+r.Tool when driver lists that name; else
// r.Tool. A name that reaches another driver cannot use the approval: the
// permission middleware's fingerprint includes the label.
func CallName(ctx context.Context, driver any, r Request) string {
	if r.Label == "" {
		return r.Tool
	}
	prefixed := r.Label + "__" + r.Tool
	if rt, ok := driver.(mcs.ToolRouter); ok {
		for _, name := range []string{prefixed, r.Tool} {
			if route, ok := rt.RouteTool(ctx, name); ok && route.Label == r.Label && route.Tool == r.Tool {
				return name
			}
		}
	}
	if td, ok := driver.(mcs.ToolDriver); ok {
		if tools, err := td.ListTools(ctx); err == nil && slices.ContainsFunc(tools, func(t mcs.Tool) bool { return t.Name == prefixed }) {
			return prefixed
		}
	}
	return r.Tool
}
