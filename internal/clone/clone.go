// Package clone makes deep copies of the JSON-like values tool calls carry, so that
// observers and consent handlers can never change what a tool receives.
package clone

import (
	"encoding/json"
	"reflect"
)

// MaxDepth bounds the copy so that a value that contains itself cannot
// exhaust the stack; deeper values are shared, not copied.
const MaxDepth = 100

// Args returns a deep copy of args: maps, slices and arrays are copied at
// every level (up to MaxDepth), everything else (strings, numbers, pointers,
// structs) is shared. nil stays nil.
func Args(args map[string]any) map[string]any {
	return cloneMap(args, 0)
}

// Value returns a deep copy of v in the sense of Args.
func Value(v any) any { return clone(v, 0) }

func cloneMap(m map[string]any, depth int) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = clone(v, depth+1)
	}
	return out
}

func clone(v any, depth int) any {
	if depth > MaxDepth {
		return v
	}
	switch x := v.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v
	case map[string]any:
		return cloneMap(x, depth)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e, depth+1)
		}
		return out
	case []byte:
		if x == nil {
			return x
		}
		return append([]byte{}, x...)
	case json.RawMessage:
		if x == nil {
			return x
		}
		return append(json.RawMessage{}, x...)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return cloneReflect(rv, depth).Interface()
	}
	return v
}

func cloneReflect(v reflect.Value, depth int) reflect.Value {
	if depth > MaxDepth {
		return v
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		return cloneReflect(v.Elem(), depth)
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), cloneReflect(it.Value(), depth+1))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		copyElems(out, v, depth)
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		copyElems(out, v, depth)
		return out
	}
	return v
}

// copyElems copies the elements of src into dst, which has the same type and length.
func copyElems(dst, src reflect.Value, depth int) {
	switch src.Type().Elem().Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		for i := range src.Len() {
			if e := cloneReflect(src.Index(i), depth+1); e.IsValid() {
				dst.Index(i).Set(e)
			}
		}
	default:
		reflect.Copy(dst, src)
	}
}
