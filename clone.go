package mcs

import (
	"encoding/json"
	"reflect"
)

// cloneMaxDepth bounds the copy so that a value that contains itself cannot
// exhaust the stack; deeper values are shared, not copied.
const cloneMaxDepth = 100

// cloneMaxNodes bounds the number of maps, slices and arrays one copy makes, so that a
// value that contains itself more than once (m["a"] = m; m["b"] = m) cannot make
// the copy exponential; once it is spent, the remaining values are shared.
const cloneMaxNodes = 1 << 16

// CloneArgs returns a deep copy of a call's arguments: maps, slices and arrays
// are copied at every level (up to 100 levels, and at most 65,536 of them, so
// that a value that contains itself cannot exhaust the stack or make the copy
// exponential; beyond that values are shared), everything else (strings,
// numbers, pointers, other structs) is shared, except that a [Signal] (also
// through a pointer) is copied with its Data. nil stays nil. BaseDriver hands each
// chain such a copy, so that what a tool or middleware does to its arguments
// never changes the CallRecord or the history; middleware that keeps arguments
// beyond the call (an audit trail, a consent question) uses it too. Safe for
// concurrent use.
func CloneArgs(args map[string]any) map[string]any {
	c := cloner{left: cloneMaxNodes}
	return c.cloneMap(args, 0)
}

// CloneValue returns a deep copy of v in the sense of [CloneArgs].
func CloneValue(v any) any {
	c := cloner{left: cloneMaxNodes}
	return c.clone(v, 0)
}

// cloner carries the node budget of one copy.
type cloner struct{ left int }

// spend takes one node from the budget; false means share instead of copying.
func (c *cloner) spend() bool {
	if c.left <= 0 {
		return false
	}
	c.left--
	return true
}

func (c *cloner) cloneMap(m map[string]any, depth int) map[string]any {
	if m == nil || !c.spend() {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = c.clone(v, depth+1)
	}
	return out
}

func (c *cloner) clone(v any, depth int) any {
	if depth > cloneMaxDepth {
		return v
	}
	switch x := v.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v
	case map[string]any:
		return c.cloneMap(x, depth)
	case []any:
		if x == nil || !c.spend() {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.clone(e, depth+1)
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
	case Signal:
		x.Data = c.cloneMap(x.Data, depth+1)
		return x
	case *Signal:
		if x == nil {
			return x
		}
		s := *x
		s.Data = c.cloneMap(s.Data, depth+1)
		return &s
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array:
		return c.cloneReflect(rv, depth).Interface()
	}
	return v
}

func (c *cloner) cloneReflect(v reflect.Value, depth int) reflect.Value {
	if depth > cloneMaxDepth {
		return v
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		return c.cloneReflect(v.Elem(), depth)
	case reflect.Map:
		if v.IsNil() || !c.spend() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), c.cloneReflect(it.Value(), depth+1))
		}
		return out
	case reflect.Slice:
		if v.IsNil() || !c.spend() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		c.copyElems(out, v, depth)
		return out
	case reflect.Array:
		if !c.spend() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		c.copyElems(out, v, depth)
		return out
	}
	return v
}

// copyElems copies the elements of src into dst, which has the same type and length.
func (c *cloner) copyElems(dst, src reflect.Value, depth int) {
	switch src.Type().Elem().Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		for i := range src.Len() {
			if e := c.cloneReflect(src.Index(i), depth+1); e.IsValid() {
				dst.Index(i).Set(e)
			}
		}
	default:
		if src.Kind() == reflect.Array {
			// An array is a value: Set copies it. reflect.Copy would misread an
			// array stored directly in an interface (one pointer-shaped element).
			dst.Set(src)
			return
		}
		reflect.Copy(dst, src)
	}
}
