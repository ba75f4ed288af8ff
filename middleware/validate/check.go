package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs/internal/textcut"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// check validates args and returns the arguments to pass on (args itself when
// nothing changed), the problems found, or the SchemaError of a broken tool.
func (c *checker) check(tool string, args map[string]any, m *Middleware) (map[string]any, []string, error) {
	if c.broken != nil && !m.passInvalid {
		return nil, nil, c.broken
	}
	out := args
	if m.coerce {
		out = c.coerceArgs(args)
	}
	var problems []string
	declared := 0
	for i := range c.params {
		if _, ok := out[c.params[i].name]; ok {
			declared++
		}
	}
	if declared < len(out) { // some argument is not a parameter
		for k := range out {
			if c.index(k) >= 0 {
				continue
			}
			switch m.unknown {
			case UnknownDrop:
				if sameMap(out, args) {
					out = copyMap(args)
				}
				delete(out, k)
			case UnknownError:
				problems = append(problems, c.unknownProblem(k))
			}
		}
	}
	for i := range c.params {
		p := &c.params[i]
		v, present := out[p.name]
		if !present || (v == nil && !p.allowsNull) {
			if p.required {
				if present {
					problems = append(problems, pointer(p.name)+": required argument is null; give a value")
				} else {
					problems = append(problems, pointer(p.name)+": required argument is missing")
				}
			}
			continue
		}
		if p.schema == nil || (p.fast != nil && p.fast.check(v, 0) == valid) {
			continue
		}
		err := p.schema.Validate(v)
		if err == nil {
			continue
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			problems = append(problems, pointer(p.name)+": "+err.Error())
			continue
		}
		if hasInvalidValue(ve) {
			// A Go value JSON Schema has no type for ([]string, a struct, int32 in a
			// map of another type): check its JSON form instead.
			jv, jerr := jsonView(v)
			if jerr != nil {
				problems = append(problems, pointer(p.name)+": want a JSON value, got "+fmt.Sprintf("%T", v)+" ("+jerr.Error()+")")
				continue
			}
			if err = p.schema.Validate(jv); err == nil {
				continue
			}
			if !errors.As(err, &ve) {
				problems = append(problems, pointer(p.name)+": "+err.Error())
				continue
			}
			v = jv
		}
		problems = describe(problems, pointer(p.name), v, ve)
	}
	if len(problems) > 1 {
		sortProblems(problems)
	}
	return out, problems, nil
}

// index returns the position of the parameter called name, or -1.
func (c *checker) index(name string) int {
	for i := range c.params {
		if c.params[i].name == name {
			return i
		}
	}
	return -1
}

func (c *checker) unknownProblem(k string) string {
	if len(c.params) == 0 {
		return pointer(k) + ": unknown argument; " + quote(c.tool) + " takes no arguments"
	}
	return pointer(k) + ": unknown argument; " + quote(c.tool) + " takes " + c.names
}

func sameMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	// maps are reference values: compare their identity
	return mapPointer(a) == mapPointer(b)
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func hasInvalidValue(e *jsonschema.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.InvalidJsonValue); ok {
		return true
	}
	for _, c := range e.Causes {
		if hasInvalidValue(c) {
			return true
		}
	}
	return false
}

// jsonView returns v as encoding/json would decode its encoding.
func jsonView(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// pointer returns the JSON Pointer of the top-level argument name.
func pointer(name string) string { return "/" + escapeToken(name) }

func escapeToken(t string) string {
	if !strings.ContainsAny(t, "~/") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

func quote(s string) string { return strconv.Quote(textcut.Prefix(s, 80)) }

// describe appends the problems of e, whose instance is v at path base.
func describe(out []string, base string, v any, e *jsonschema.ValidationError) []string {
	path := base
	for _, tok := range e.InstanceLocation {
		path += "/" + escapeToken(tok)
	}
	got := at(v, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		if len(e.Causes) == 0 {
			return append(out, path+": invalid")
		}
		for _, c := range e.Causes {
			out = describe(out, base, v, c)
		}
		return out
	case *kind.AnyOf:
		return append(out, path+": "+alternatives("anyOf", base, v, e))
	case *kind.OneOf:
		if len(k.Subschemas) >= 2 {
			return append(out, fmt.Sprintf("%s: want exactly one of the oneOf alternatives to match, got %s matching alternatives %d and %d",
				path, show(got), k.Subschemas[0]+1, k.Subschemas[1]+1))
		}
		return append(out, path+": "+alternatives("oneOf", base, v, e))
	case *kind.Type:
		return append(out, fmt.Sprintf("%s: want %s, got %s", path, typeList(k.Want), show(got)))
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			want = append(want, literal(w))
		}
		if len(want) == 1 {
			return append(out, fmt.Sprintf("%s: want %s, got %s", path, want[0], show(got)))
		}
		return append(out, fmt.Sprintf("%s: want one of %s, got %s", path, strings.Join(want, ", "), show(got)))
	case *kind.Const:
		return append(out, fmt.Sprintf("%s: want %s, got %s", path, literal(k.Want), show(got)))
	case *kind.Format:
		msg := ""
		if k.Err != nil {
			msg = " (" + textcut.Prefix(k.Err.Error(), 120) + ")"
		}
		return append(out, fmt.Sprintf("%s: want a valid %s, got %s%s", path, k.Want, show(got), msg))
	case *kind.Required:
		for _, name := range k.Missing {
			out = append(out, path+"/"+escapeToken(name)+": required property is missing")
		}
		return out
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			out = append(out, path+"/"+escapeToken(name)+": property not allowed here")
		}
		return out
	case *kind.Dependency:
		return append(out, fmt.Sprintf("%s: want properties %s too, because %s is present", path, quoteList(k.Missing), quote(k.Prop)))
	case *kind.DependentRequired:
		return append(out, fmt.Sprintf("%s: want properties %s too, because %s is present", path, quoteList(k.Missing), quote(k.Prop)))
	case *kind.PropertyNames:
		return append(out, fmt.Sprintf("%s: property name %s is not allowed", path, quote(k.Property)))
	case *kind.FalseSchema:
		return append(out, path+": no value is allowed here")
	case *kind.Not:
		return append(out, fmt.Sprintf("%s: want a value that does not match the \"not\" schema, got %s", path, show(got)))
	case *kind.MinLength:
		return append(out, fmt.Sprintf("%s: want at least %d characters, got %d", path, k.Want, k.Got))
	case *kind.MaxLength:
		return append(out, fmt.Sprintf("%s: want at most %d characters, got %d", path, k.Want, k.Got))
	case *kind.Pattern:
		return append(out, fmt.Sprintf("%s: want a string matching the pattern %s, got %s", path, quote(k.Want), show(got)))
	case *kind.Minimum:
		return append(out, fmt.Sprintf("%s: want a number >= %s, got %s", path, rat(k.Want), show(got)))
	case *kind.Maximum:
		return append(out, fmt.Sprintf("%s: want a number <= %s, got %s", path, rat(k.Want), show(got)))
	case *kind.ExclusiveMinimum:
		return append(out, fmt.Sprintf("%s: want a number > %s, got %s", path, rat(k.Want), show(got)))
	case *kind.ExclusiveMaximum:
		return append(out, fmt.Sprintf("%s: want a number < %s, got %s", path, rat(k.Want), show(got)))
	case *kind.MultipleOf:
		return append(out, fmt.Sprintf("%s: want a multiple of %s, got %s", path, rat(k.Want), show(got)))
	case *kind.MinItems:
		return append(out, fmt.Sprintf("%s: want at least %d items, got %d", path, k.Want, k.Got))
	case *kind.MaxItems:
		return append(out, fmt.Sprintf("%s: want at most %d items, got %d", path, k.Want, k.Got))
	case *kind.UniqueItems:
		return append(out, fmt.Sprintf("%s: want unique items, got equal items at %d and %d", path, k.Duplicates[0], k.Duplicates[1]))
	case *kind.MinProperties:
		return append(out, fmt.Sprintf("%s: want at least %d properties, got %d", path, k.Want, k.Got))
	case *kind.MaxProperties:
		return append(out, fmt.Sprintf("%s: want at most %d properties, got %d", path, k.Want, k.Got))
	case *kind.InvalidJsonValue:
		return append(out, fmt.Sprintf("%s: want a JSON value, got Go type %T", path, k.Value))
	}
	return append(out, path+": "+e.ErrorKind.LocalizedString(printer))
}

// alternatives describes a failed anyOf or oneOf: the problems of each
// alternative, so the model can aim at one.
func alternatives(kw, base string, v any, e *jsonschema.ValidationError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "want a value matching one of the %d %s alternatives, got %s matching none", len(e.Causes), kw, show(at(v, e.InstanceLocation)))
	for i, c := range e.Causes {
		sub := describe(nil, base, v, c)
		sortProblems(sub)
		fmt.Fprintf(&b, " | alternative %d: %s", i+1, strings.Join(sub, ", "))
	}
	return b.String()
}

// at returns the value at the JSON Pointer tokens inside v, or nil.
func at(v any, tokens []string) any {
	for _, t := range tokens {
		switch x := v.(type) {
		case map[string]any:
			v = x[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// show names the JSON type of v and, for a scalar, its value:
// string "five", number 2.5, boolean true, null, object, array of 3.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + quote(x)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case json.Number:
		return "number " + textcut.Prefix(x.String(), 40)
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("number %v", x)
	case map[string]any:
		return "object"
	case []any:
		return fmt.Sprintf("array of %d", len(x))
	}
	return fmt.Sprintf("%T", v)
}

// literal renders a wanted value as JSON, cut.
func literal(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if len(s) > 80 {
		s = textcut.Prefix(s, 77) + "..."
	}
	return s
}

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

// typeList joins JSON type names with "or", null last: "integer or null".
func typeList(want []string) string {
	l := make([]string, 0, len(want))
	null := false
	for _, w := range want {
		if w == "null" {
			null = true
			continue
		}
		l = append(l, w)
	}
	if null {
		l = append(l, "null")
	}
	return strings.Join(l, " or ")
}
