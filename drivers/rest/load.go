package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	yaml "go.yaml.in/yaml/v4"

	"github.com/mcs-go/mcs/drivers/rest/internal/fastdoc"
)

// externalRefKey replaces "$ref" in an object whose reference points outside
// the document. The driver never fetches such a reference (the document's
// author, not the operator, chose where it points); the object loads as an
// empty one that names the reference.
const externalRefKey = "x-mcs-external-ref"

// methods are the HTTP methods that become tools, in the canonical order used
// when the document order is unknown.
var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// outline is what the driver reads from the raw document besides what the
// OpenAPI library parses: the kind of document and the order in which its
// paths and methods are written.
type outline struct {
	openapi string // value of "openapi", if any
	swagger string // value of "swagger", if any
	paths   []pathOrder
}

type pathOrder struct {
	path    string
	methods []string
}

// fetch reads the spec document from its source.
func (d *ToolDriver) fetch(ctx context.Context) ([]byte, error) {
	switch {
	case d.src.inline != nil:
		return d.src.inline, nil
	case d.src.file != "":
		f, err := os.Open(d.src.file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readLimited(f, MaxSpecBytes)
	default:
		ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.src.url.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
		resp, err := d.client.Do(req)
		if err != nil {
			return nil, redactClientError(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, fmt.Errorf("fetch answered %s", statusLine(resp))
		}
		return readLimited(resp.Body, MaxSpecBytes)
	}
}

// readLimited reads r to the end, failing when it holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("document is larger than %d bytes", limit)
	}
	return data, nil
}

// parse decodes an OpenAPI 3.x or Swagger 2.0 document, JSON or YAML, into an
// OpenAPI 3 document with every internal $ref resolved, and returns its outline.
// scheme is the scheme the document was fetched with ("" when it was not
// fetched over http(s)); a Swagger 2.0 document with a host and no schemes
// uses it, as Swagger 2.0 specifies.
//
// Without the fast path, JSON takes kin-openapi's own JSON decoding and a
// token scan for the order. A document that references other documents takes a second pass in
// which those references are replaced by empty objects (see externalRefKey).
//
// An OpenAPI 3 JSON document first tries fastdoc.Decode, which decodes only what
// the driver reads and yields the same tools; a document it does not handle
// takes parseOrdinary.
func parse(ctx context.Context, data []byte, scheme string) (*openapi3.T, outline, error) {
	if trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		doc, ol, err := fastdoc.Decode(ctx, trimmed)
		if !errors.Is(err, fastdoc.ErrNotFast) {
			return doc, outlineOf(ol), err
		}
	}
	return parseOrdinary(ctx, data, scheme)
}

// outlineOf is the outline of the fast path's outline.
func outlineOf(o fastdoc.Outline) outline {
	ol := outline{openapi: o.OpenAPI, swagger: o.Swagger, paths: make([]pathOrder, len(o.Paths))}
	for i, p := range o.Paths {
		ol.paths[i] = pathOrder{path: p.Path, methods: p.Methods}
	}
	return ol
}

// parseOrdinary is parse without the fast path.
func parseOrdinary(ctx context.Context, data []byte, scheme string) (*openapi3.T, outline, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, outline{}, errors.New("the document is empty")
	}
	if trimmed[0] == '{' {
		if ol, err := scanJSON(data); err == nil {
			if err := ol.check(); err != nil {
				return nil, ol, err
			}
			doc, err := decodeJSON(ctx, data, ol, scheme)
			var ext *openapi3.DisallowedExternalRefError
			if errors.As(err, &ext) {
				var stubbed []byte
				if stubbed, err = stubExternalRefsJSON(data); err == nil {
					doc, err = decodeJSON(ctx, stubbed, ol, scheme)
				}
			}
			return doc, ol, err
		}
		// Not strict JSON; YAML may still read it.
	}

	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, outline{}, fmt.Errorf("the document is neither JSON nor YAML: %w", err)
	}
	ol, err := scanYAML(&root)
	if err != nil {
		return nil, ol, err
	}
	if err := ol.check(); err != nil {
		return nil, ol, err
	}
	if stubExternalRefsYAML(&root) {
		if data, err = yaml.Marshal(&root); err != nil {
			return nil, ol, err
		}
	}
	doc, err := decodeYAML(ctx, data, ol, scheme)
	return doc, ol, err
}

// check rejects documents that are neither OpenAPI 3.x nor Swagger 2.0.
func (o outline) check() error {
	switch {
	case o.swagger != "" && o.openapi != "":
		return errors.New(`the document has both "swagger" and "openapi" fields; keep one`)
	case o.swagger != "":
		if o.swagger != "2.0" {
			return fmt.Errorf("swagger version %q is not supported; use 2.0 or OpenAPI 3", o.swagger)
		}
	case strings.HasPrefix(o.openapi, "3."):
	case o.openapi != "":
		return fmt.Errorf("openapi version %q is not supported; use 3.0, 3.1 or Swagger 2.0", o.openapi)
	default:
		return errors.New(`the document has neither an "openapi" nor a "swagger" field; it is not an OpenAPI document`)
	}
	return nil
}

func newLoader(ctx context.Context) *openapi3.Loader {
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = false
	l.Context = ctx
	return l
}

func decodeJSON(ctx context.Context, data []byte, ol outline, scheme string) (*openapi3.T, error) {
	if ol.swagger != "" {
		var doc2 openapi2.T
		if err := json.Unmarshal(data, &doc2); err != nil {
			return nil, err
		}
		return fromSwagger(ctx, &doc2, scheme)
	}
	doc := new(openapi3.T)
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, err
	}
	if err := newLoader(ctx).ResolveRefsIn(doc, nil); err != nil {
		return nil, err
	}
	return doc, nil
}

func decodeYAML(ctx context.Context, data []byte, ol outline, scheme string) (*openapi3.T, error) {
	if ol.swagger != "" {
		var doc2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &doc2); err != nil {
			return nil, err
		}
		return fromSwagger(ctx, &doc2, scheme)
	}
	return newLoader(ctx).LoadFromData(data)
}

// fromSwagger converts a Swagger 2.0 document to OpenAPI 3. A host without
// schemes takes scheme, the one the document was fetched with, when known
// (the converter alone would assume https).
func fromSwagger(ctx context.Context, doc2 *openapi2.T, scheme string) (*openapi3.T, error) {
	if doc2.Host != "" && len(doc2.Schemes) == 0 && scheme != "" {
		doc2.Schemes = []string{scheme}
	}
	return openapi2conv.ToV3WithLoader(doc2, newLoader(ctx), nil)
}

// scanJSON reads the outline of a JSON document with a token scan.
func scanJSON(data []byte) (outline, error) {
	var ol outline
	var scratch json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{'); err != nil {
		return ol, err
	}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return ol, err
		}
		switch key {
		case "openapi", "swagger":
			tok, err := dec.Token()
			if err != nil {
				return ol, err
			}
			if s, ok := tok.(string); ok {
				if key == "openapi" {
					ol.openapi = s
				} else {
					ol.swagger = s
				}
			} else if err := skipRest(dec, tok); err != nil {
				return ol, err
			}
		case "paths":
			if ol.paths, err = scanJSONPaths(dec, &scratch); err != nil {
				return ol, err
			}
		default:
			if err := dec.Decode(&scratch); err != nil {
				return ol, err
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return ol, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return ol, errors.New("data after the top-level object")
	}
	return ol, nil
}

// scanJSONPaths reads the path and method keys of the paths object; scratch
// receives the values skipped.
func scanJSONPaths(dec *json.Decoder, scratch *json.RawMessage) ([]pathOrder, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, skipRest(dec, tok)
	}
	var out []pathOrder
	for dec.More() {
		path, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		po := pathOrder{path: path}
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if tok == json.Delim('{') {
			for dec.More() {
				key, err := stringToken(dec)
				if err != nil {
					return nil, err
				}
				if slices.Contains(methods, key) {
					po.methods = append(po.methods, key)
				}
				if err := dec.Decode(scratch); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
		} else if err := skipRest(dec, tok); err != nil {
			return nil, err
		}
		out = append(out, po)
	}
	_, err = dec.Token()
	return out, err
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("expected %q, found %v", want, tok)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("expected an object key, found %v", tok)
	}
	return s, nil
}

// skipRest skips the rest of the value that starts with tok.
func skipRest(dec *json.Decoder, tok json.Token) error {
	if d, ok := tok.(json.Delim); !ok || (d != '{' && d != '[') {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// scanYAML reads the outline of a parsed YAML document.
func scanYAML(root *yaml.Node) (outline, error) {
	var ol outline
	n := root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return ol, errors.New("the document is empty")
		}
		n = n.Content[0]
	}
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return ol, errors.New("the document is not a mapping")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], deref(n.Content[i+1])
		switch key.Value {
		case "openapi":
			ol.openapi = val.Value
		case "swagger":
			ol.swagger = val.Value
		case "paths":
			if val.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				po := pathOrder{path: val.Content[j].Value}
				item := deref(val.Content[j+1])
				if item.Kind == yaml.MappingNode {
					for k := 0; k < len(item.Content); k += 2 {
						if m := item.Content[k].Value; slices.Contains(methods, m) {
							po.methods = append(po.methods, m)
						}
					}
				}
				ol.paths = append(ol.paths, po)
			}
		}
	}
	return ol, nil
}

// deref follows one alias.
func deref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// stubExternalRefsYAML renames the "$ref" key of every object whose reference
// does not start with "#" to externalRefKey, and reports whether it renamed
// any. Aliases are not followed: the node they point to is visited where it is
// defined.
func stubExternalRefsYAML(root *yaml.Node) bool {
	changed := false
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind == yaml.ScalarNode && k.Value == "$ref" && v.Kind == yaml.ScalarNode && !strings.HasPrefix(v.Value, "#") {
					k.Value = externalRefKey
					k.Tag = "!!str"
					k.Style = 0
					changed = true
				}
			}
			stack = append(stack, n.Content...)
		case yaml.DocumentNode, yaml.SequenceNode:
			stack = append(stack, n.Content...)
		}
	}
	return changed
}

// stubExternalRefsJSON does for a JSON document what stubExternalRefsYAML does
// for a YAML one. The result is compact JSON with sorted keys; the order of the
// paths comes from the original document.
func stubExternalRefsJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	stack := []any{v}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := cur.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
				delete(x, "$ref")
				x[externalRefKey] = ref
			}
			for _, c := range x {
				stack = append(stack, c)
			}
		case []any:
			stack = append(stack, x...)
		}
	}
	return json.Marshal(v)
}
