package calls

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs"
)

// SchemaTypes returns the JSON Schema types a parameter may take, null left out,
// in the schema's order: those of its type key (a name or a list), else those of
// the branches of anyOf and oneOf, else "object" when it has properties and
// "array" when it has items, else "string". It never returns an empty list.
func SchemaTypes(s map[string]any) []string {
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
						for _, t := range SchemaTypes(m) {
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

// BranchOf returns the part of s that declares type t: s itself, or the first
// anyOf or oneOf branch of that type.
func BranchOf(s map[string]any, t string) map[string]any {
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, _ := s[key].([]any)
		for _, b := range branches {
			if m, ok := b.(map[string]any); ok && slices.Contains(SchemaTypes(m), t) {
				if _, typed := m["type"]; typed || m["properties"] != nil || m["items"] != nil {
					return BranchOf(m, t)
				}
			}
		}
	}
	return s
}

// TypeHint describes a parameter's type for people: "integer", "array of
// string", "object|string" for a parameter of several types.
func TypeHint(s map[string]any) string {
	types := SchemaTypes(s)
	for i, t := range types {
		if t == "array" {
			if items, ok := BranchOf(s, "array")["items"].(map[string]any); ok {
				types[i] = "array of " + TypeHint(items)
			}
		}
	}
	return strings.Join(types, "|")
}

// EnumHint lists the allowed values, "a|b|c", or "".
func EnumHint(s map[string]any) string {
	list, _ := s["enum"].([]any)
	if items, ok := s["items"].(map[string]any); ok && list == nil {
		list, _ = items["enum"].([]any)
	}
	parts := make([]string, 0, len(list))
	for _, v := range list {
		parts = append(parts, Scalar(v))
	}
	return strings.Join(parts, "|")
}

// DefaultHint is the schema's default value as text, or "".
func DefaultHint(s map[string]any) (string, bool) {
	v, ok := s["default"]
	if !ok {
		return "", false
	}
	return Scalar(v), true
}

func Scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Coerce turns text typed by a person into the value the parameter's schema asks
// for: integers, numbers and booleans are parsed, arrays are JSON or
// comma-separated values (each coerced to the items' type), objects are JSON,
// strings stay as typed. For a parameter of several types (a type list, anyOf,
// oneOf), text that starts with "{" or "[" is JSON when an object or an array
// is among them; else text stays as typed when a string is among them; else it
// becomes the first of the types it parses as.
func Coerce(p mcs.Parameter, text string) (any, error) {
	types := SchemaTypes(p.Schema)
	if len(types) == 1 {
		return coerceAs(p, types[0], p.Schema, text)
	}
	t := strings.TrimSpace(text)
	for _, j := range []struct{ prefix, typ string }{{"{", "object"}, {"[", "array"}} {
		if strings.HasPrefix(t, j.prefix) && slices.Contains(types, j.typ) {
			return coerceAs(p, j.typ, BranchOf(p.Schema, j.typ), text)
		}
	}
	if slices.Contains(types, "string") {
		return text, nil
	}
	for _, typ := range types {
		if v, err := coerceAs(p, typ, BranchOf(p.Schema, typ), text); err == nil {
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
			v, err := Coerce(mcs.Parameter{Name: p.Name, Schema: items}, strings.TrimSpace(part))
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
