package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v4"

	"github.com/mcs-go/mcs/drivers/rest/internal/fastdoc"
	"github.com/mcs-go/mcs/internal/fastpath"
)

// jsonFixture returns a fixture as JSON (YAML fixtures converted).
func jsonFixture(t testing.TB, name string) []byte {
	t.Helper()
	data := fixture(t, name)
	if strings.HasSuffix(name, ".json") {
		return data
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// specSummary renders everything a loaded spec holds, for comparisons.
func specSummary(s *spec) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "base %v %v\n", s.base, s.baseErr)
	for _, t := range s.tools {
		o := s.ops[t.Name]
		tj, _ := json.Marshal(t)
		ej, _ := json.Marshal(o.encoding)
		fmt.Fprintf(&sb, "%s\n%s %s body=%d %s req=%v base=%v %v html=%v encoding=%s\n", tj, o.method, o.path, o.body, o.media, o.bodyRequired, o.base, o.baseErr, o.htmlOK, ej)
		for _, a := range o.args {
			fmt.Fprintf(&sb, "  %+v\n", a)
		}
		for _, alt := range o.security {
			for _, u := range alt {
				sj, _ := json.Marshal(u.scheme)
				fmt.Fprintf(&sb, "  security %s %s\n", u.name, sj)
			}
			sb.WriteString("  --\n")
		}
	}
	return sb.String()
}

// loadWith builds the spec of data with the given parse function.
func loadWith(t testing.TB, data []byte, cfg Config, parseFn func(context.Context, []byte, string) (*openapi3.T, outline, error)) (*spec, error) {
	t.Helper()
	doc, ol, err := parseFn(context.Background(), data, "")
	if err != nil {
		return nil, err
	}
	b := builder{doc: doc, cfg: cfg}
	return b.build(context.Background(), ol)
}

// The fast path lists exactly what the ordinary path lists, and plans the
// same requests, for every JSON document it takes.
func TestFastPathMatchesOrdinary(t *testing.T) {
	docs := map[string][]byte{}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		docs[e.Name()] = jsonFixture(t, e.Name())
	}
	docs["github-shaped"] = githubDoc(t, githubSmall)
	gen, _ := json.Marshal(genDoc(200))
	docs["generated-200"] = gen
	for name, data := range fastEdgeDocs {
		docs["edge-"+name] = []byte(data)
	}
	for name, data := range docs {
		t.Run(name, func(t *testing.T) {
			for _, cfg := range []Config{{}, {IncludeTags: []string{"pets", "repos"}}, {BaseURL: "https://operator.example/v1"}} {
				b := mustBase(t, cfg)
				slow, slowErr := loadWith(t, data, b, parseOrdinary)
				fast, fastErr := loadWith(t, data, b, parse)
				if (slowErr != nil) != (fastErr != nil) {
					t.Fatalf("ordinary error %v, fast error %v", slowErr, fastErr)
				}
				if slowErr != nil {
					if slowErr.Error() != fastErr.Error() {
						t.Errorf("errors differ:\nordinary %v\nfast     %v", slowErr, fastErr)
					}
					continue
				}
				if diff := cmp.Diff(specSummary(slow), specSummary(fast)); diff != "" {
					t.Errorf("cfg %+v: fast path differs (-ordinary +fast):\n%s", cfg, diff)
				}
			}
			// The decoded objects themselves, extensions included.
			slowDoc, _, err1 := parseOrdinary(context.Background(), data, "")
			fastDoc, _, err2 := parse(context.Background(), data, "")
			if err1 != nil || err2 != nil {
				return
			}
			if diff := cmp.Diff(modelSummary(slowDoc), modelSummary(fastDoc)); diff != "" {
				t.Errorf("decoded model differs (-ordinary +fast):\n%s", diff)
			}
		})
	}
}

// modelSummary renders the parts of a document the driver reads, as
// kin-openapi encodes them.
func modelSummary(doc *openapi3.T) string {
	var sb strings.Builder
	enc := func(label string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			data = []byte(err.Error())
		}
		fmt.Fprintf(&sb, "%s %s\n", label, data)
	}
	enc("servers", doc.Servers)
	enc("security", doc.Security)
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		enc(path+" parameters", item.Parameters)
		enc(path+" servers", item.Servers)
		for _, m := range methods {
			op := item.GetOperation(strings.ToUpper(m))
			if op == nil {
				continue
			}
			enc(path+" "+m, []any{op.OperationID, op.Summary, op.Description, op.Tags, op.Deprecated, op.Security, op.Servers})
			enc(path+" "+m+" parameters", op.Parameters)
			enc(path+" "+m+" body", op.RequestBody)
			for _, p := range op.Parameters {
				if p != nil && p.Value != nil {
					enc(path+" "+m+" parameter value", p.Value)
					if p.Value.Schema != nil {
						enc(path+" "+m+" parameter schema", p.Value.Schema.Value)
					}
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				enc(path+" "+m+" body value", op.RequestBody.Value)
				for _, media := range sortedKeys(op.RequestBody.Value.Content) {
					if mt := op.RequestBody.Value.Content[media]; mt != nil && mt.Schema != nil {
						enc(path+" "+m+" body schema "+media, mt.Schema.Value)
					}
				}
			}
		}
	}
	if doc.Components != nil {
		enc("security schemes", doc.Components.SecuritySchemes)
	}
	return sb.String()
}

// mustBase normalizes cfg for a builder.
func mustBase(t testing.TB, cfg Config) Config {
	t.Helper()
	cfg.Spec = []byte("{}")
	c, _, _, err := normalize(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fastEdgeDocs are documents at the edges of the fast path: each must load
// as the ordinary path loads it, whichever path takes it.
var fastEdgeDocs = map[string]string{
	"duplicate key":     `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"one"},"get":{"operationId":"two"}}}}`,
	"upper-case method": `{"openapi":"3.0.0","paths":{"/a":{"GET":{"operationId":"one"}}}}`,
	"upper-case field":  `{"openapi":"3.0.0","paths":{"/a":{"get":{"OperationID":"one"}}}}`,
	"kelvin field":      `{"openapi":"3.0.0","paths":{"/a":{"get":{"\u212aey":"x","operationId":"a"}}}}`,
	"escaped key":       `{"openapi":"3.0.0","paths":{"/a":{"get":{"operation\u0049d":"one"}}}}`,
	"upper-case ref":    `{"openapi":"3.0.0","paths":{"/a":{"get":{"requestBody":{"$REF":"#/components/requestBodies/b"}}}},"components":{"requestBodies":{"b":{"content":{"application/json":{"schema":{"type":"object","properties":{"x":{"type":"string"}}}}}}}}}`,
	"float numbers":     `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"n","in":"query","schema":{"type":"integer","maxLength":1e1,"minimum":0.5,"default":12345678901234567890}}]}}}}`,
	"big integer":       `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"n","in":"query","schema":{"type":"integer","maximum":9007199254740993}}]}}}}`,
	"negative zero":     `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"n","in":"query","schema":{"type":"number","default":-0}}]}}}}`,
	"path item ref":     `{"openapi":"3.0.0","paths":{"/a":{"$ref":"#/paths/~1b"},"/b":{"get":{"operationId":"b"}}}}`,
	"deep pointer":      `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"n","in":"query","schema":{"$ref":"#/components/schemas/S/properties/x"}}]}}},"components":{"schemas":{"S":{"type":"object","properties":{"x":{"type":"integer","description":"deep"}}}}}}`,
	"escaped name":      `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"name":"n","in":"query","schema":{"$ref":"#/components/schemas/a~1b~0c"}}]}}},"components":{"schemas":{"a/b~c":{"type":"integer","description":"escaped"}}}}`,
	"ref to paths":      `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"$ref":"#/paths/~1b/get/parameters/0"}]}},"/b":{"get":{"parameters":[{"name":"q","in":"query"}]}}}}`,
	"missing component": `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"$ref":"#/components/parameters/nope"}]}}}}`,
	"external ref":      `{"openapi":"3.0.0","paths":{"/a":{"get":{"parameters":[{"$ref":"other.json#/p"}]}}}}`,
	"external response": `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"$ref":"other.json#/r"}}}}}}`,
	"cycle":             `{"openapi":"3.0.0","paths":{"/a":{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/N"}}}}}}},"components":{"schemas":{"N":{"type":"object","properties":{"next":{"$ref":"#/components/schemas/N"},"v":{"type":"string"}}}}}}`,
	"security":          `{"openapi":"3.0.0","security":[{"k":[]}],"paths":{"/a":{"get":{"operationId":"a"},"post":{"security":[]}}},"components":{"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"X-Key"},"unused":{"$ref":"#/components/securitySchemes/k"}}}}`,
	"servers":           `{"openapi":"3.0.0","servers":[{"url":"https://{h}.example/v1","variables":{"h":{"default":"api"}}}],"paths":{"/a":{"servers":[{"url":"https://path.example"}],"get":{"servers":[{"url":"https://op.example"}]},"put":{}}}}`,
	"null operation":    `{"openapi":"3.0.0","paths":{"/a":{"get":null,"post":{"operationId":"p"}}}}`,
	"extension path":    `{"openapi":"3.0.0","paths":{"x-ext":{"get":{}},"/a":{"get":{}}}}`,
	"paths not object":  `{"openapi":"3.0.0","paths":[]}`,
	"swagger":           `{"swagger":"2.0","host":"api.example","paths":{"/a":{"get":{"operationId":"a"}}}}`,
	"trailing data":     `{"openapi":"3.0.0","paths":{}} {}`,
	"syntax error":      `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a",}}}}`,
	"bad string":        "{\"openapi\":\"3.0.0\",\"paths\":{\"/a\":{\"get\":{\"operationId\":\"a\tb\"}}}}",
	"invalid utf8 key":  "{\"openapi\":\"3.0.0\",\"paths\":{\"/\xff\":{\"get\":{}}}}",
	"invalid utf8 text": "{\"openapi\":\"3.0.0\",\"paths\":{\"/a\":{\"get\":{\"summary\":\"\xff\"}}}}",
	"bad responses":     `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"description":"ok"}}}}}}`,
	"openapi number":    `{"openapi":3,"paths":{}}`,
	"version 4":         `{"openapi":"4.0.0","paths":{}}`,
	"schema keywords":   `{"openapi":"3.1.0","paths":{"/a":{"post":{"parameters":[{"name":"q","in":"query","x-p":1,"other":"kept","schema":{"type":["string","null"],"x-s":{"a":[1,2]},"unknownKeyword":true,"exclusiveMinimum":3,"examples":["a"],"const":"c"}},{"name":"c","in":"query","content":{"application/json":{"schema":{"type":"object","additionalProperties":{"type":"integer"},"properties":{"t":true,"f":false}}}}}],"requestBody":{"description":"d","x-rb":true,"content":{"application/json":{"x-mt":1,"example":{"k":"v"},"examples":{"e":{"value":3}},"encoding":{"a":{"contentType":"text/plain"}},"schema":{"allOf":[{"type":"object","properties":{"a":{"type":"string","Format":"odd"}}},{"$ref":"#/components/schemas/S"}],"oneOf":[{"type":"object"}],"not":{"type":"null"},"required":["a"],"properties":{"a":{"type":"string","enum":["x","y"],"default":"x","readOnly":false,"maxLength":10},"b":{"type":"array","items":{"$ref":"#/components/schemas/S","description":"sibling"}},"c":{"type":"object","properties":{}},"d":{"patternProperties":{"^x":{"type":"string"}},"prefixItems":[{"type":"integer"}],"$defs":{"q":{"type":"string"}}}}}},"text/plain":null}}}}},"components":{"schemas":{"S":{"type":"object","x-c":"y","properties":{"id":{"type":"integer","minimum":1}}}},"parameters":{"P":{"name":"p","in":"header","schema":{"type":"string"}}}}}`,
	"html response":     `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"description":"ok","content":{"text/html; charset=utf-8":{"schema":{"type":"string"}}}},"default":{"description":"e","content":{"application/json":{}}}}},"post":{"operationId":"b","responses":{"200":{"description":"ok","content":{"application/json":{}}}}}}}}`,
	"html response ref": `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"$ref":"#/components/responses/Page"}}}}},"components":{"responses":{"Page":{"$ref":"#/components/responses/Real"},"Real":{"description":"page","content":{"application/xhtml+xml":{"schema":{"$ref":"#/components/schemas/Unkept"}}}}},"schemas":{"Unkept":{"type":"string"}}}}`,
	"html odd numbers":  `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","parameters":[{"name":"n","in":"query","schema":{"type":"number","minimum":0.5}}],"responses":{"x-note":{"content":{"text/html":{}}},"200":{"$ref":"#/components/responses/Page"}}},"put":{"responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Unkept"}}}}}}}},"components":{"responses":{"Page":{"description":"page","content":{"text/html":{"schema":{"$ref":"#/components/schemas/Unkept"}}}}},"schemas":{"Unkept":{"type":"string"}}}}`,
	"html upper case":   `{"openapi":"3.0.0","paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"description":"ok","content":{"Text/HTML; q=1":{}}}}},"put":{"operationId":"b","responses":{"200":{"description":"html in words only","content":{"application/json":{}}}}}}}}`,
	"form encoding":     `{"openapi":"3.0.0","paths":{"/a":{"post":{"operationId":"a","requestBody":{"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{"meta":{"type":"object"},"ids":{"type":"array","items":{"type":"string"}}}},"encoding":{"meta":{"style":"deepObject","explode":true},"ids":{"style":"form","explode":false,"contentType":"text/plain"}}}}}}}}}`,
	"form body":         `{"openapi":"3.0.0","paths":{"/a":{"post":{"requestBody":{"$ref":"#/components/requestBodies/f"}}}},"components":{"requestBodies":{"f":{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{"file":{"type":"string","format":"binary"},"n":{"$ref":"#/components/schemas/N"}}}}}}},"schemas":{"N":{"type":"integer"}}}}`,
}

// The fast path takes the documents it is for; the comparison above would
// prove nothing if it fell back on them.
func TestFastPathTaken(t *testing.T) {
	if !fastpath.On {
		t.Skip("the fast paths are off (build tag mcs_nofast)")
	}
	docs := map[string][]byte{"github-771": githubDoc(t, githubLike)}
	for _, name := range []string{"petstore.yaml", "forms.yaml", "security.yaml", "cycles.yaml", "openapi31.yaml"} {
		docs[name] = jsonFixture(t, name)
	}
	for _, name := range []string{"schema keywords", "cycle", "security", "servers", "deep pointer", "escaped name", "form body", "float numbers", "null operation", "html response", "html response ref", "html odd numbers", "html upper case", "form encoding"} {
		docs[name] = []byte(fastEdgeDocs[name])
	}
	for name, data := range docs {
		if _, _, err := fastdoc.Decode(context.Background(), data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
