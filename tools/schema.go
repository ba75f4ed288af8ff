package tools

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

var (
	timeType        = reflect.TypeFor[time.Time]()
	numberType      = reflect.TypeFor[json.Number]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	schemerType     = reflect.TypeFor[Schemer]()
)

// Schemer is implemented by an argument type that describes its own JSON Schema,
// for a value the Go type system cannot express (a string that also accepts numbers,
// a union). Pair it with json.Unmarshaler so that decoding accepts what the schema
// promises. JSONSchema must return a new map on every call.
type Schemer interface {
	JSONSchema() map[string]any
}

// field is one top-level argument of a tool: a field of the In struct.
type field struct {
	name     string // JSON name
	path     string // JSON Pointer of the argument, "/name"
	index    []int  // reflect field index path (embedded structs are flattened)
	typ      reflect.Type
	required bool
	desc     string
	schema   map[string]any
	kind     fastKind // how ExecuteTool assigns the value without a JSON round trip
	ptr      bool     // the field is a pointer to a value of kind (kind is not slowKind)
}

// fastKind names the field types ExecuteTool sets directly from a decoded JSON
// value; every other type goes through encoding/json.
type fastKind uint8

const (
	slowKind fastKind = iota
	stringKind
	boolKind
	intKind
	uintKind
	floatKind
)

// schemaError is the panic value of a registration whose In type has no JSON Schema.
type schemaError struct{ path, why string }

// inferFields returns the arguments of a tool whose input type is in. in must be a
// struct (or a pointer to one); its exported fields are the arguments.
func inferFields(tool string, in reflect.Type) (fields []field, err error) {
	defer func() {
		if v := recover(); v != nil {
			se, ok := v.(schemaError)
			if !ok {
				panic(v)
			}
			err = fmt.Errorf("tools: tool %q: field %s: %s", tool, se.path, se.why)
		}
	}()
	for in.Kind() == reflect.Pointer {
		in = in.Elem()
	}
	if in.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tools: tool %q: the input type %s is not a struct; use a struct whose fields are the arguments (struct{} for none)", tool, in)
	}
	s := &inferrer{seen: map[reflect.Type]bool{in: true}}
	s.collect(in, nil, "", &fields)
	names := map[string]bool{}
	for _, f := range fields {
		if names[f.name] {
			return nil, fmt.Errorf("tools: tool %q: two fields have the JSON name %q; rename one with a json tag", tool, f.name)
		}
		names[f.name] = true
	}
	return fields, nil
}

type inferrer struct {
	seen map[reflect.Type]bool // struct types being inferred, to cut recursion
}

// jsonName returns the JSON name of f and whether the field is omitted when empty;
// skip is true for fields encoding/json ignores.
func jsonName(f reflect.StructField) (name string, omit, skip bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, true
	}
	name, opts, _ := strings.Cut(tag, ",")
	for o := range strings.SplitSeq(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			omit = true
		}
	}
	if name == "" {
		name = f.Name
	}
	return name, omit, false
}

// collect appends the fields of struct type t (index prefix idx) to out, flattening
// embedded structs without a json name as encoding/json does.
func (s *inferrer) collect(t reflect.Type, idx []int, path string, out *[]field) {
	for i := range t.NumField() {
		f := t.Field(i)
		index := append(append([]int(nil), idx...), i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if f.Type.Kind() == reflect.Pointer {
					panic(schemaError{path + f.Name, "embedded struct pointers are not supported; embed the struct itself"})
				}
				s.collect(ft, index, path, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		name, omit, skip := jsonName(f)
		if skip {
			continue
		}
		schema := s.schemaOf(f.Type, path+f.Name)
		applyTags(schema, f, path+f.Name)
		desc, _ := schema["description"].(string)
		kind, ptr := kindOf(f.Type), false
		if f.Type.Kind() == reflect.Pointer && kindOf(f.Type.Elem()) != slowKind {
			kind, ptr = kindOf(f.Type.Elem()), true
		}
		*out = append(*out, field{
			name:     name,
			path:     "/" + pointerToken(name),
			index:    index,
			typ:      f.Type,
			required: !omit && f.Type.Kind() != reflect.Pointer,
			desc:     desc,
			schema:   schema,
			kind:     kind,
			ptr:      ptr,
		})
	}
}

func kindOf(t reflect.Type) fastKind {
	if t.Implements(schemerType) || t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return slowKind
	}
	switch t.Kind() {
	case reflect.String:
		return stringKind
	case reflect.Bool:
		return boolKind
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKind
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKind
	case reflect.Float32, reflect.Float64:
		return floatKind
	}
	return slowKind
}

// applyTags sets description, enum and default from the field's tags:
// `description:"..."`, `enum:"a,b,c"` and `default:"..."`.
func applyTags(schema map[string]any, f reflect.StructField, path string) {
	if d, ok := f.Tag.Lookup("description"); ok {
		schema["description"] = d
	}
	if e, ok := f.Tag.Lookup("enum"); ok {
		var vals []any
		for v := range strings.SplitSeq(e, ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				panic(schemaError{path, "the enum tag has an empty value; write enum:\"a,b,c\""})
			}
			vals = append(vals, tagValue(f.Type, v, path, "enum"))
		}
		schema["enum"] = vals
	}
	if d, ok := f.Tag.Lookup("default"); ok {
		schema["default"] = tagValue(f.Type, d, path, "default")
	}
}

// tagValue converts a tag's text to the JSON value of the field's type, so that
// an enum of integers is a list of numbers.
func tagValue(t reflect.Type, s, path, tag string) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch kindOf(t) {
	case stringKind, slowKind:
		return s
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		panic(schemaError{path, fmt.Sprintf("the %s value %q is not a %s", tag, s, t)})
	}
	return v
}

// schemaOf returns the JSON Schema of type t; path names the field for errors.
func (s *inferrer) schemaOf(t reflect.Type, path string) map[string]any {
	if t.Implements(schemerType) {
		if m := reflect.Zero(t).Interface().(Schemer).JSONSchema(); m != nil {
			return m
		}
	}
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case numberType:
		return map[string]any{"type": "number"}
	case rawMessageType:
		return map[string]any{}
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface &&
		(t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) &&
		!t.Implements(jsonUnmarshaler) && !reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Pointer:
		return s.schemaOf(t.Elem(), path)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		m := map[string]any{"type": "array", "items": s.schemaOf(t.Elem(), path+"[]")}
		if t.Kind() == reflect.Array {
			m["minItems"], m["maxItems"] = t.Len(), t.Len()
		}
		return m
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String && !k.Implements(textUnmarshaler) && !reflect.PointerTo(k).Implements(textUnmarshaler) &&
			kindOf(k) != intKind && kindOf(k) != uintKind {
			panic(schemaError{path, fmt.Sprintf("map key type %s has no JSON form; use string keys", k)})
		}
		return map[string]any{"type": "object", "additionalProperties": s.schemaOf(t.Elem(), path+"[]")}
	case reflect.Struct:
		if s.seen[t] {
			// A recursive type: the inner occurrence is described as an object so
			// that inference ends; decoding still checks it fully.
			return map[string]any{"type": "object", "description": "a " + t.Name() + " (same shape as its parent)"}
		}
		s.seen[t] = true
		defer delete(s.seen, t)
		var fields []field
		s.collect(t, nil, path+".", &fields)
		props := make(map[string]any, len(fields))
		var req []any
		for _, f := range fields {
			props[f.name] = f.schema
			if f.required {
				req = append(req, f.name)
			}
		}
		m := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(req) > 0 {
			m["required"] = req
		}
		return m
	}
	panic(schemaError{path, fmt.Sprintf("type %s has no JSON Schema (channels, functions and complex numbers cannot be arguments)", t)})
}
