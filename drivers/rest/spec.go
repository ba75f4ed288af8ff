package rest

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/toolname"
)

// maxNameLen is the longest tool name the driver publishes, and the default of
// Config.MaxNameLength.
const maxNameLen = 64

// minNameLen is the smallest Config.MaxNameLength: room for a readable start
// and the hash of a shortened name.
const minNameLen = 16

// Where an argument goes.
const (
	inPath    = "path"
	inQuery   = "query"
	inHeader  = "header"
	inCookie  = "cookie"
	inBody    = "body"    // one property of a JSON object body
	inForm    = "form"    // one field of a form body
	inPayload = "payload" // the whole body
)

// How the request body is encoded.
type bodyKind int

const (
	bodyNone bodyKind = iota
	bodyJSON
	bodyForm
	bodyMultipart
	bodyRaw
)

// spec is a loaded document: the tools in order and the operations by name.
// It is immutable.
type spec struct {
	tools []mcs.Tool
	ops   map[string]*operation
	base  *url.URL // the document's base URL; nil when it has none
	// baseErr says why the document has no base URL.
	baseErr error
	// cached is set when the spec came from the tool-table cache: it holds
	// the listing only (ops maps each name to nil) and the document to
	// decode for executing.
	cached *cachedSource
	// secured says some listed operation has a security requirement of the
	// document's, so that credentials have somewhere to go without
	// Config.AuthScheme.
	secured bool

	posOnce sync.Once
	pos     map[string]int // tool name -> its position in tools, built on first use
}

// position returns the position of the tool name in s.tools.
func (s *spec) position(name string) (int, bool) {
	s.posOnce.Do(func() {
		s.pos = make(map[string]int, len(s.tools))
		for i, t := range s.tools {
			s.pos[t.Name] = i
		}
	})
	i, ok := s.pos[name]
	return i, ok
}

// operation is everything needed to execute one tool.
type operation struct {
	tool   mcs.Tool
	method string // upper case
	path   string // the path template, such as /pets/{petId}
	args   []argument
	index  map[string]int // argument name -> position in args
	body   bodyKind
	media  string // the Content-Type of the body
	// bodyRequired says the document requires a body even when no body
	// argument is given.
	bodyRequired bool
	// encoding holds the form or multipart body's encoding objects by field
	// name, for a body given whole as one "body" argument.
	encoding openapi3.Encodings
	// htmlOK says the operation documents an HTML response, which is then
	// returned as it is rather than summarised.
	htmlOK  bool
	base    *url.URL
	baseErr error
	// security lists the alternatives the document allows, in order; one of
	// them must be satisfied. An empty alternative means anonymous access. Nil
	// means the operation needs no credentials.
	security [][]schemeUse
	// undeclared says the document gives the operation no security
	// requirement at all (neither its own nor the document's); Config.AuthScheme
	// applies to such operations only, not to one declared anonymous
	// (security: []).
	undeclared bool
}

// argument is one tool parameter and where it goes.
type argument struct {
	name     string // the name the model uses
	wire     string // the name on the wire
	in       string
	required bool
	types    []string // the schema's types; nil means any
	style    string
	explode  bool
	asJSON   bool          // a parameter with content: the value is sent as JSON text
	binary   bool          // a multipart field sent as a file
	enc      fieldEncoding // a form or multipart field: its encoding
}

type schemeUse struct {
	name   string
	scheme *openapi3.SecurityScheme // nil when the document does not define it
	// operator marks the scheme of Config.AuthScheme: its credential is the
	// driver's own scope, never one of Config.Scopes.
	operator bool
}

// builder turns a parsed document into a spec.
type builder struct {
	doc     *openapi3.T
	cfg     Config
	specURL *url.URL // the http(s) URL the spec came from; nil otherwise
	base    *url.URL // Config.BaseURL; nil when unset
}

// build turns the document into a spec, in document order. It checks ctx
// between operations and returns its error once it is done.
func (b *builder) build(ctx context.Context, ol outline) (*spec, error) {
	s := &spec{ops: map[string]*operation{}}
	docBase, docErr := b.docBase()
	s.base, s.baseErr = docBase, docErr

	// Paths in document order, then any the outline missed, sorted.
	order := ol.paths
	seen := make(map[string]bool, len(order))
	for _, po := range order {
		seen[po.path] = true
	}
	for _, p := range b.doc.Paths.Keys() {
		if !seen[p] {
			order = append(order, pathOrder{path: p})
		}
	}
	done := map[string]bool{}
	used := newNameSet()
	n := 0
	for _, po := range order {
		if done[po.path] {
			continue
		}
		done[po.path] = true
		item := b.doc.Paths.Value(po.path)
		if item == nil || !b.pathIncluded(po.path) {
			continue
		}
		pathBase, pathErr := docBase, docErr
		// Config.BaseURL is the operator's choice and wins over every server the
		// document names; otherwise path and operation servers override the default.
		if b.base == nil && len(item.Servers) > 0 {
			pathBase, pathErr = b.server(item.Servers[0])
		}
		ms := po.methods
		for _, m := range methods {
			if !slices.Contains(ms, m) {
				ms = append(ms[:len(ms):len(ms)], m)
			}
		}
		for _, m := range ms {
			op := item.GetOperation(strings.ToUpper(m))
			if op == nil || !b.tagsIncluded(op.Tags) {
				continue
			}
			if n++; n%64 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			o := b.operation(po.path, m, item, op)
			o.base, o.baseErr = pathBase, pathErr
			if b.base == nil && op.Servers != nil && len(*op.Servers) > 0 {
				o.base, o.baseErr = b.server((*op.Servers)[0])
			}
			full := baseToolName(op.OperationID, m, po.path)
			o.tool.Name = uniqueToolName(toolname.Shorten(full, b.nameLimit()), used, b.nameLimit())
			if o.tool.Name != full {
				o.tool.Description += "\n\n(operationId: " + originalID(op.OperationID, m, po.path) + ")"
			}
			s.tools = append(s.tools, o.tool)
			s.ops[o.tool.Name] = o
			if o.security != nil {
				s.secured = true
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func (b *builder) pathIncluded(p string) bool {
	return len(b.cfg.IncludePaths) == 0 || slices.Contains(b.cfg.IncludePaths, p)
}

func (b *builder) tagsIncluded(tags []string) bool {
	if len(b.cfg.IncludeTags) == 0 {
		return true
	}
	for _, want := range b.cfg.IncludeTags {
		for _, t := range tags {
			if strings.EqualFold(want, t) {
				return true
			}
		}
	}
	return false
}

// docBase is the base URL of operations without servers of their own.
func (b *builder) docBase() (*url.URL, error) {
	if b.base != nil {
		return b.base, nil
	}
	if len(b.doc.Servers) > 0 && b.doc.Servers[0] != nil {
		return b.server(b.doc.Servers[0])
	}
	// No servers: OpenAPI's default server is "/", relative to the document.
	if b.specURL == nil {
		return nil, errors.New("the document has no servers and was not loaded from an http(s) URL; set Config.BaseURL")
	}
	return b.server(&openapi3.Server{URL: "/"})
}

// server resolves a server object to an absolute http(s) URL: variables take
// their defaults and a relative URL resolves against the spec's URL.
func (b *builder) server(srv *openapi3.Server) (*url.URL, error) {
	if srv == nil {
		return nil, errors.New("the server object is empty")
	}
	raw := srv.URL
	for _, name := range sortedKeys(srv.Variables) {
		if v := srv.Variables[name]; v != nil {
			raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
		}
	}
	if strings.ContainsAny(raw, "{}") {
		return nil, fmt.Errorf("server URL %q has a variable without a default; set Config.BaseURL", srv.URL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("server URL %q is not a valid URL; set Config.BaseURL", srv.URL)
	}
	if !u.IsAbs() {
		if b.specURL == nil {
			return nil, fmt.Errorf("server URL %q is relative and the spec was not loaded from an http(s) URL; set Config.BaseURL", srv.URL)
		}
		u = b.specURL.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q is not an http(s) URL; set Config.BaseURL", srv.URL)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// operation builds the tool and the argument plan of one operation. The name
// is set by the caller.
func (b *builder) operation(path, method string, item *openapi3.PathItem, op *openapi3.Operation) *operation {
	o := &operation{method: strings.ToUpper(method), path: path, index: map[string]int{}}
	o.tool.Title = strings.TrimSpace(op.Summary)
	o.tool.Annotations = methodAnnotations(o.method)
	switch {
	case strings.TrimSpace(op.Description) != "":
		o.tool.Description = strings.TrimSpace(op.Description)
	case o.tool.Title != "":
		o.tool.Description = o.tool.Title
	default:
		o.tool.Description = o.method + " " + path
	}

	// Operation parameters, then the path item's that are not overridden.
	type key struct{ in, name string }
	var params []*openapi3.Parameter
	have := map[key]bool{}
	for _, list := range []openapi3.Parameters{op.Parameters, item.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			k := key{p.In, p.Name}
			if have[k] {
				continue
			}
			have[k] = true
			params = append(params, p)
		}
	}
	for _, p := range params {
		o.addParameter(p)
	}
	// A template variable the document does not declare (or declares in a
	// document that is not loaded) is still a required path parameter.
	for _, name := range templateVars(path) {
		if o.argIn(name, inPath) == nil {
			o.add(argument{wire: name, in: inPath, required: true, style: "simple", types: []string{"string"}},
				name, "", map[string]any{"type": "string"})
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		o.addBody(op.RequestBody.Value)
	}
	o.htmlOK = documentsHTML(op.Responses)
	o.security = b.security(op)
	o.undeclared = op.Security == nil && len(b.doc.Security) == 0
	return o
}

// templateVars returns the names between braces in a path template, in order.
func templateVars(path string) []string {
	var out []string
	for {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			return out
		}
		end := strings.IndexByte(path[open:], '}')
		if end < 0 {
			return out
		}
		if name := path[open+1 : open+end]; name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
		path = path[open+end+1:]
	}
}

// ignoredHeaders are header parameters OpenAPI says to ignore.
var ignoredHeaders = []string{"accept", "content-type", "authorization"}

func (op *operation) addParameter(p *openapi3.Parameter) {
	switch p.In {
	case inPath, inQuery, inHeader, inCookie:
	default:
		return
	}
	if p.Name == "" || (p.In == inHeader && slices.Contains(ignoredHeaders, strings.ToLower(p.Name))) {
		return
	}
	a := argument{wire: p.Name, in: p.In, required: p.Required || p.In == inPath}
	schemaRef := p.Schema
	if schemaRef == nil && len(p.Content) > 0 {
		mt := p.Content[sortedKeys(p.Content)[0]]
		if mt != nil {
			schemaRef = mt.Schema
		}
		a.asJSON = true
	}
	a.types = schemaTypes(schemaRef)
	// OpenAPI's defaults: form for query and cookie, simple for path and
	// header; explode only for form.
	switch {
	case p.Style != "":
		a.style = p.Style
	case p.In == inQuery || p.In == inCookie:
		a.style = "form"
	default:
		a.style = "simple"
	}
	a.explode = a.style == "form"
	if p.Explode != nil {
		a.explode = *p.Explode
	}
	name := p.Name
	if op.taken(name) {
		name = p.In + "_" + p.Name
	}
	op.add(a, name, p.Description, convertSchema(schemaRef))
}

func (op *operation) addBody(rb *openapi3.RequestBody) {
	media, mt, kind := pickMedia(rb.Content)
	if kind == bodyNone {
		return
	}
	op.body, op.media, op.bodyRequired = kind, media, rb.Required
	var schemaRef *openapi3.SchemaRef
	if mt != nil {
		schemaRef = mt.Schema
		if kind == bodyForm || kind == bodyMultipart {
			op.encoding = mt.Encoding
		}
	}
	if emptyObject(schemaRef) {
		// Nothing to send (Stripe gives most GETs such a body): no parameter.
		return
	}
	if kind == bodyJSON || kind == bodyForm || kind == bodyMultipart {
		if shape, ok := flattenObject(schemaRef); ok {
			in := inBody
			if kind != bodyJSON {
				in = inForm
			}
			for _, prop := range sortedKeys(shape.props) {
				ps := shape.props[prop]
				if ps != nil && ps.Value != nil && ps.Value.ReadOnly {
					continue
				}
				a := argument{wire: prop, in: in, required: shape.required[prop], types: schemaTypes(ps)}
				if in == inForm {
					a.enc = newFieldEncoding(op.encoding[prop])
				}
				if kind == bodyMultipart && ps != nil && ps.Value != nil {
					a.binary = ps.Value.Format == "binary" || ps.Value.ContentMediaType == "application/octet-stream"
				}
				name := prop
				if op.taken(name) {
					name = "body_" + prop
				}
				desc := ""
				if ps != nil && ps.Value != nil {
					desc = ps.Value.Description
				}
				op.add(a, name, desc, convertSchema(ps))
			}
			return
		}
	}
	a := argument{wire: "body", in: inPayload, required: rb.Required, types: schemaTypes(schemaRef)}
	schema := convertSchema(schemaRef)
	if kind == bodyRaw && schema == nil {
		schema = map[string]any{"type": "string"}
	}
	if schema == nil {
		schema = map[string]any{}
	}
	desc := strings.TrimSpace(rb.Description)
	if desc == "" {
		desc = "The request body (" + media + ")."
	}
	name := "body"
	if op.taken(name) {
		name = "body_body"
	}
	op.add(a, name, desc, schema)
}

// taken reports whether an argument already has name.
func (op *operation) taken(name string) bool {
	_, ok := op.index[name]
	return ok
}

// add appends a with the first free name among name, name_2, name_3, ...
func (op *operation) add(a argument, name, desc string, schema map[string]any) {
	final := name
	for i := 2; op.taken(final); i++ {
		final = name + "_" + strconv.Itoa(i)
	}
	a.name = final
	op.index[final] = len(op.args)
	op.args = append(op.args, a)
	op.tool.Parameters = append(op.tool.Parameters, mcs.Parameter{
		Name:        final,
		Description: strings.TrimSpace(desc),
		Required:    a.required,
		Schema:      schema,
	})
}

// pickMedia chooses the request body media type: application/json, then any
// other JSON type, then a form, then multipart, then the first other type.
func pickMedia(content openapi3.Content) (string, *openapi3.MediaType, bodyKind) {
	best, bestRank := "", 0
	var kind bodyKind
	for _, media := range sortedKeys(content) {
		k, rank := mediaRank(media, content[media])
		if rank > bestRank {
			best, bestRank, kind = media, rank, k
		}
	}
	if bestRank == 0 {
		return "", nil, bodyNone
	}
	send := best
	switch {
	case kind == bodyJSON && strings.Contains(best, "*"):
		send = "application/json"
	case kind == bodyForm:
		send = "application/x-www-form-urlencoded"
	}
	return send, content[best], kind
}

func mediaRank(media string, mt *openapi3.MediaType) (bodyKind, int) {
	base, _, err := mime.ParseMediaType(media)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(media))
	}
	switch {
	case base == "application/json":
		return bodyJSON, 6
	case strings.HasSuffix(base, "+json"), base == "text/json":
		return bodyJSON, 5
	case base == "*/*" || base == "application/*":
		// Swagger 2.0 without consumes: formData fields still make a form.
		if k, ok := swaggerFormKind(mt); ok {
			return k, 4
		}
		return bodyJSON, 4
	case base == "application/x-www-form-urlencoded":
		return bodyForm, 3
	case base == "multipart/form-data":
		return bodyMultipart, 2
	case strings.Contains(base, "/") && !strings.Contains(base, "*"):
		return bodyRaw, 1
	}
	return bodyNone, 0
}

// swaggerFormKind recognises a body converted from Swagger 2.0 formData
// parameters.
func swaggerFormKind(mt *openapi3.MediaType) (bodyKind, bool) {
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return bodyNone, false
	}
	form, file := false, false
	for _, p := range mt.Schema.Value.Properties {
		if p == nil || p.Value == nil {
			continue
		}
		if _, ok := p.Value.Extensions["x-formData-name"]; ok {
			form = true
			file = file || p.Value.Format == "binary"
		}
	}
	switch {
	case file:
		return bodyMultipart, true
	case form:
		return bodyForm, true
	}
	return bodyNone, false
}

// security returns the security alternatives of op.
func (b *builder) security(op *openapi3.Operation) [][]schemeUse {
	reqs := b.doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	if len(reqs) == 0 {
		return nil
	}
	var schemes openapi3.SecuritySchemes
	if b.doc.Components != nil {
		schemes = b.doc.Components.SecuritySchemes
	}
	out := make([][]schemeUse, 0, len(reqs))
	for _, req := range reqs {
		alt := make([]schemeUse, 0, len(req))
		for _, name := range sortedKeys(req) {
			use := schemeUse{name: name}
			if ref := schemes[name]; ref != nil {
				use.scheme = ref.Value
			}
			alt = append(alt, use)
		}
		out = append(out, alt)
	}
	return out
}

// baseToolName derives the full tool name: the operationId, else
// <method>_<path> with the slashes as underscores and the braces dropped; every
// character outside [A-Za-z0-9_-] becomes "_". The caller shortens it.
func baseToolName(operationID, method, path string) string {
	raw := operationID
	if raw == "" {
		p := strings.NewReplacer("{", "", "}", "").Replace(path)
		p = strings.ReplaceAll(strings.Trim(p, "/"), "/", "_")
		raw = method
		if p != "" {
			raw += "_" + p
		}
	}
	var sb strings.Builder
	sb.Grow(len(raw))
	for _, r := range raw {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// originalID names an operation for a shortened tool's description: its
// operationId, else "<METHOD> <path>".
func originalID(operationID, method, path string) string {
	if operationID != "" {
		return operationID
	}
	return strings.ToUpper(method) + " " + path
}

// nameLimit is the longest tool name this document's tools may have.
func (b *builder) nameLimit() int {
	if b.cfg.MaxNameLength > 0 {
		return b.cfg.MaxNameLength
	}
	return maxNameLen
}

// nameSet is the set of tool names given out, with what it takes to give out
// the next one in constant time.
type nameSet struct {
	used map[string]bool
	// next maps a base name to the smallest suffix number not yet tried for it.
	next map[string]int
}

func newNameSet() *nameSet {
	return &nameSet{used: map[string]bool{}, next: map[string]int{}}
}

// uniqueToolName returns the first free of name, name_2, name_3, ..., each
// shortened to limit with a stable hash when longer (see toolname.Shorten), and
// marks it used. Every number below set.next[name] was tried for name and found
// taken, and names are never released, so the search resumes there: n
// operations of one name cost O(n) in all, not O(n²).
func uniqueToolName(name string, set *nameSet, limit int) string {
	if !set.used[name] {
		set.used[name] = true
		return name
	}
	for i := max(2, set.next[name]); ; i++ {
		if final := toolname.Shorten(name+"_"+strconv.Itoa(i), limit); !set.used[final] {
			set.used[final] = true
			set.next[name] = i + 1
			return final
		}
	}
}

// methodAnnotations derives the behaviour hints of an operation from its HTTP
// method (RFC 9110 semantics): GET, HEAD and OPTIONS are read-only; PUT and
// DELETE are idempotent and may overwrite or delete; POST and PATCH may change
// anything. A document can break these semantics, so they stay hints.
func methodAnnotations(method string) *mcs.ToolAnnotations {
	switch method {
	case "GET", "HEAD", "OPTIONS":
		return &mcs.ToolAnnotations{ReadOnly: true}
	case "PUT", "DELETE":
		return &mcs.ToolAnnotations{Destructive: true, Idempotent: true}
	default:
		return &mcs.ToolAnnotations{Destructive: true}
	}
}

// documentsHTML reports whether any response of an operation declares an HTML
// media type.
func documentsHTML(rs *openapi3.Responses) bool {
	if rs == nil {
		return false
	}
	for _, r := range rs.Map() {
		if r == nil || r.Value == nil {
			continue
		}
		for media := range r.Value.Content {
			if mt, _, err := mime.ParseMediaType(media); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
				return true
			}
		}
	}
	return false
}

// emptyObject reports whether a body schema admits only an empty object: type
// object (or no type) with additionalProperties false and no properties,
// allOf, oneOf, anyOf or pattern properties, as Stripe declares the bodies of
// its GET operations. Such a body takes no parameter. (A bare {type: object}
// admits any object and keeps its "body" parameter.)
func emptyObject(ref *openapi3.SchemaRef) bool {
	if ref == nil || ref.Value == nil || externalRef(ref) != "" {
		return false
	}
	s := ref.Value
	if !s.Type.Is("object") && !s.Type.IsEmpty() {
		return false
	}
	if len(s.Properties) > 0 || len(s.AllOf) > 0 || len(s.OneOf) > 0 || len(s.AnyOf) > 0 ||
		len(s.PatternProperties) > 0 || s.AdditionalProperties.Schema != nil {
		return false
	}
	return s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has
}
