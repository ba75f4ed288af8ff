package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"unsafe"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/clone"
	"github.com/mcs-go/mcs/internal/fastpath"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Cache bounds: variants kept per tool name (a listing that changes keeps its
// latest definitions) and entries in all.
const (
	maxVariants = 4
	maxEntries  = 4096
)

// entry is one cached definition of a tool: the identity of its parameters, a
// copy of their schemas and the checker compiled from them.
type entry struct {
	ident  []paramIdent
	copies []map[string]any // deep copies of the schemas, to compare new maps with
	c      *checker
}

// paramIdent identifies a parameter without reading its schema.
type paramIdent struct {
	name     string
	required bool
	schema   unsafe.Pointer // the schema map itself
}

func mapPointer(m map[string]any) unsafe.Pointer {
	if m == nil {
		return nil
	}
	return reflect.ValueOf(m).UnsafePointer()
}

// same reports whether params are the very objects e was built from.
func (e *entry) same(params []mcs.Parameter) bool {
	if len(e.ident) != len(params) {
		return false
	}
	for i := range params {
		p := &params[i]
		id := &e.ident[i]
		if id.name != p.Name || id.required != p.Required || id.schema != mapPointer(p.Schema) {
			return false
		}
	}
	return true
}

// equal reports whether params have the content e was built from.
func (e *entry) equal(params []mcs.Parameter) bool {
	if len(e.ident) != len(params) {
		return false
	}
	for i := range params {
		p := &params[i]
		if e.ident[i].name != p.Name || e.ident[i].required != p.Required {
			return false
		}
		if (p.Schema == nil) != (e.copies[i] == nil) || !equalValue(p.Schema, e.copies[i], 0) {
			return false
		}
	}
	return true
}

// equalValue compares JSON-like values without allocating for the shapes tool
// schemas have; other types are compared with reflect.DeepEqual.
func equalValue(a, b any, depth int) bool {
	if depth > clone.MaxDepth {
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValue(xv, yv, depth+1) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// checker returns the compiled checker of t, compiling it on first use.
func (m *Middleware) checker(t *mcs.Tool) *checker {
	for _, e := range (*m.cache.Load())[t.Name] {
		if e.same(t.Parameters) {
			return e.c.ready(m)
		}
	}
	// New objects: compare by content, so that equal definitions built anew (a
	// driver that copies its schemas on every listing) compile once.
	for _, e := range (*m.cache.Load())[t.Name] {
		if e.equal(t.Parameters) {
			return e.c.ready(m)
		}
	}
	m.mu.Lock()
	cur := *m.cache.Load()
	for _, e := range cur[t.Name] {
		if e.equal(t.Parameters) {
			m.mu.Unlock()
			return e.c.ready(m)
		}
	}
	e := &entry{c: &checker{tool: t.Name, src: clonedParams(t.Parameters)}}
	e.ident = make([]paramIdent, len(t.Parameters))
	e.copies = make([]map[string]any, len(t.Parameters))
	for i, p := range t.Parameters {
		e.ident[i] = paramIdent{name: p.Name, required: p.Required, schema: mapPointer(p.Schema)}
		e.copies[i] = clone.Args(p.Schema)
	}
	next := make(map[string][]*entry, len(cur)+1)
	if m.size < maxEntries {
		maps.Copy(next, cur)
	} else {
		m.size = 0 // start over rather than grow without bound
	}
	old := next[t.Name]
	if len(old) >= maxVariants {
		m.size -= len(old) - (maxVariants - 1)
		old = old[:maxVariants-1]
	}
	next[t.Name] = append([]*entry{e}, old...)
	m.size++
	m.cache.Store(&next)
	m.mu.Unlock()
	return e.c.ready(m)
}

// clonedParams keeps the names, flags and copies of the schemas of params, so
// that the compiled form never depends on maps the driver may reuse.
func clonedParams(params []mcs.Parameter) []mcs.Parameter {
	out := make([]mcs.Parameter, len(params))
	for i, p := range params {
		out[i] = mcs.Parameter{Name: p.Name, Required: p.Required, Schema: clone.Args(p.Schema)}
	}
	return out
}

// checker is the compiled form of one tool definition.
type checker struct {
	tool string
	src  []mcs.Parameter // names, flags and the schemas read at compile time

	once   sync.Once
	params []param
	names  string // "a, b, c": the parameters, for messages
	broken *SchemaError
}

// param is one compiled parameter.
type param struct {
	name       string
	required   bool
	schema     *jsonschema.Schema // nil: not checked (invalid schema let through)
	fast       *fastNode          // nil: every value goes to the library
	doc        any                // the normalised schema, read by coercion
	want       typeSet            // the types doc accepts, for coercion
	allowsNull bool               // the schema accepts null, so null is a value
	err        *SchemaError
}

// ready compiles c once and returns it.
func (c *checker) ready(m *Middleware) *checker {
	c.once.Do(func() { c.compile(m) })
	return c
}

func (c *checker) compile(m *Middleware) {
	c.params = make([]param, len(c.src))
	names := make([]byte, 0, 16*len(c.src))
	for i, p := range c.src {
		if i > 0 {
			names = append(names, ", "...)
		}
		names = append(names, p.Name...)
		c.params[i] = compileParam(c.tool, p, !m.noFormats)
		if err := c.params[i].err; err != nil {
			if c.broken == nil {
				c.broken = err
			}
			m.log().Warn("validate: invalid tool schema", "tool", c.tool, "parameter", p.Name, "error", err.Err.Error(),
				"calls", map[bool]string{true: "run without checking this parameter", false: "fail"}[m.passInvalid])
		}
	}
	c.names = string(names)
	c.src = nil
}

// errRemote is wrapped by the error of a schema that refers to another document.
var errRemote = errors.New("schemas are never fetched over the network or from files; put the referenced schema into this one (under $defs) and refer to it with \"#/$defs/...\"")

// noLoader refuses every document the compiler asks for (the bundled meta-schemas
// of the drafts are resolved by the library itself, without a loader).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("refusing to load %s: %w", url, errRemote)
}

// resourceURL is the base URL of every parameter schema; relative references in a
// schema without $id resolve against it, and so are refused.
const resourceURL = "mem:///validate/parameter.json"

func compileParam(tool string, p mcs.Parameter, formats bool) (out param) {
	out = param{name: p.Name, required: p.Required}
	fail := func(err error) param {
		out.err = &SchemaError{Tool: tool, Parameter: p.Name, Err: err}
		out.schema = nil
		return out
	}
	defer func() {
		if v := recover(); v != nil {
			out = fail(fmt.Errorf("the schema could not be compiled: %v", v))
		}
	}()
	var doc any = map[string]any{"type": "string"}
	if p.Schema != nil {
		data, err := json.Marshal(p.Schema)
		if err != nil {
			return fail(fmt.Errorf("the schema is not JSON: %w", err))
		}
		if doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(data)); err != nil {
			return fail(fmt.Errorf("the schema is not JSON: %w", err))
		}
	}
	doc = normalise(doc, 0)
	out.doc = doc
	out.want = types(doc, 0)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if formats {
		c.AssertFormat()
	}
	if err := c.AddResource(resourceURL, doc); err != nil {
		return fail(err)
	}
	sch, err := c.Compile(resourceURL)
	if err != nil {
		return fail(err)
	}
	out.schema = sch
	if fastpath.On {
		out.fast = buildFast(sch)
	}
	out.allowsNull = sch.Validate(nil) == nil
	return out
}

// normalise reads the OpenAPI 3.0 dialect of a schema the way OpenAPI means it,
// in place on a decoded copy: "nullable": true adds null to "type" (and to "enum"),
// and a boolean "exclusiveMinimum"/"exclusiveMaximum" next to "minimum"/"maximum"
// becomes the numeric form of draft 6 and later (left alone in a draft-4 schema,
// where it is correct). Subschemas are normalised too.
func normalise(v any, depth int) any {
	s, ok := v.(map[string]any)
	if !ok || depth > 64 {
		return v
	}
	draft4 := false
	if u, ok := s["$schema"].(string); ok && bytes.Contains([]byte(u), []byte("draft-04")) {
		draft4 = true
	}
	if s["nullable"] == true {
		delete(s, "nullable")
		switch t := s["type"].(type) {
		case string:
			if t != "null" {
				s["type"] = []any{t, "null"}
			}
		case []any:
			if !containsValue(t, "null") {
				s["type"] = append(t, "null")
			}
		}
		if e, ok := s["enum"].([]any); ok && !containsValue(e, nil) {
			s["enum"] = append(e, nil)
		}
	}
	if !draft4 {
		for _, kw := range [...][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
			b, ok := s[kw[0]].(bool)
			if !ok {
				continue
			}
			delete(s, kw[0])
			if bound, has := s[kw[1]]; b && has {
				s[kw[0]] = bound
				delete(s, kw[1])
			}
		}
	}
	for k, sub := range s {
		switch k {
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			if m, ok := sub.(map[string]any); ok {
				for name, e := range m {
					m[name] = normalise(e, depth+1)
				}
			}
		case "items", "additionalItems", "additionalProperties", "contains", "propertyNames", "not",
			"if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema":
			s[k] = normaliseList(sub, depth)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			s[k] = normaliseList(sub, depth)
		}
	}
	return s
}

func normaliseList(v any, depth int) any {
	if l, ok := v.([]any); ok {
		for i, e := range l {
			l[i] = normalise(e, depth+1)
		}
		return l
	}
	return normalise(v, depth+1)
}

func containsValue(l []any, v any) bool {
	for _, e := range l {
		if e == v {
			return true
		}
	}
	return false
}
