package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
	"github.com/mcs-go/mcs/orchestrator"
)

// The schema helpers are shared with the web console (internal/calls).
func typeHint(s map[string]any) string                 { return calls.TypeHint(s) }
func enumHint(s map[string]any) string                 { return calls.EnumHint(s) }
func defaultHint(s map[string]any) (string, bool)      { return calls.DefaultHint(s) }
func coerce(p mcs.Parameter, text string) (any, error) { return calls.Coerce(p, text) }

// findTool returns the tool called name; else the error lists the tools whose
// names contain name, or says how to list them.
func findTool(tools []mcs.Tool, name string) (mcs.Tool, error) {
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
	}
	var near []string
	for _, t := range tools {
		if strings.Contains(strings.ToLower(t.Name), strings.ToLower(name)) {
			near = append(near, t.Name)
		}
	}
	if len(near) > 0 {
		slices.Sort(near)
		return mcs.Tool{}, fmt.Errorf("no tool is called %q; did you mean %s?", name, strings.Join(near, ", "))
	}
	return mcs.Tool{}, fmt.Errorf("no tool is called %q; run mcs tools to list them", name)
}

// resolveTool returns the tool called name: from the listing tools of td, else
// from td's own lookup ([mcs.ToolDefiner]), else, when the listing hides its
// tools behind a search tool ([orchestrator.ToolSearch]), by searching for the
// name as a model would, which makes the tool listed and callable; the search
// runs through the stack's middleware like any call (audited, and asked when
// the policy asks). The error is findTool's, with what the search found.
func resolveTool(ctx context.Context, td mcs.ToolDriver, tools []mcs.Tool, name string) (mcs.Tool, error) {
	t, err := findTool(tools, name)
	if err == nil {
		return t, nil
	}
	if d, ok := td.(mcs.ToolDefiner); ok {
		if t, ok, derr := d.ToolDefinition(ctx, name); derr == nil && ok {
			return t, nil
		}
	}
	if name == orchestrator.SearchTool || !slices.ContainsFunc(tools, func(t mcs.Tool) bool { return t.Name == orchestrator.SearchTool }) {
		return mcs.Tool{}, err
	}
	res, serr := td.ExecuteTool(ctx, orchestrator.SearchTool, map[string]any{"query": name})
	if serr != nil {
		return mcs.Tool{}, fmt.Errorf("%s is not listed, and searching for it failed: %w", name, serr)
	}
	if listed, lerr := td.ListTools(ctx); lerr == nil {
		if t, ferr := findTool(listed, name); ferr == nil {
			return t, nil
		}
	}
	if sr, ok := res.(*orchestrator.SearchResult); ok && len(sr.Tools) > 0 {
		names := make([]string, len(sr.Tools))
		for i, ft := range sr.Tools {
			names[i] = ft.Name
		}
		return mcs.Tool{}, fmt.Errorf("no tool is called %q; a search for it found %s", name, strings.Join(names, ", "))
	}
	return mcs.Tool{}, fmt.Errorf("no tool is called %q, and a search for it found none; run mcs call %s query=WORDS to search", name, orchestrator.SearchTool)
}

// param returns the parameter called name.
func param(t mcs.Tool, name string) (mcs.Parameter, bool) {
	for _, p := range t.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return mcs.Parameter{}, false
}

func paramNames(t mcs.Tool) string {
	if len(t.Parameters) == 0 {
		return "it takes none"
	}
	names := make([]string, len(t.Parameters))
	for i, p := range t.Parameters {
		names[i] = p.Name
	}
	return "its parameters are " + strings.Join(names, ", ")
}

// firstLine is the first line of s, cut to n runes with "...".
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}
