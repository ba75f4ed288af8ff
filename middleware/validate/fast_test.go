package validate

import (
	"encoding/json"
	"github.com/mcs-go/mcs"
	"testing"
)

// fastSchemas are schemas the fast path covers (and a few it does not).
var fastSchemas = []string{
	`{"type":"string"}`,
	`{"type":"integer","minimum":0}`,
	`{"type":"number","exclusiveMinimum":0,"maximum":10.5}`,
	`{"type":["string","null"],"minLength":2,"maxLength":4}`,
	`{"type":"string","pattern":"^[a-z]+$"}`,
	`{"type":"string","format":"email"}`,
	`{"type":"string","format":"date-time"}`,
	`{"enum":["a","b",1,true,null]}`,
	`{"const":2}`,
	`{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}`,
	`{"type":"object","required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"boolean"}},"additionalProperties":false}`,
	`{"type":"object","additionalProperties":{"type":"number"},"maxProperties":2,"minProperties":1}`,
	`{"oneOf":[{"type":"integer"},{"type":"number","minimum":5}]}`,
	`{"anyOf":[{"type":"string"},{"type":"array"}]}`,
	`{"allOf":[{"type":"number"},{"not":{"const":3}}]}`,
	`{"$defs":{"n":{"type":"integer"}},"type":"object","properties":{"x":{"$ref":"#/$defs/n"}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"string"}}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":1,"exclusiveMinimum":true}`,
	`{"type":"array","uniqueItems":true}`,
	`{"type":"number","multipleOf":0.5}`,
	`true`,
	`false`,
	`{"not":{}}`,
	`{"$defs":{"t":{"type":"object","properties":{"next":{"$ref":"#/$defs/t"},"v":{"type":"integer"}}}},"$ref":"#/$defs/t"}`,
}

var fastValues = []string{
	`null`, `true`, `false`, `0`, `-1`, `1`, `2`, `3`, `5`, `5.5`, `10.5`, `11`, `1e21`, `"a"`, `"ab"`, `"abcde"`,
	`"AB"`, `"x@y.z"`, `"2026-12-01T10:00:00Z"`, `"b"`, `[]`, `[1]`, `[1,2,3,4]`, `["a"]`, `[1,1]`, `{}`,
	`{"a":"x"}`, `{"a":"x","b":true}`, `{"a":"x","c":1}`, `{"b":1}`, `{"x":1}`, `{"x":"1"}`, `{"p":1,"q":2,"r":3}`,
	`{"next":{"next":{"v":1}}}`, `{"next":{"next":{"v":"1"}}}`, `"ünï"`,
}

func compileDoc(t testing.TB, src string) param {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		m = nil
	}
	p := compileParam("t", paramFor(m, doc), true)
	if p.err != nil {
		t.Fatalf("%s: %v", src, p.err)
	}
	if p.fast == nil && p.schema != nil {
		p.fast = buildFast(p.schema) // the fast path is checked with mcs_nofast too
	}
	return p
}

// TestFastAgreesWithLibrary checks every definite answer of the fast path
// against the library.
func TestFastAgreesWithLibrary(t *testing.T) {
	covered := 0
	for _, src := range fastSchemas {
		p := compileDoc(t, src)
		if p.fast == nil {
			continue
		}
		covered++
		for _, vs := range fastValues {
			var v any
			if err := json.Unmarshal([]byte(vs), &v); err != nil {
				t.Fatal(err)
			}
			agree(t, p, src, vs, v)
		}
	}
	if covered < 15 {
		t.Errorf("the fast path covers only %d of the schemas", covered)
	}
}

func agree(t *testing.T, p param, src, vs string, v any) {
	t.Helper()
	got := p.fast.check(v, 0)
	lib := p.schema.Validate(v) == nil
	if (got == valid && !lib) || (got == invalid && lib) {
		t.Errorf("schema %s value %s: fast %v, library valid=%v", src, vs, got, lib)
	}
}

// FuzzFast compares the fast path with the library on arbitrary JSON values.
func FuzzFast(f *testing.F) {
	for _, v := range fastValues {
		f.Add(v)
	}
	var params []param
	var srcs []string
	for _, src := range fastSchemas {
		if p := compileDoc(f, src); p.fast != nil {
			params, srcs = append(params, p), append(srcs, src)
		}
	}
	f.Fuzz(func(t *testing.T, vs string) {
		var v any
		if json.Unmarshal([]byte(vs), &v) != nil {
			return
		}
		for i, p := range params {
			agree(t, p, srcs[i], vs, v)
		}
	})
}

func paramFor(m map[string]any, doc any) mcsParameter {
	if m == nil {
		// boolean schemas are not maps; wrap them so the parameter keeps them
		return mcsParameter{Name: "v", Schema: map[string]any{"allOf": []any{doc}}}
	}
	return mcsParameter{Name: "v", Schema: m}
}

type mcsParameter = mcs.Parameter
