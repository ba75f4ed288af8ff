package rest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Limits of schema conversion. A document can make a schema arbitrarily large
// by sharing subschemas (each reference is expanded where it is used), so the
// expansion of one parameter's schema is bounded.
const (
	maxSchemaDepth = 24
	maxSchemaNodes = 1000
)

// schemaConverter turns resolved kin-openapi schemas into self-contained JSON
// Schema fragments: references are expanded in place, a schema that contains
// itself is cut where it recurs, and keywords that only make sense inside the
// document ($id, $defs, xml, extensions) are dropped. Every other keyword,
// Swagger 2.0 ones included (items, enum, format, default, ...), is kept.
type schemaConverter struct {
	nodes int
	stack []*openapi3.Schema
}

// convertSchema converts ref; nil yields nil.
func convertSchema(ref *openapi3.SchemaRef) map[string]any {
	if ref == nil {
		return nil
	}
	var c schemaConverter
	return c.convert(ref)
}

func (c *schemaConverter) convert(ref *openapi3.SchemaRef) map[string]any {
	if ref == nil || ref.Value == nil {
		if ref != nil && ref.Ref != "" {
			return map[string]any{"description": "unresolved reference " + ref.Ref}
		}
		return map[string]any{}
	}
	s := ref.Value
	if ext := externalRef(ref); ext != "" {
		return map[string]any{"description": fmt.Sprintf("defined in another document (%s), which is not loaded", ext)}
	}
	// Cycles run through references; checking only there names the schema
	// that recurs rather than an inline part of it.
	if ref.Ref != "" && slices.Contains(c.stack, s) {
		out := map[string]any{"description": "recursive: the same structure as " + schemaName(ref, s)}
		if t := s.Type.Slice(); len(t) == 1 {
			out["type"] = t[0]
		} else if len(t) > 1 {
			out["type"] = slices.Clone(t)
		}
		return out
	}
	c.nodes++
	if len(c.stack) >= maxSchemaDepth || c.nodes > maxSchemaNodes {
		return map[string]any{"description": "not expanded: the schema is too large"}
	}
	c.stack = append(c.stack, s)
	defer func() { c.stack = c.stack[:len(c.stack)-1] }()

	out := shallow(s)
	list := func(key string, refs openapi3.SchemaRefs) {
		if len(refs) == 0 {
			return
		}
		l := make([]any, 0, len(refs))
		for _, r := range refs {
			l = append(l, c.convert(r))
		}
		out[key] = l
	}
	one := func(key string, r *openapi3.SchemaRef) {
		if r != nil {
			out[key] = c.convert(r)
		}
	}
	dict := func(key string, m openapi3.Schemas) {
		if len(m) == 0 {
			return
		}
		d := make(map[string]any, len(m))
		for _, name := range sortedKeys(m) {
			d[name] = c.convert(m[name])
		}
		out[key] = d
	}
	boolOr := func(key string, b openapi3.BoolSchema) {
		switch {
		case b.Has != nil:
			out[key] = *b.Has
		case b.Schema != nil:
			out[key] = c.convert(b.Schema)
		}
	}
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	one("not", s.Not)
	one("items", s.Items)
	list("prefixItems", s.PrefixItems)
	one("contains", s.Contains)
	dict("properties", s.Properties)
	dict("patternProperties", s.PatternProperties)
	dict("dependentSchemas", s.DependentSchemas)
	one("propertyNames", s.PropertyNames)
	boolOr("additionalProperties", s.AdditionalProperties)
	boolOr("unevaluatedItems", s.UnevaluatedItems)
	boolOr("unevaluatedProperties", s.UnevaluatedProperties)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	one("contentSchema", s.ContentSchema)
	if s.Discriminator != nil && s.Discriminator.PropertyName != "" {
		out["discriminator"] = map[string]any{"propertyName": s.Discriminator.PropertyName}
	}
	return out
}

// shallow returns s's own keywords as plain JSON values (strings, float64,
// bool, []any, map[string]any), without subschemas and without the keywords
// that only make sense inside the document.
func shallow(s *openapi3.Schema) map[string]any {
	if s.Always != nil {
		if *s.Always {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	}
	out := make(map[string]any, 4)
	str := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	flag := func(k string, v bool) {
		if v {
			out[k] = true
		}
	}
	num := func(k string, v *float64) {
		if v != nil {
			out[k] = *v
		}
	}
	count := func(k string, v uint64) {
		if v != 0 {
			out[k] = float64(v)
		}
	}
	limit := func(k string, v *uint64) {
		if v != nil {
			out[k] = float64(*v)
		}
	}
	val := func(k string, v any) {
		if v != nil {
			out[k] = jsonValue(v)
		}
	}
	list := func(k string, v []any) {
		if len(v) > 0 {
			out[k] = jsonValue(v)
		}
	}
	bound := func(k string, b openapi3.ExclusiveBound) {
		switch {
		case b.Value != nil:
			out[k] = *b.Value
		case b.Bool != nil && *b.Bool:
			out[k] = true
		}
	}

	if t := s.Type.Slice(); len(t) == 1 {
		out["type"] = t[0]
	} else if len(t) > 1 {
		out["type"] = anyList(t)
	}
	str("title", s.Title)
	str("format", s.Format)
	str("description", s.Description)
	list("enum", s.Enum)
	val("default", s.Default)
	val("example", s.Example)
	val("const", s.Const)
	list("examples", s.Examples)
	flag("uniqueItems", s.UniqueItems)
	bound("exclusiveMinimum", s.ExclusiveMin)
	bound("exclusiveMaximum", s.ExclusiveMax)
	flag("nullable", s.Nullable)
	flag("readOnly", s.ReadOnly)
	flag("writeOnly", s.WriteOnly)
	flag("allowEmptyValue", s.AllowEmptyValue)
	flag("deprecated", s.Deprecated)
	num("minimum", s.Min)
	num("maximum", s.Max)
	num("multipleOf", s.MultipleOf)
	count("minLength", s.MinLength)
	limit("maxLength", s.MaxLength)
	str("pattern", s.Pattern)
	count("minItems", s.MinItems)
	limit("maxItems", s.MaxItems)
	if len(s.Required) > 0 {
		out["required"] = anyList(s.Required)
	}
	count("minProperties", s.MinProps)
	limit("maxProperties", s.MaxProps)
	limit("minContains", s.MinContains)
	limit("maxContains", s.MaxContains)
	if len(s.DependentRequired) > 0 {
		dr := make(map[string]any, len(s.DependentRequired))
		for k, names := range s.DependentRequired {
			dr[k] = anyList(names)
		}
		out["dependentRequired"] = dr
	}
	str("contentMediaType", s.ContentMediaType)
	str("contentEncoding", s.ContentEncoding)
	return out
}

// jsonValue returns v (a default, an example, an enum) in the shapes
// encoding/json decodes to: numbers as float64, objects as map[string]any.
// Values of other types go through a JSON round trip; one that cannot is
// rendered with %v.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return v
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if json.Unmarshal(data, &out) != nil {
		return fmt.Sprint(v)
	}
	return out
}

// externalRef returns the external reference a stubbed object stood for.
func externalRef(ref *openapi3.SchemaRef) string {
	for _, ext := range []map[string]any{ref.Extensions, ref.Value.Extensions} {
		if s, ok := ext[externalRefKey].(string); ok {
			return s
		}
	}
	return ""
}

// schemaName names a schema for a recursion note: the last segment of its
// reference, its title, or "an enclosing schema".
func schemaName(ref *openapi3.SchemaRef, s *openapi3.Schema) string {
	if ref.Ref != "" {
		return ref.Ref[strings.LastIndexByte(ref.Ref, '/')+1:]
	}
	if s.Title != "" {
		return s.Title
	}
	return "an enclosing schema"
}

// objectShape is the flattened view of an object schema: its properties, with
// those of every allOf part merged in, and the names it requires.
type objectShape struct {
	props    map[string]*openapi3.SchemaRef
	required map[string]bool
}

// flattenObject reports the properties of ref when it describes a JSON object
// whose properties can be sent one by one: type object (or no type) with
// properties, directly or through allOf. A schema with oneOf, anyOf or not, a
// non-object allOf part, or no property at all is not flattened.
func flattenObject(ref *openapi3.SchemaRef) (objectShape, bool) {
	shape := objectShape{props: map[string]*openapi3.SchemaRef{}, required: map[string]bool{}}
	if !collectObject(ref, &shape, nil) || len(shape.props) == 0 {
		return objectShape{}, false
	}
	return shape, true
}

func collectObject(ref *openapi3.SchemaRef, shape *objectShape, seen []*openapi3.Schema) bool {
	if ref == nil || ref.Value == nil || externalRef(ref) != "" {
		return false
	}
	s := ref.Value
	if slices.Contains(seen, s) || len(seen) > maxSchemaDepth {
		return false
	}
	seen = append(seen, s)
	if len(s.OneOf) > 0 || len(s.AnyOf) > 0 || s.Not != nil || s.Always != nil {
		return false
	}
	switch {
	case s.Type.Is("object"):
	case s.Type.IsEmpty() && (len(s.Properties) > 0 || len(s.AllOf) > 0):
	default:
		return false
	}
	for _, part := range s.AllOf {
		if !collectObject(part, shape, seen) {
			return false
		}
	}
	maps.Copy(shape.props, s.Properties)
	for _, r := range s.Required {
		shape.required[r] = true
	}
	return true
}

// schemaTypes returns the types a schema allows; nil means any.
func schemaTypes(ref *openapi3.SchemaRef) []string {
	if ref == nil || ref.Value == nil {
		return nil
	}
	return ref.Value.Type.Slice()
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// anyList converts strings to the []any a decoded JSON array holds.
func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, x := range ss {
		out[i] = x
	}
	return out
}
