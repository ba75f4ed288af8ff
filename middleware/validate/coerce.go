package validate

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// coerceArgs returns args with the values WithCoercion converts converted, or args
// itself when nothing changes. args is never modified.
func (c *checker) coerceArgs(args map[string]any) map[string]any {
	out := args
	for i := range c.params {
		p := &c.params[i]
		v, ok := args[p.name]
		if !ok || p.doc == nil {
			continue
		}
		if nv, changed := coerceWant(p.doc, p.want, v, 0); changed {
			if sameMap(out, args) {
				out = copyMap(args)
			}
			out[p.name] = nv
		}
	}
	return out
}

// typeSet is a set of JSON Schema types.
type typeSet uint8

const (
	tString typeSet = 1 << iota
	tInteger
	tNumber
	tBoolean
	tArray
	tObject
	tNull
	tAny = tString | tInteger | tNumber | tBoolean | tArray | tObject | tNull
)

func typeBit(name string) typeSet {
	switch name {
	case "string":
		return tString
	case "integer":
		return tInteger
	case "number":
		return tNumber
	case "boolean":
		return tBoolean
	case "array":
		return tArray
	case "object":
		return tObject
	case "null":
		return tNull
	}
	return tAny
}

func valueBit(v any) typeSet {
	switch v.(type) {
	case nil:
		return tNull
	case string:
		return tString
	case bool:
		return tBoolean
	case json.Number, float64:
		return tNumber
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return tAny
}

// types returns the types schema s accepts as far as can be told without
// following references; tAny when it cannot be told.
func types(s any, depth int) typeSet {
	m, ok := s.(map[string]any)
	if !ok || depth > 16 {
		return tAny // true, false or something unreadable: do not guess
	}
	if _, ok := m["$ref"]; ok {
		return tAny
	}
	if _, ok := m["$dynamicRef"]; ok {
		return tAny
	}
	var set typeSet
	switch t := m["type"].(type) {
	case string:
		set = typeBit(t)
	case []any:
		for _, e := range t {
			if name, ok := e.(string); ok {
				set |= typeBit(name)
			} else {
				return tAny
			}
		}
	case nil:
		switch {
		case m["enum"] != nil:
			l, _ := m["enum"].([]any)
			for _, e := range l {
				set |= valueBit(e)
			}
		case m["const"] != nil || hasKey(m, "const"):
			set = valueBit(m["const"])
		default:
			for _, kw := range [...]string{"anyOf", "oneOf"} {
				l, ok := m[kw].([]any)
				if !ok {
					continue
				}
				for _, e := range l {
					set |= types(e, depth+1)
				}
			}
			if set == 0 {
				return tAny
			}
		}
	default:
		return tAny
	}
	if set&tNumber != 0 {
		set |= tInteger
	}
	// an allOf branch may only narrow; a branch that takes strings keeps them
	if l, ok := m["allOf"].([]any); ok {
		for _, e := range l {
			if types(e, depth+1)&tString != 0 {
				set |= tString
			}
		}
	}
	return set
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// coerce converts v toward schema s; changed is false when v stays as it is.
func coerce(s any, v any, depth int) (any, bool) { return coerceWant(s, 0, v, depth) }

// coerceWant is coerce with the types of s computed beforehand (0: compute them).
func coerceWant(s any, want typeSet, v any, depth int) (any, bool) {
	if depth > 32 {
		return v, false
	}
	m, _ := s.(map[string]any)
	switch x := v.(type) {
	case string:
		if want == 0 {
			want = types(s, 0)
		}
		if want&tString != 0 || want == tAny {
			return v, false // a string schema keeps its string
		}
		if want&(tInteger|tNumber) != 0 {
			if n, ok := number(x, want&tNumber != 0); ok {
				return n, true
			}
		}
		if want&tBoolean != 0 && (x == "true" || x == "false") {
			return x == "true", true
		}
		t := strings.TrimSpace(x)
		if want&tArray != 0 && strings.HasPrefix(t, "[") {
			var l []any
			if json.Unmarshal([]byte(t), &l) == nil && l != nil {
				nv, _ := coerce(s, l, depth+1)
				return nv, true
			}
		}
		if want&tObject != 0 && strings.HasPrefix(t, "{") {
			var o map[string]any
			if json.Unmarshal([]byte(t), &o) == nil && o != nil {
				nv, _ := coerce(s, o, depth+1)
				return nv, true
			}
		}
		return v, false
	case map[string]any:
		props, _ := m["properties"].(map[string]any)
		if len(props) == 0 {
			return v, false
		}
		out := x
		for k, e := range x {
			ps, ok := props[k]
			if !ok {
				continue
			}
			if nv, changed := coerce(ps, e, depth+1); changed {
				if sameMap(out, x) {
					out = copyMap(x)
				}
				out[k] = nv
			}
		}
		return out, !sameMap(out, x)
	case []any:
		prefix, _ := m["prefixItems"].([]any)
		items := m["items"]
		if _, ok := items.([]any); ok { // draft-4 tuple form
			prefix, items = items.([]any), m["additionalItems"]
		}
		var out []any
		for i, e := range x {
			var es any
			if i < len(prefix) {
				es = prefix[i]
			} else if items != nil {
				es = items
			} else {
				continue
			}
			if nv, changed := coerce(es, e, depth+1); changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = nv
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// number parses s as a JSON number. Integers beyond 2^53 stay strings: as a
// float64 they would lose digits.
func number(s string, fraction bool) (any, bool) {
	if !isJSONNumber(s) {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	if f != math.Trunc(f) && !fraction {
		return nil, false // "2.5" for an integer: leave it for the check to report
	}
	if math.Abs(f) >= 1<<53 {
		return nil, false
	}
	return f, true
}

// isJSONNumber reports whether s is a number in the grammar of JSON (no sign
// other than a leading minus, no leading zeros, no hex, no spaces).
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}
