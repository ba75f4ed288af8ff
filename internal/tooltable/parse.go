package tooltable

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Parse checks the model-supplied args against the parameters of t and returns
// them normalised by declared type: "string" as string, "integer" as int64,
// "boolean" as bool. A parameter whose Schema type is a list starting with
// "string" (such as ["string", "number"]) also takes the other listed types,
// rendered as strings. A JSON null counts as absent. Unknown names, missing required
// arguments and values of the wrong type give an error that lists the parameters.
// Parse does not modify args; it is safe for concurrent use.
func Parse(t *mcs.Tool, args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	var unknown []string
	for name := range args {
		if !slices.ContainsFunc(t.Parameters, func(p mcs.Parameter) bool { return p.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("unknown argument %s; %s", QuoteList(unknown), paramList(t))
	}
	for _, p := range t.Parameters {
		v, ok := args[p.Name]
		if !ok || v == nil {
			if p.Required {
				return nil, fmt.Errorf("missing required argument %q; %s", p.Name, paramList(t))
			}
			continue
		}
		nv, err := normalise(p, v)
		if err != nil {
			return nil, err
		}
		out[p.Name] = nv
	}
	return out, nil
}

// String returns the string argument name of args as Parse returned them, or def
// when it is absent.
func String(args map[string]any, name, def string) string {
	if s, ok := args[name].(string); ok {
		return s
	}
	return def
}

// Int returns the integer argument name of args as Parse returned them, or def
// when it is absent.
func Int(args map[string]any, name string, def int64) int64 {
	if n, ok := args[name].(int64); ok {
		return n
	}
	return def
}

// QuoteList quotes each of names as a Go string literal and joins them with
// ", ", in the given order, for error messages: "a", "b".
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// paramList describes the parameters of t for an error message.
func paramList(t *mcs.Tool) string {
	if len(t.Parameters) == 0 {
		return t.Name + " takes no arguments"
	}
	parts := make([]string, len(t.Parameters))
	for i, p := range t.Parameters {
		parts[i] = p.Name + " (" + strings.Join(paramTypes(p), " or ")
		if p.Required {
			parts[i] += ", required"
		}
		parts[i] += ")"
	}
	return "the parameters of " + t.Name + " are: " + strings.Join(parts, ", ")
}

// paramTypes returns the JSON types a parameter declares, "string" when none.
func paramTypes(p mcs.Parameter) []string {
	switch t := p.Schema["type"].(type) {
	case string:
		return []string{t}
	case []string:
		if len(t) > 0 {
			return t
		}
	}
	return []string{"string"}
}

// normalise converts v to the declared type of p, or says why it cannot.
func normalise(p mcs.Parameter, v any) (any, error) {
	types := paramTypes(p)
	switch types[0] {
	case "integer":
		n, ok := toInt(v)
		if !ok {
			return nil, fmt.Errorf("argument %q must be an integer, got %s", p.Name, describe(v))
		}
		if minimum, ok := p.Schema["minimum"].(int); ok && n < int64(minimum) {
			return nil, fmt.Errorf("argument %q must be at least %d, got %d", p.Name, minimum, n)
		}
		return n, nil
	case "boolean":
		switch b := v.(type) {
		case bool:
			return b, nil
		case string:
			if pb, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
				return pb, nil
			}
		}
		return nil, fmt.Errorf("argument %q must be true or false, got %s", p.Name, describe(v))
	default:
		switch x := v.(type) {
		case string:
			return x, nil
		case float64:
			if slices.Contains(types, "number") {
				return strconv.FormatFloat(x, 'f', -1, 64), nil
			}
		case bool:
			if slices.Contains(types, "boolean") {
				return strconv.FormatBool(x), nil
			}
		}
		return nil, fmt.Errorf("argument %q must be %s, got %s", p.Name, strings.Join(articled(types), " or "), describe(v))
	}
}

// articled names JSON types with their article: "a string", "a number".
func articled(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer":
			out[i] = "an integer"
		default:
			out[i] = "a " + t
		}
	}
	return out
}

// toInt accepts a JSON number with an integral value, a Go integer, or a string
// holding an integer (models often quote numbers).
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// describe names the JSON type and, for a short value, the value itself.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return fmt.Sprintf("the string %q...", textcut.Prefix(x, 40))
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case float64, int, int64, json.Number:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a value of type %T", v)
}
