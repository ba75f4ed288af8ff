package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
)

// decoder fills an In from a model's arguments. It is immutable and safe for
// concurrent use.
type decoder[In any] struct {
	tool   string
	ptr    bool // In is a pointer to the struct
	fields []field
	index  map[string]int // JSON name -> fields index
	params string         // "a (string), b (integer)" for error messages
}

func newDecoder[In any](tool string, in reflect.Type, fields []field) *decoder[In] {
	d := &decoder[In]{tool: tool, ptr: in.Kind() == reflect.Pointer, fields: fields, index: map[string]int{}}
	names := make([]string, len(fields))
	for i, f := range fields {
		d.index[f.name] = i
		names[i] = strconv.Quote(f.name)
	}
	if len(names) == 0 {
		d.params = "the tool takes no arguments"
	} else {
		d.params = "the parameters are " + strings.Join(names, ", ")
	}
	return d
}

// decode returns the In for args, or an *mcs.ArgumentsError listing every problem.
func (d *decoder[In]) decode(args map[string]any) (In, error) {
	var in In
	v := reflect.ValueOf(&in).Elem()
	if d.ptr {
		for v.Kind() == reflect.Pointer {
			v.Set(reflect.New(v.Type().Elem()))
			v = v.Elem()
		}
	}
	var problems []string
	if len(args) > len(d.index) || d.hasUnknown(args) {
		var unknown []string
		for k := range args {
			if _, ok := d.index[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		slices.Sort(unknown)
		for i, k := range unknown {
			if i == 0 {
				problems = append(problems, fmt.Sprintf("/%s: unknown argument; %s", pointerToken(k), d.params))
			} else {
				problems = append(problems, fmt.Sprintf("/%s: unknown argument", pointerToken(k)))
			}
		}
	}
	for i := range d.fields {
		f := &d.fields[i]
		val, ok := args[f.name]
		if !ok || val == nil {
			if f.required {
				problems = append(problems, fmt.Sprintf("%s: missing required argument (want %s)", f.path, typeWord(f.schema)))
			}
			continue
		}
		if p := set(v.FieldByIndex(f.index), f, val); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		var zero In
		return zero, &mcs.ArgumentsError{Tool: d.tool, Problems: problems}
	}
	return in, nil
}

func (d *decoder[In]) hasUnknown(args map[string]any) bool {
	for k := range args {
		if _, ok := d.index[k]; !ok {
			return true
		}
	}
	return false
}

// set stores val in dst, the field f; it returns a problem or "".
func set(dst reflect.Value, f *field, val any) string {
	path := f.path
	if f.ptr {
		elem := reflect.New(dst.Type().Elem())
		if p := setScalar(elem.Elem(), f, path, val); p != "" {
			return p
		}
		dst.Set(elem)
		return ""
	}
	return setScalar(dst, f, path, val)
}

// setScalar stores val in dst, of the field f's kind; it returns a problem or "".
func setScalar(dst reflect.Value, f *field, path string, val any) string {
	switch f.kind {
	case stringKind:
		if s, ok := val.(string); ok {
			dst.SetString(s)
			return ""
		}
	case boolKind:
		switch b := val.(type) {
		case bool:
			dst.SetBool(b)
			return ""
		case string: // models often quote booleans
			if pb, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
				dst.SetBool(pb)
				return ""
			}
		}
	case intKind:
		if n, ok, why := toInt(val); ok {
			if dst.OverflowInt(n) {
				bits := dst.Type().Bits()
				return fmt.Sprintf("%s: want integer from %d to %d, got %s", path, -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1, describe(val))
			}
			dst.SetInt(n)
			return ""
		} else if why != "" {
			return fmt.Sprintf("%s: want integer, got %s (%s)", path, describe(val), why)
		}
	case uintKind:
		if n, ok, why := toInt(val); ok {
			if n < 0 {
				return fmt.Sprintf("%s: want integer >= 0, got %s", path, describe(val))
			}
			if dst.OverflowUint(uint64(n)) {
				return fmt.Sprintf("%s: want integer from 0 to %d, got %s", path, uint64(1)<<dst.Type().Bits()-1, describe(val))
			}
			dst.SetUint(uint64(n))
			return ""
		} else if why != "" {
			return fmt.Sprintf("%s: want integer, got %s (%s)", path, describe(val), why)
		} else if s, ok := asNumber(val); ok {
			if u, err := strconv.ParseUint(string(s), 10, 64); err == nil && !dst.OverflowUint(u) {
				dst.SetUint(u)
				return ""
			}
		}
	case floatKind:
		switch x := val.(type) {
		case float64:
			dst.SetFloat(x)
			return ""
		case json.Number:
			if fl, err := x.Float64(); err == nil {
				dst.SetFloat(fl)
				return ""
			}
		case string: // models often quote numbers
			if t := strings.TrimSpace(x); isNumber(t) {
				if fl, err := strconv.ParseFloat(t, 64); err == nil {
					dst.SetFloat(fl)
					return ""
				}
			}
		case int:
			dst.SetFloat(float64(x))
			return ""
		case int64:
			dst.SetFloat(float64(x))
			return ""
		}
	default:
		return setSlow(dst, path, val)
	}
	return fmt.Sprintf("%s: want %s, got %s", path, typeWord(f.schema), describe(val))
}

// toInt converts an integral JSON number to int64. ok is false when val is not a
// number; why is set when it is a number but not an integer that fits.
func toInt(val any) (n int64, ok bool, why string) {
	switch x := val.(type) {
	case string: // models often quote numbers
		t := strings.TrimSpace(x)
		if t == "" || !isNumber(t) {
			return 0, false, ""
		}
		return toInt(json.Number(t))
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, false, "not a whole number"
		}
		if x < -(1<<63) || x >= 1<<63 {
			return 0, false, "out of range"
		}
		return int64(x), true, ""
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true, ""
		}
		if _, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return 0, false, "" // a large unsigned value; the caller may take it
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return int64(f), true, ""
		}
		return 0, false, "not a whole number that fits"
	case int:
		return int64(x), true, ""
	case int64:
		return x, true, ""
	case int32:
		return int64(x), true, ""
	}
	return 0, false, ""
}

// asNumber returns val as a JSON number when it is one, or a string holding one.
func asNumber(val any) (json.Number, bool) {
	switch x := val.(type) {
	case json.Number:
		return x, true
	case string:
		if t := strings.TrimSpace(x); isNumber(t) {
			return json.Number(t), true
		}
	}
	return "", false
}

// isNumber reports whether s is a JSON number.
func isNumber(s string) bool {
	return json.Valid([]byte(s)) && s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}

// setSlow decodes val into dst through encoding/json, for every type that is not a
// plain scalar; unknown keys of nested structs are refused.
func setSlow(dst reflect.Value, path string, val any) string {
	raw, err := json.Marshal(val)
	if err != nil {
		return fmt.Sprintf("%s: the value cannot be encoded as JSON: %v", path, err)
	}
	p := reflect.New(dst.Type())
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p.Interface()); err != nil {
		return path + jsonProblem(err, val)
	}
	dst.Set(p.Elem())
	return ""
}

// jsonProblem turns an encoding/json error into "/sub/path: what is wrong".
func jsonProblem(err error, val any) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		sub := ""
		if te.Field != "" {
			for part := range strings.SplitSeq(te.Field, ".") {
				sub += "/" + pointerToken(part)
			}
		}
		got := te.Value
		switch val.(type) {
		case map[string]any, []any:
		default:
			if sub == "" {
				got = describe(val) // the argument itself: show its value
			}
		}
		return fmt.Sprintf("%s: want %s, got %s", sub, goTypeWord(te.Type), got)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return ": unknown field " + rest
	}
	msg = strings.TrimPrefix(msg, "json: ")
	msg = strings.TrimPrefix(msg, "parsing time ")
	if strings.Contains(msg, "got ") {
		return ": " + msg
	}
	return fmt.Sprintf(": %s (got %s)", msg, describe(val))
}

// typeWord names the JSON type a schema asks for.
func typeWord(schema map[string]any) string {
	switch ts := schema["type"].(type) {
	case []string:
		return strings.Join(ts, " or ")
	case []any:
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = fmt.Sprint(t)
		}
		return strings.Join(parts, " or ")
	}
	if t, ok := schema["type"].(string); ok {
		if f, ok := schema["format"].(string); ok && f == "date-time" {
			return "string (RFC 3339 date-time)"
		}
		return t
	}
	return "a JSON value"
}

func goTypeWord(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch kindOf(t) {
	case stringKind:
		return "string"
	case boolKind:
		return "boolean"
	case intKind, uintKind:
		return "integer"
	case floatKind:
		return "number"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// describe renders a model's value for an error: its JSON type and, for scalars, the
// value itself (strings cut to 40 bytes on a UTF-8 boundary).
func describe(v any) string {
	switch x := v.(type) {
	case string:
		s := x
		if len(s) > 40 {
			cut := 40
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + "..."
		}
		return "string " + strconv.Quote(s)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return "number " + string(x)
	case int:
		return "number " + strconv.Itoa(x)
	case int64:
		return "number " + strconv.FormatInt(x, 10)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// pointerToken escapes a JSON Pointer reference token (RFC 6901).
func pointerToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
