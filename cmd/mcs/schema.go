package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// schemaTypes returns the JSON Schema types a parameter may take, null left out,
// in the schema's order: those of its type key (a name or a list), else those of
// the branches of anyOf and oneOf, else "object" when it has properties and
// "array" when it has items, else "string". It never returns an empty list.
func schemaTypes(s map[string]any) []string {
	var out []string
	add := func(t string) {
		if t != "" && t != "null" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	switch t := s["type"].(type) {
	case string:
		add(t)
	case []any:
		for _, e := range t {
			if str, ok := e.(string); ok {
				add(str)
			}
		}
	}
	if len(out) == 0 {
		for _, key := range []string{"anyOf", "oneOf"} {
			branches, _ := s[key].([]any)
			for _, b := range branches {
				if m, ok := b.(map[string]any); ok && len(m) > 0 {
					if _, typed := m["type"]; typed || m["properties"] != nil || m["items"] != nil || m["anyOf"] != nil || m["oneOf"] != nil {
						for _, t := range schemaTypes(m) {
							add(t)
						}
					}
				}
			}
		}
	}
	if len(out) == 0 {
		if _, ok := s["properties"]; ok {
			add("object")
		} else if _, ok := s["items"]; ok {
			add("array")
		}
	}
	if len(out) == 0 {
		out = append(out, "string")
	}
	return out
}

// branchOf returns the part of s that declares type t: s itself, or the first
// anyOf or oneOf branch of that type.
func branchOf(s map[string]any, t string) map[string]any {
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, _ := s[key].([]any)
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok && slices.Contains(schemaTypes(m), t) {
				if _, typed := m["type"]; typed || m["properties"] != nil || m["items"] != nil {
					return branchOf(m, t)
				}
			}
		}
	}
	return s
}

// typeHint describes a parameter's type for people: "integer", "array of
// string", "object|string" for a parameter of several types.
func typeHint(s map[string]any) string {
	types := schemaTypes(s)
	for i, t := range types {
		if t == "array" {
			if items, ok := branchOf(s, "array")["items"].(map[string]any); ok {
				types[i] = "array of " + typeHint(items)
			}
		}
	}
	return strings.Join(types, "|")
}

// enumHint lists the allowed values, "a|b|c", or "".
func enumHint(s map[string]any) string {
	list, _ := s["enum"].([]any)
	if items, ok := s["items"].(map[string]any); ok && list == nil {
		list, _ = items["enum"].([]any)
	}
	parts := make([]string, 0, len(list))
	for _, v := range list {
		parts = append(parts, scalar(v))
	}
	return strings.Join(parts, "|")
}

// defaultHint is the schema's default value as text, or "".
func defaultHint(s map[string]any) (string, bool) {
	v, ok := s["default"]
	if !ok {
		return "", false
	}
	return scalar(v), true
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// coerce turns text typed by a person into the value the parameter's schema asks
// for: integers, numbers and booleans are parsed, arrays are JSON or
// comma-separated values (each coerced to the items' type), objects are JSON,
// strings stay as typed. For a parameter of several types (a type list, anyOf,
// oneOf), text that starts with "{" or "[" is JSON when an object or an array
// is among them; else text stays as typed when a string is among them; else it
// becomes the first of the types it parses as.
func coerce(p mcs.Parameter, text string) (any, error) {
	types := schemaTypes(p.Schema)
	if len(types) == 1 {
		return coerceAs(p, types[0], p.Schema, text)
	}
	t := strings.TrimSpace(text)
	for _, j := range []struct{ prefix, typ string }{{"{", "object"}, {"[", "array"}} {
		if strings.HasPrefix(t, j.prefix) && slices.Contains(types, j.typ) {
			return coerceAs(p, j.typ, branchOf(p.Schema, j.typ), text)
		}
	}
	if slices.Contains(types, "string") {
		return text, nil
	}
	for _, typ := range types {
		if v, err := coerceAs(p, typ, branchOf(p.Schema, typ), text); err == nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("parameter %s wants a value of type %s, not %q", p.Name, strings.Join(types, " or "), text)
}

// coerceAs converts text to the type typ of the schema s.
func coerceAs(p mcs.Parameter, typ string, s map[string]any, text string) (any, error) {
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parameter %s wants an integer, not %q", p.Name, text)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return nil, fmt.Errorf("parameter %s wants a number, not %q", p.Name, text)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("parameter %s wants true or false, not %q", p.Name, text)
		}
		return b, nil
	case "array":
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "[") {
			var v []any
			if err := json.Unmarshal([]byte(t), &v); err != nil {
				return nil, fmt.Errorf("parameter %s wants a JSON array or comma-separated values: %v", p.Name, err)
			}
			return v, nil
		}
		items, _ := s["items"].(map[string]any)
		if items == nil {
			items = map[string]any{}
		}
		out := []any{}
		for _, part := range strings.Split(text, ",") {
			v, err := coerce(mcs.Parameter{Name: p.Name, Schema: items}, strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case "object":
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return nil, fmt.Errorf("parameter %s wants a JSON object, such as {\"key\": \"value\"}: %v", p.Name, err)
		}
		return v, nil
	}
	return text, nil
}

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
