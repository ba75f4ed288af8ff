package fastdoc

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// kinDecoder fills kin-openapi's parameter, request body, media type and
// schema objects from a document the fast path's scan has validated, in one
// pass over their bytes.
//
// kin-openapi decodes each of these objects twice (into the struct and into a
// generic map for its extensions) and every nested object again, so a byte of
// a schema three levels down is decoded a dozen times; the profile puts most
// of the load there. kinDecoder does what each object's UnmarshalJSON does,
// member by member: a member named like a field is decoded into that field
// with the standard library (nested parameters, media types and schemas by
// kinDecoder itself), any other member becomes an extension, and the ref
// wrappers hold a value. Objects with a "$ref", and members the standard
// library would match to a field of another spelling, are left to
// kin-openapi's own decoder.
type kinDecoder struct {
	data []byte
}

// kinFields maps the JSON names of a kin-openapi struct to field indexes.
type kinFields struct {
	index map[string]int
	ext   int // index of the Extensions field
}

var kinFieldCache sync.Map // reflect.Type -> *kinFields

func fieldsOf(t reflect.Type) *kinFields {
	if f, ok := kinFieldCache.Load(t); ok {
		return f.(*kinFields)
	}
	f := &kinFields{index: map[string]int{}, ext: -1}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case sf.Name == "Extensions":
			f.ext = i
		case name != "" && name != "-":
			f.index[name] = i
		}
	}
	kinFieldCache.Store(t, f)
	return f
}

var (
	typeSchemaRef  = reflect.TypeFor[*openapi3.SchemaRef]()
	typeSchemas    = reflect.TypeFor[openapi3.Schemas]()
	typeSchemaRefs = reflect.TypeFor[openapi3.SchemaRefs]()
	typeContent    = reflect.TypeFor[openapi3.Content]()
)

// members calls fn for each member of the validated object at sp.
func (k *kinDecoder) members(sp span, fn func(key string, val span) bool) bool {
	d := k.data
	i := skipSpace(d, sp.start+1)
	if d[i] == '}' {
		return true
	}
	for {
		end := skipString(d, i)
		key := string(d[i+1 : end-1])
		i = skipSpace(d, end)
		v := skipSpace(d, i+1)
		e := skipValue(d, v)
		if !fn(key, span{v, e}) {
			return false
		}
		i = skipSpace(d, e)
		if d[i] == '}' {
			return true
		}
		i = skipSpace(d, i+1)
	}
}

// elements calls fn for each element of the validated array at sp.
func (k *kinDecoder) elements(sp span, fn func(val span) bool) bool {
	d := k.data
	i := skipSpace(d, sp.start+1)
	if d[i] == ']' {
		return true
	}
	for {
		e := skipValue(d, i)
		if !fn(span{i, e}) {
			return false
		}
		i = skipSpace(d, e)
		if d[i] == ']' {
			return true
		}
		i = skipSpace(d, i+1)
	}
}

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// skipString returns the index after the validated string at i.
func skipString(d []byte, i int) int {
	for i++; ; i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// skipValue returns the index after the validated value at i.
func skipValue(d []byte, i int) int {
	switch d[i] {
	case '"':
		return skipString(d, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch d[i] {
			case '"':
				i = skipString(d, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(d) {
		switch d[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// hasRef reports whether the object at sp has a "$ref" member.
func (k *kinDecoder) hasRef(sp span) bool {
	found := false
	k.members(sp, func(key string, _ span) bool {
		found = key == "$ref"
		return !found
	})
	return found
}

func (k *kinDecoder) raw(sp span) []byte { return k.data[sp.start:sp.end] }

func (k *kinDecoder) isObject(sp span) bool { return k.data[sp.start] == '{' }

// object fills the struct v points to from the object at sp as the type's
// UnmarshalJSON would; false means this object is left to kin-openapi.
func (k *kinDecoder) object(sp span, v reflect.Value) (bool, error) {
	f := fieldsOf(v.Type())
	ok := k.members(sp, func(key string, _ span) bool {
		_, known := f.index[key]
		return known || !foldsToKnown(key, f)
	})
	if !ok {
		return false, nil
	}
	var ext map[string]any
	var err error
	k.members(sp, func(key string, val span) bool {
		i, known := f.index[key]
		if !known {
			var x any
			if err = json.Unmarshal(k.raw(val), &x); err != nil {
				return false
			}
			if ext == nil {
				ext = map[string]any{}
			}
			ext[key] = x
			return true
		}
		err = k.field(val, v.Field(i))
		return err == nil
	})
	if err != nil {
		return false, err
	}
	if ext != nil && f.ext >= 0 {
		v.Field(f.ext).Set(reflect.ValueOf(ext))
	}
	return true, nil
}

// foldsToKnown reports whether the standard library would match key to a
// field of f that is not written so.
func foldsToKnown(key string, f *kinFields) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= 0x80 {
			return true
		}
	}
	for name := range f.index {
		if strings.EqualFold(name, key) {
			return true
		}
	}
	return false
}

// field decodes the member at sp into the field fv.
func (k *kinDecoder) field(sp span, fv reflect.Value) error {
	raw := k.raw(sp)
	if string(raw) == "null" {
		// As the standard library does for a struct field.
		switch fv.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			fv.SetZero()
			return nil
		}
	}
	switch fv.Type() {
	case typeSchemaRef:
		ref, err := k.schemaRef(sp)
		if err == nil {
			fv.Set(reflect.ValueOf(ref))
		}
		return err
	case typeSchemas:
		if !k.isObject(sp) {
			break
		}
		m := openapi3.Schemas{}
		var err error
		k.members(sp, func(key string, val span) bool {
			m[key], err = k.schemaRef(val)
			return err == nil
		})
		fv.Set(reflect.ValueOf(m))
		return err
	case typeSchemaRefs:
		if k.data[sp.start] != '[' {
			break
		}
		refs := openapi3.SchemaRefs{}
		var err error
		k.elements(sp, func(val span) bool {
			var r *openapi3.SchemaRef
			r, err = k.schemaRef(val)
			refs = append(refs, r)
			return err == nil
		})
		fv.Set(reflect.ValueOf(refs))
		return err
	case typeContent:
		if !k.isObject(sp) {
			break
		}
		c := openapi3.Content{}
		var err error
		k.members(sp, func(key string, val span) bool {
			c[key], err = k.mediaType(val)
			return err == nil
		})
		fv.Set(reflect.ValueOf(c))
		return err
	}
	return json.Unmarshal(raw, fv.Addr().Interface())
}

// schemaRef decodes a schema as SchemaRef.UnmarshalJSON does; null is nil.
func (k *kinDecoder) schemaRef(sp span) (*openapi3.SchemaRef, error) {
	if k.isObject(sp) && !k.hasRef(sp) {
		s := new(openapi3.Schema)
		ok, err := k.object(sp, reflect.ValueOf(s).Elem())
		if err != nil {
			return nil, err
		}
		if ok {
			return &openapi3.SchemaRef{Value: s}, nil
		}
	}
	var r *openapi3.SchemaRef
	err := json.Unmarshal(k.raw(sp), &r)
	return r, err
}

// mediaType decodes a media type object; null is nil.
func (k *kinDecoder) mediaType(sp span) (*openapi3.MediaType, error) {
	if k.isObject(sp) {
		mt := new(openapi3.MediaType)
		ok, err := k.object(sp, reflect.ValueOf(mt).Elem())
		if err != nil {
			return nil, err
		}
		if ok {
			return mt, nil
		}
	}
	var mt *openapi3.MediaType
	err := json.Unmarshal(k.raw(sp), &mt)
	return mt, err
}

// parameterRef decodes a parameter as ParameterRef.UnmarshalJSON does.
func (k *kinDecoder) parameterRef(sp span) (*openapi3.ParameterRef, error) {
	if k.isObject(sp) && !k.hasRef(sp) {
		p := new(openapi3.Parameter)
		ok, err := k.object(sp, reflect.ValueOf(p).Elem())
		if err != nil {
			return nil, err
		}
		if ok {
			return &openapi3.ParameterRef{Value: p}, nil
		}
	}
	var r *openapi3.ParameterRef
	err := json.Unmarshal(k.raw(sp), &r)
	return r, err
}

// parameters decodes a list of parameters as the standard library decodes
// openapi3.Parameters.
func (k *kinDecoder) parameters(sp span) (openapi3.Parameters, error) {
	if k.data[sp.start] != '[' {
		var ps openapi3.Parameters
		err := json.Unmarshal(k.raw(sp), &ps)
		return ps, err
	}
	ps := openapi3.Parameters{}
	var err error
	k.elements(sp, func(val span) bool {
		var p *openapi3.ParameterRef
		if string(k.raw(val)) != "null" {
			p, err = k.parameterRef(val)
		}
		ps = append(ps, p)
		return err == nil
	})
	return ps, err
}

// requestBodyRef decodes a request body as RequestBodyRef.UnmarshalJSON does.
func (k *kinDecoder) requestBodyRef(sp span) (*openapi3.RequestBodyRef, error) {
	if k.isObject(sp) && !k.hasRef(sp) {
		rb := new(openapi3.RequestBody)
		ok, err := k.object(sp, reflect.ValueOf(rb).Elem())
		if err != nil {
			return nil, err
		}
		if ok {
			return &openapi3.RequestBodyRef{Value: rb}, nil
		}
	}
	var r *openapi3.RequestBodyRef
	err := json.Unmarshal(k.raw(sp), &r)
	return r, err
}
