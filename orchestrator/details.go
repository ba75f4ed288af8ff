package orchestrator

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
)

// DetailsTool is the name of the tool [DetailLoading] adds.
const DetailsTool = "get_tool_details"

// DetailLoading returns the Layer that shortens long tool descriptions and adds the
// tool DetailsTool, which returns the full description and the parameters of a named
// tool. A description (the title, for a tool without one) longer than maxDescLen
// characters (runes) is cut so that it is exactly maxDescLen characters long, the
// trailing "..." included; shorter ones, and parameters, are unchanged. The details
// tool is added when the inner listing is not empty; an inner tool of the same name is
// hidden by it. The layer contributes an instruction that explains the "...".
//
// DetailsTool resolves names as the layer's inner listing has them. Namespacing
// presents the drivers under their exposed names to the layers inside it, so either
// order works with it; put DetailLoading outside (after) any layer that renames tools
// otherwise. Put it outside Pagination too: then its tool is listed on every page and
// describes the tools of the current page, whereas inside Pagination it would be one
// more tool of the last page. It panics when maxDescLen is less than 4, which is a
// programming error. The result is safe for concurrent use.
func DetailLoading(maxDescLen int) Layer {
	if maxDescLen < 4 {
		panic(fmt.Sprintf("orchestrator: DetailLoading(%d): the length must be at least 4", maxDescLen))
	}
	return &detailLoading{max: maxDescLen}
}

type detailLoading struct{ max int }

var detailsTool = mcs.Tool{
	Name:        DetailsTool,
	Title:       "Tool details",
	Description: "Returns the full description and the parameters of a tool.",
	Parameters: []mcs.Parameter{{
		Name:        "name",
		Description: "The name of the tool, exactly as listed.",
		Required:    true,
	}},
}

// cut shortens s to d.max runes, "..." included, when it is longer.
func (d *detailLoading) cut(s string) string {
	if utf8.RuneCountInString(s) <= d.max {
		return s
	}
	n := 0
	for i := range s {
		if n == d.max-3 {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

func (d *detailLoading) ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	tools, err := inner.ListTools(ctx, drivers)
	if len(tools) == 0 {
		return tools, err
	}
	out := make([]mcs.Tool, 0, len(tools)+1)
	for _, t := range tools {
		if t.Name == DetailsTool {
			continue
		}
		t.Description = d.cut(t.Description)
		if t.Description == "" {
			t.Title = d.cut(t.Title)
		}
		out = append(out, t)
	}
	return append(out, detailsTool), err
}

func (d *detailLoading) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error) {
	if name != DetailsTool {
		return inner.ExecuteTool(ctx, drivers, name, args)
	}
	want, ok := args["name"].(string)
	if !ok || want == "" {
		return nil, fmt.Errorf("%s needs the argument \"name\", a string: the name of a listed tool", DetailsTool)
	}
	tools, err := inner.ListTools(ctx, drivers)
	for _, t := range tools {
		if t.Name == want && t.Name != DetailsTool {
			return map[string]any{
				"name":        t.Name,
				"description": t.Summary(),
				"parameters":  mcs.ToolSchema(t),
			}, nil
		}
	}
	if len(tools) == 0 && err != nil {
		return nil, fmt.Errorf("%s: %w", DetailsTool, err)
	}
	return nil, unknownTool(want, "no tool of this name is listed; use a name from the tool list")
}

func (d *detailLoading) Instructions(context.Context) string {
	return fmt.Sprintf("Tool descriptions that end in \"...\" are shortened; call %s with the tool's name for the full description and parameters.", DetailsTool)
}
