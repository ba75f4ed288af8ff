// Package fastdoc is the REST driver's fast path for OpenAPI 3 JSON documents:
// Decode reads only what the driver lists and runs, on all cores, into
// kin-openapi's types, and gives way (ErrNotFast) wherever the result could
// differ from kin-openapi's own decoding. FuzzFastDoc checks it against
// kin-openapi. The build tag mcs_nofast turns it off.
package fastdoc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcs-go/mcs/drivers/rest/internal/jsonscan"
	"github.com/mcs-go/mcs/internal/fastpath"
)

// The fast path for OpenAPI 3 JSON documents.
//
// Profiling the load of a large description shows nearly all of the time in
// kin-openapi's JSON decoding, and most of that in parts the tool listing
// never reads: the responses of every operation, examples, and component
// schemas only responses reference. kin-openapi also decodes the paths object
// twice (into generic values, then again into its types after re-encoding
// them), and every level of its decoding re-validates the bytes below it.
//
// Decode therefore scans the document once with a validating scanner,
// keeps only what the listing and the execution of operations read (the
// document's servers and security, each path item without its callbacks and
// with only the media types of its responses, and the components those parts reference, transitively, plus
// every security scheme), and decodes the kept pieces on all cores into
// kin-openapi's types: parameters, request bodies, media types and schemas
// member by member (see kinDecoder), the rest with kin-openapi's own
// decoders. References are then resolved by kin-openapi as before.
//
// Wherever the trimmed document could decode differently from the whole one,
// Decode gives up and the caller takes the ordinary path: a syntax error,
// a duplicate object key, an object key with an escape sequence, a key that
// the standard library would match case-insensitively to a field it is not
// written as, a path item $ref, a reference kin-openapi resolves that is not
// of the form #/components/<kind>/<name>, or a reference to another document.
// Path items whose numbers the ordinary path would round through float64 are
// decoded as the ordinary path decodes them.

// ErrNotFast says the fast path does not apply to a document (or is off); the
// caller decodes it the ordinary way.
var ErrNotFast = errors.New("the fast path does not apply")

// Outline is what the driver reads from the raw document besides the decoded
// document: the version fields and the order of the paths and their methods.
type Outline struct {
	OpenAPI string // value of "openapi", if any
	Swagger string // value of "swagger", if any
	Paths   []PathOrder
}

// PathOrder is one path of the document and its methods, in document order.
type PathOrder struct {
	Path    string
	Methods []string
}

// methods are the operations of a path item the driver lists, in its order.
var methods = []string{"get", "put", "post", "delete", "patch", "head", "options"}

// maxScanDepth is the nesting depth the standard library's decoder accepts.
const maxScanDepth = jsonscan.MaxDepth

type span struct{ start, end int }

// refAt is a "$ref" whose value is a string, at its position in the document.
type refAt struct {
	pos int
	ref string
}

// docScanner validates a JSON document and records where its "$ref" values
// are.
type docScanner struct {
	data []byte
	// responses are the document's response components by name, for
	// responseMedia; set before decoding and read-only then.
	responses map[string]span
	refs      []refAt
	// keys is the stack of the keys of the objects being scanned, for the
	// duplicate check.
	keys [][]span
	// odd counts numbers the ordinary path would change by decoding them into
	// float64 and encoding them again: fractions, exponents, more than 15
	// digits.
	odd int
	// escapedKeys accepts keys with escape sequences (the duplicate check
	// then compares them as written).
	escapedKeys bool
}

// fail is the result of a scan that found something the fast path does not
// handle, or a syntax error.
const fail = jsonscan.Fail

func isSpace(c byte) bool { return jsonscan.IsSpace(c) }

func (s *docScanner) ws(i int) int { return jsonscan.WS(s.data, i) }

// value validates the value that starts at or after i (after white space) and
// returns the index after it, or fail.
func (s *docScanner) value(i, depth int) int {
	i = s.ws(i)
	if i >= len(s.data) {
		return fail
	}
	switch c := s.data[i]; {
	case c == '{':
		return s.object(i, depth, nil)
	case c == '[':
		if depth >= maxScanDepth {
			return fail
		}
		i = s.ws(i + 1)
		if i < len(s.data) && s.data[i] == ']' {
			return i + 1
		}
		for {
			if i = s.value(i, depth+1); i == fail {
				return fail
			}
			i = s.ws(i)
			if i >= len(s.data) {
				return fail
			}
			switch s.data[i] {
			case ',':
				i++
			case ']':
				return i + 1
			default:
				return fail
			}
		}
	case c == '"':
		end, _ := s.str(i)
		return end
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(i)
	}
	return fail
}

func (s *docScanner) literal(i int, lit string) int { return jsonscan.Literal(s.data, i, lit) }

// number validates a JSON number at i, counting the odd ones.
func (s *docScanner) number(i int) int {
	end, odd := jsonscan.Number(s.data, i)
	if odd {
		s.odd++
	}
	return end
}

// str validates the string whose opening quote is at i; it returns the index
// after the closing quote and whether the string has escape sequences.
func (s *docScanner) str(i int) (int, bool) { return jsonscan.Str(s.data, i) }

// object validates the object at i. For each member, each (when not nil) is
// given the key and the index where the value starts and returns the index
// after the value, or fail; without each the values are validated and
// skipped. Duplicate keys, keys with escape sequences and keys the standard
// library would take for "$ref" without being written so fail.
func (s *docScanner) object(i, depth int, each func(key string, v int) int) int {
	if depth >= maxScanDepth {
		return fail
	}
	if len(s.keys) <= depth {
		s.keys = append(s.keys, make([][]span, depth+1-len(s.keys))...)
	}
	keys := s.keys[depth][:0]
	defer func() { s.keys[depth] = keys[:0] }()
	i = s.ws(i + 1)
	if i < len(s.data) && s.data[i] == '}' {
		return i + 1
	}
	var seen map[string]struct{}
	for {
		if i >= len(s.data) || s.data[i] != '"' {
			return fail
		}
		end, escaped := s.str(i)
		if end == fail || (escaped && !s.escapedKeys) {
			return fail
		}
		k := span{i + 1, end - 1}
		key := s.data[k.start:k.end]
		if !utf8.Valid(key) {
			return fail
		}
		if len(key) == 4 && key[0] == '$' && string(key) != "$ref" && strings.EqualFold(string(key), "$ref") {
			return fail
		}
		// A duplicate key: a linear check for small objects, a set for large.
		if seen == nil && len(keys) >= 16 {
			seen = make(map[string]struct{}, 2*len(keys))
			for _, o := range keys {
				seen[string(s.data[o.start:o.end])] = struct{}{}
			}
		}
		if seen != nil {
			if _, dup := seen[string(key)]; dup {
				return fail
			}
			seen[string(key)] = struct{}{}
		} else {
			for _, o := range keys {
				if bytes.Equal(s.data[o.start:o.end], key) {
					return fail
				}
			}
		}
		keys = append(keys, k)
		i = s.ws(end)
		if i >= len(s.data) || s.data[i] != ':' {
			return fail
		}
		v := s.ws(i + 1)
		isRef := string(key) == "$ref" && v < len(s.data) && s.data[v] == '"'
		if each != nil {
			i = each(string(key), v)
		} else {
			i = s.value(v, depth+1)
		}
		if i == fail {
			return fail
		}
		if isRef {
			if ref, ok := s.stringAt(span{v, i}); ok {
				s.refs = append(s.refs, refAt{pos: v, ref: ref})
			}
		}
		i = s.ws(i)
		if i >= len(s.data) {
			return fail
		}
		switch s.data[i] {
		case ',':
			i = s.ws(i + 1)
		case '}':
			return i + 1
		default:
			return fail
		}
	}
}

// stringAt decodes the JSON string at sp, which may not be a string.
func (s *docScanner) stringAt(sp span) (string, bool) {
	raw := s.data[sp.start:sp.end]
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		inner := raw[1 : len(raw)-1]
		if utf8.Valid(inner) {
			return string(inner), true
		}
	}
	var out string
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", false
	}
	return out, true
}

// refsIn returns the references recorded inside sp.
func (s *docScanner) refsIn(sp span) []refAt {
	lo, _ := slices.BinarySearchFunc(s.refs, sp.start, func(r refAt, pos int) int { return r.pos - pos })
	hi, _ := slices.BinarySearchFunc(s.refs, sp.end, func(r refAt, pos int) int { return r.pos - pos })
	return s.refs[lo:hi]
}

// foldsToOther reports whether the standard library would match key to one
// of fields without key being written exactly as that field: a key of another
// case, or one with non-ASCII letters that fold to ASCII ones.
func foldsToOther(key string, fields []string) bool {
	if slices.Contains(fields, key) {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f, key) {
			return true
		}
	}
	return false
}

// The fields of the kin-openapi objects the fast path takes apart.
var (
	docFields = []string{"openapi", "components", "info", "paths", "security", "servers", "tags",
		"externalDocs", "webhooks", "jsonSchemaDialect"}
	pathItemFields = []string{"$ref", "summary", "description", "connect", "delete", "get", "head",
		"options", "patch", "post", "put", "trace", "query", "additionalOperations", "servers", "parameters"}
	operationFields = []string{"tags", "summary", "description", "operationId", "parameters",
		"requestBody", "responses", "callbacks", "deprecated", "security", "servers", "externalDocs"}
	componentKinds = []string{"schemas", "parameters", "headers", "requestBodies", "responses",
		"securitySchemes", "examples", "links", "callbacks"}
)

// keptPathItemFields and keptOperationFields are what the driver reads.
var (
	keptPathItemFields  = []string{"summary", "description", "servers", "parameters"}
	keptOperationFields = []string{"tags", "summary", "description", "operationId", "parameters",
		"requestBody", "deprecated", "security", "servers"}
)

// pathItemScan is one path item of the document: its kept members.
type pathItemScan struct {
	path    string
	members []memberSpan // kept members, operations trimmed
	odd     bool         // numbers the ordinary path would round
	refs    []span       // the spans whose references are kept
}

type memberSpan struct {
	key string
	val span
	ops []memberSpan // for an operation: its kept members
	op  bool         // an operation object, of which ops are kept
}

// fastScan is what the scan of a document found.
type fastScan struct {
	ol         Outline
	servers    *span
	security   *span
	items      []pathItemScan
	components map[string]map[string]span // kind -> name -> value
	names      map[string][]string        // kind -> names in document order
}

// scanFast scans data, an OpenAPI 3 JSON document, or returns ErrNotFast.
func scanFast(data []byte) (*docScanner, *fastScan, error) {
	s := &docScanner{data: data}
	fs := &fastScan{components: map[string]map[string]span{}, names: map[string][]string{}}
	notFast := false
	end := s.object(s.ws(0), 0, func(key string, v int) int {
		if notFast {
			return fail
		}
		if foldsToOther(key, docFields) {
			notFast = true
			return fail
		}
		switch key {
		case "openapi", "swagger":
			e := s.value(v, 1)
			if e != fail {
				if str, ok := s.stringAt(span{v, e}); ok {
					if key == "openapi" {
						fs.ol.OpenAPI = str
					} else {
						fs.ol.Swagger = str
					}
				}
			}
			return e
		case "servers", "security":
			e := s.value(v, 1)
			sp := &span{v, e}
			if key == "servers" {
				fs.servers = sp
			} else {
				fs.security = sp
			}
			return e
		case "paths":
			if v >= len(data) || data[v] != '{' {
				notFast = true
				return fail
			}
			return s.object(v, 1, func(path string, pv int) int {
				return s.pathItem(fs, path, pv, &notFast)
			})
		case "components":
			if v >= len(data) || data[v] != '{' {
				notFast = true
				return fail
			}
			return s.object(v, 1, func(kind string, kv int) int {
				if foldsToOther(kind, componentKinds) {
					notFast = true
					return fail
				}
				if !slices.Contains(componentKinds, kind) {
					return s.value(kv, 2)
				}
				if kv >= len(data) || data[kv] != '{' {
					notFast = true
					return fail
				}
				m := map[string]span{}
				fs.components[kind] = m
				return s.object(kv, 2, func(name string, cv int) int {
					e := s.value(cv, 3)
					m[name] = span{cv, e}
					fs.names[kind] = append(fs.names[kind], name)
					return e
				})
			})
		}
		return s.value(v, 1)
	})
	if end == fail || s.ws(end) != len(data) || notFast {
		return nil, nil, ErrNotFast
	}
	return s, fs, nil
}

// pathItem scans the path item of path at v.
func (s *docScanner) pathItem(fs *fastScan, path string, v int, notFast *bool) int {
	po := PathOrder{Path: path}
	d := s.data
	if v >= len(d) || d[v] != '{' {
		// The outline keeps the path without methods; the ordinary decoder
		// decides what such a value means.
		*notFast = true
		return fail
	}
	odd := s.odd
	item := pathItemScan{path: path}
	end := s.object(v, 2, func(key string, mv int) int {
		if foldsToOther(key, pathItemFields) || key == "$ref" {
			*notFast = true
			return fail
		}
		if slices.Contains(methods, key) {
			po.Methods = append(po.Methods, key)
			if mv >= len(d) || d[mv] != '{' {
				e := s.value(mv, 3)
				item.members = append(item.members, memberSpan{key: key, val: span{mv, e}})
				item.refs = append(item.refs, span{mv, e})
				return e
			}
			op := memberSpan{key: key, op: true}
			e := s.object(mv, 3, func(okey string, ov int) int {
				if foldsToOther(okey, operationFields) {
					*notFast = true
					return fail
				}
				oe := s.value(ov, 4)
				if okey == "responses" {
					// Only the media types of the responses are read (they
					// decide whether an HTML answer is summarised); their
					// schemas and the components they reference are not kept.
					op.ops = append(op.ops, memberSpan{key: okey, val: span{ov, oe}})
					return oe
				}
				if slices.Contains(keptOperationFields, okey) {
					op.ops = append(op.ops, memberSpan{key: okey, val: span{ov, oe}})
					item.refs = append(item.refs, span{ov, oe})
				}
				return oe
			})
			op.val = span{mv, e}
			item.members = append(item.members, op)
			return e
		}
		e := s.value(mv, 3)
		if slices.Contains(keptPathItemFields, key) {
			item.members = append(item.members, memberSpan{key: key, val: span{mv, e}})
			item.refs = append(item.refs, span{mv, e})
		}
		return e
	})
	if end == fail {
		return fail
	}
	item.odd = s.odd != odd
	fs.ol.Paths = append(fs.ol.Paths, po)
	if !strings.HasPrefix(path, "x-") {
		fs.items = append(fs.items, item)
	}
	return end
}

// itemJSON writes the trimmed path item as JSON.
func (s *docScanner) itemJSON(buf *bytes.Buffer, members []memberSpan) {
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeKey(buf, m.key)
		if !m.op {
			buf.Write(s.data[m.val.start:m.val.end])
			continue
		}
		s.itemJSON(buf, withoutResponses(m.ops))
	}
	buf.WriteByte('}')
}

// withoutResponses returns the members of an operation but its responses,
// which responseMedia decodes.
func withoutResponses(ops []memberSpan) []memberSpan {
	i := slices.IndexFunc(ops, func(m memberSpan) bool { return m.key == "responses" })
	if i < 0 {
		return ops
	}
	return slices.Delete(slices.Clone(ops), i, i+1)
}

func writeKey(buf *bytes.Buffer, key string) {
	// Keys have no escape sequences (the scan refuses them) and are valid
	// JSON string contents as written.
	buf.WriteByte('"')
	buf.WriteString(key)
	buf.WriteString(`":`)
}

// componentRef parses a reference into the components: its kind and name.
// ok is false for a reference the fast path does not follow.
func componentRef(ref string) (kind, name string, ok bool) {
	rest, found := strings.CutPrefix(ref, "#/components/")
	if !found || strings.ContainsAny(rest, "%") {
		return "", "", false
	}
	kind, rest, found = strings.Cut(rest, "/")
	if !found || !slices.Contains(componentKinds, kind) {
		return "", "", false
	}
	name, _, _ = strings.Cut(rest, "/")
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	return kind, name, name != ""
}

// Decode decodes an OpenAPI 3 JSON document for the driver, or returns
// ErrNotFast (see the comment at the top of this file). It checks ctx between
// path items and components.
func Decode(ctx context.Context, data []byte) (*openapi3.T, Outline, error) {
	if !fastpath.On {
		return nil, Outline{}, ErrNotFast
	}
	s, fs, err := scanFast(data)
	if err != nil {
		return nil, Outline{}, err
	}
	if fs.ol.Swagger != "" || !strings.HasPrefix(fs.ol.OpenAPI, "3.") {
		return nil, fs.ol, ErrNotFast
	}

	// The components the kept parts reach.
	type compKey struct{ kind, name string }
	keep := map[compKey]bool{}
	var work []span
	for _, it := range fs.items {
		work = append(work, it.refs...)
	}
	for _, name := range fs.names["securitySchemes"] {
		keep[compKey{"securitySchemes", name}] = true
		work = append(work, fs.components["securitySchemes"][name])
	}
	for len(work) > 0 {
		sp := work[len(work)-1]
		work = work[:len(work)-1]
		for _, r := range s.refsIn(sp) {
			kind, name, ok := componentRef(r.ref)
			if !ok {
				return nil, fs.ol, ErrNotFast
			}
			k := compKey{kind, name}
			if keep[k] {
				continue
			}
			keep[k] = true
			if csp, ok := fs.components[kind][name]; ok {
				work = append(work, csp)
			}
		}
	}

	doc := &openapi3.T{OpenAPI: fs.ol.OpenAPI, Paths: openapi3.NewPathsWithCapacity(len(fs.items))}
	if fs.servers != nil {
		if err := json.Unmarshal(data[fs.servers.start:fs.servers.end], &doc.Servers); err != nil {
			return nil, fs.ol, ErrNotFast
		}
	}
	if fs.security != nil {
		if err := json.Unmarshal(data[fs.security.start:fs.security.end], &doc.Security); err != nil {
			return nil, fs.ol, ErrNotFast
		}
	}
	// Path items and components decode independently of each other, on as
	// many goroutines as the process may run at once.
	type task struct {
		item *pathItemScan
		kind string
		name string
	}
	var tasks []task
	for i := range fs.items {
		tasks = append(tasks, task{item: &fs.items[i]})
	}
	for _, kind := range componentKinds {
		for _, name := range fs.names[kind] {
			if keep[compKey{kind, name}] {
				tasks = append(tasks, task{kind: kind, name: name})
			}
		}
	}
	s.responses = fs.components["responses"]
	items := make([]*openapi3.PathItem, len(fs.items))
	comps := make([]any, len(tasks))
	err = parallel(ctx, len(tasks), func(i int, buf *bytes.Buffer) error {
		t := tasks[i]
		if t.item != nil {
			item, err := s.decodePathItem(buf, t.item)
			items[i] = item
			return err
		}
		sp := fs.components[t.kind][t.name]
		c, err := s.decodeComponent(t.kind, sp)
		comps[i] = c
		return err
	})
	if err != nil {
		return nil, fs.ol, err
	}
	for i, it := range fs.items {
		doc.Paths.Set(it.path, items[i])
	}
	if len(fs.components) > 0 {
		doc.Components = &openapi3.Components{}
		for i, t := range tasks[len(fs.items):] {
			addComponent(doc.Components, t.kind, t.name, comps[len(fs.items)+i])
		}
	}
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = false
	l.Context = ctx
	if err := l.ResolveRefsIn(doc, nil); err != nil {
		return nil, fs.ol, ErrNotFast
	}
	return doc, fs.ol, nil
}

// parallel runs fn for 0 <= i < n on up to GOMAXPROCS goroutines, each with
// its own buffer, and returns the error of the lowest i that failed, or the
// context's error once ctx is done.
func parallel(ctx context.Context, n int, fn func(i int, buf *bytes.Buffer) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n/16, 1))
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				errs[i] = fn(i, &buf)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodePathItem decodes the kept members of a path item with kin-openapi's
// decoders, one member at a time. A path item with numbers the ordinary path
// rounds through float64 is decoded as the ordinary path decodes it.
func (s *docScanner) decodePathItem(buf *bytes.Buffer, it *pathItemScan) (*openapi3.PathItem, error) {
	item := new(openapi3.PathItem)
	if it.odd {
		buf.Reset()
		s.itemJSON(buf, it.members)
		var v any
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
			return nil, ErrNotFast
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, ErrNotFast
		}
		if err := item.UnmarshalJSON(raw); err != nil {
			return nil, ErrNotFast
		}
		for _, m := range it.members {
			for _, om := range m.ops {
				if om.key != "responses" {
					continue
				}
				rs, err := s.responseMedia(om.val)
				if err != nil {
					return nil, ErrNotFast
				}
				if op := item.GetOperation(strings.ToUpper(m.key)); op != nil {
					op.Responses = rs
				}
			}
		}
		return item, nil
	}
	for _, m := range it.members {
		raw := s.data[m.val.start:m.val.end]
		var err error
		switch m.key {
		case "summary":
			err = json.Unmarshal(raw, &item.Summary)
		case "description":
			err = json.Unmarshal(raw, &item.Description)
		case "servers":
			err = json.Unmarshal(raw, &item.Servers)
		case "parameters":
			item.Parameters, err = s.kin().parameters(m.val)
		default: // a method
			var op *openapi3.Operation
			if m.op {
				if op, err = s.decodeOperation(m.ops); err != nil {
					return nil, err
				}
			} else if string(raw) != "null" {
				return nil, ErrNotFast
			}
			switch m.key {
			case "get":
				item.Get = op
			case "put":
				item.Put = op
			case "post":
				item.Post = op
			case "delete":
				item.Delete = op
			case "patch":
				item.Patch = op
			case "head":
				item.Head = op
			case "options":
				item.Options = op
			}
		}
		if err != nil {
			return nil, ErrNotFast
		}
	}
	return item, nil
}

// decodeOperation decodes the kept members of an operation.
func (s *docScanner) decodeOperation(members []memberSpan) (*openapi3.Operation, error) {
	op := new(openapi3.Operation)
	for _, m := range members {
		raw := s.data[m.val.start:m.val.end]
		var err error
		switch m.key {
		case "tags":
			err = json.Unmarshal(raw, &op.Tags)
		case "summary":
			err = json.Unmarshal(raw, &op.Summary)
		case "description":
			err = json.Unmarshal(raw, &op.Description)
		case "operationId":
			err = json.Unmarshal(raw, &op.OperationID)
		case "parameters":
			op.Parameters, err = s.kin().parameters(m.val)
		case "requestBody":
			if string(raw) != "null" {
				op.RequestBody, err = s.kin().requestBodyRef(m.val)
			}
		case "deprecated":
			err = json.Unmarshal(raw, &op.Deprecated)
		case "security":
			err = json.Unmarshal(raw, &op.Security)
		case "servers":
			err = json.Unmarshal(raw, &op.Servers)
		case "responses":
			op.Responses, err = s.responseMedia(m.val)
		}
		if err != nil {
			return nil, ErrNotFast
		}
	}
	return op, nil
}

// maxResponseRefs bounds a chain of response references (#/components/responses/a
// naming #/components/responses/b ...) that responseMedia follows.
const maxResponseRefs = 32

// responseMedia decodes the responses object at sp as far as the driver reads
// it: whether a response documents HTML (see documentsHTML). It returns the
// responses with HTML media types in their content, without their schemas,
// references into the response components followed; nil when there are none.
// Whatever it does not handle (a value that is not an object, a reference
// elsewhere or to a missing component, a longer chain) returns ErrNotFast, so
// that the ordinary path decides what it means.
func (s *docScanner) responseMedia(sp span) (*openapi3.Responses, error) {
	k := s.kin()
	if !k.isObject(sp) {
		return nil, ErrNotFast
	}
	if !containsHTML(k.raw(sp)) && !s.mayReferHTML(sp) {
		return nil, nil // no response can name an HTML media type
	}
	var rs *openapi3.Responses
	var err error
	k.members(sp, func(status string, val span) bool {
		if strings.HasPrefix(status, "x-") || string(k.raw(val)) == "null" {
			return true // an extension, as kin-openapi reads it; a null response
		}
		for range maxResponseRefs {
			if !k.isObject(val) || !k.hasRef(val) {
				break
			}
			val, err = s.responseTarget(val)
			if err != nil {
				return false
			}
		}
		if !k.isObject(val) || k.hasRef(val) {
			err = ErrNotFast
			return false
		}
		if !containsHTML(k.raw(val)) {
			return true
		}
		var content openapi3.Content
		k.members(val, func(key string, cv span) bool {
			if key != "content" {
				return true
			}
			if !k.isObject(cv) {
				err = ErrNotFast
				return false
			}
			k.members(cv, func(media string, _ span) bool {
				if containsHTML([]byte(media)) {
					if content == nil {
						content = openapi3.Content{}
					}
					content[media] = &openapi3.MediaType{}
				}
				return true
			})
			return true
		})
		if content != nil {
			if rs == nil {
				rs = openapi3.NewResponsesWithCapacity(1)
			}
			rs.Set(status, &openapi3.ResponseRef{Value: &openapi3.Response{Content: content}})
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return rs, nil
}

// mayReferHTML reports whether a reference inside sp may lead to a response
// that names an HTML media type: one to a response component that holds "html"
// or is itself a reference, to a missing one, or one that is not of the form
// #/components/<kind>/<name>. It reads the references the scan recorded.
func (s *docScanner) mayReferHTML(sp span) bool {
	k := s.kin()
	for _, r := range s.refsIn(sp) {
		kind, name, ok := componentRef(r.ref)
		if !ok {
			return true
		}
		if kind != "responses" {
			continue
		}
		c, found := s.responses[name]
		if !found || containsHTML(k.raw(c)) || (k.isObject(c) && k.hasRef(c)) {
			return true
		}
	}
	return false
}

// containsHTML reports whether b holds "html" in any case, as every HTML media
// type does (text/html, application/xhtml+xml).
func containsHTML(b []byte) bool {
	for i := 0; i+4 <= len(b); {
		j := bytes.IndexAny(b[i:], "hH")
		if j < 0 {
			return false
		}
		i += j
		if i+4 <= len(b) && bytes.EqualFold(b[i:i+4], []byte("html")) {
			return true
		}
		i++
	}
	return false
}

// responseTarget returns the response component the "$ref" of the object at
// sp names.
func (s *docScanner) responseTarget(sp span) (span, error) {
	k := s.kin()
	var target span
	found := false
	k.members(sp, func(key string, val span) bool {
		if key != "$ref" {
			return true
		}
		ref, ok := s.stringAt(val)
		if !ok {
			return false
		}
		kind, name, ok := componentRef(ref)
		if !ok || kind != "responses" {
			return false
		}
		target, found = s.responses[name]
		return false
	})
	if !found {
		return span{}, ErrNotFast
	}
	return target, nil
}

// kin returns the decoder of kin-openapi objects over the document.
func (s *docScanner) kin() *kinDecoder { return &kinDecoder{data: s.data} }

// decodeComponent decodes the component of kind at sp.
func (s *docScanner) decodeComponent(kind string, sp span) (any, error) {
	raw := s.data[sp.start:sp.end]
	var v any
	switch kind {
	case "schemas":
		if string(raw) == "null" {
			return (*openapi3.SchemaRef)(nil), nil
		}
		r, err := s.kin().schemaRef(sp)
		if err != nil {
			return nil, ErrNotFast
		}
		return r, nil
	case "parameters":
		if string(raw) == "null" {
			return (*openapi3.ParameterRef)(nil), nil
		}
		r, err := s.kin().parameterRef(sp)
		if err != nil {
			return nil, ErrNotFast
		}
		return r, nil
	case "requestBodies":
		if string(raw) == "null" {
			return (*openapi3.RequestBodyRef)(nil), nil
		}
		r, err := s.kin().requestBodyRef(sp)
		if err != nil {
			return nil, ErrNotFast
		}
		return r, nil
	case "headers":
		v = new(openapi3.HeaderRef)
	case "responses":
		v = new(openapi3.ResponseRef)
	case "securitySchemes":
		v = new(openapi3.SecuritySchemeRef)
	case "examples":
		v = new(openapi3.ExampleRef)
	case "links":
		v = new(openapi3.LinkRef)
	case "callbacks":
		v = new(openapi3.CallbackRef)
	default:
		return nil, ErrNotFast
	}
	if string(raw) == "null" {
		// As the standard library decodes null in a map of pointers.
		return reflect.Zero(reflect.TypeOf(v)).Interface(), nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, ErrNotFast
	}
	return v, nil
}

// addComponent adds a component decodeComponent returned to c.
func addComponent(c *openapi3.Components, kind, name string, v any) {
	switch kind {
	case "schemas":
		addTo(&c.Schemas, name, v.(*openapi3.SchemaRef))
	case "parameters":
		addTo(&c.Parameters, name, v.(*openapi3.ParameterRef))
	case "headers":
		addTo(&c.Headers, name, v.(*openapi3.HeaderRef))
	case "requestBodies":
		addTo(&c.RequestBodies, name, v.(*openapi3.RequestBodyRef))
	case "responses":
		addTo(&c.Responses, name, v.(*openapi3.ResponseRef))
	case "securitySchemes":
		addTo(&c.SecuritySchemes, name, v.(*openapi3.SecuritySchemeRef))
	case "examples":
		addTo(&c.Examples, name, v.(*openapi3.ExampleRef))
	case "links":
		addTo(&c.Links, name, v.(*openapi3.LinkRef))
	case "callbacks":
		addTo(&c.Callbacks, name, v.(*openapi3.CallbackRef))
	}
}

func addTo[M ~map[string]*V, V any](m *M, name string, v *V) {
	if *m == nil {
		*m = M{}
	}
	(*m)[name] = v
}
