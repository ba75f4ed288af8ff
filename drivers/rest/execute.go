package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs"
)

// maxErrorBody is how much of a failed response's body an error quotes.
const maxErrorBody = 500

// ErrUnknownTool is [mcs.ErrUnknownTool], which the error of a call to a tool the
// spec does not define wraps.
//
// Deprecated: use mcs.ErrUnknownTool.
var ErrUnknownTool = mcs.ErrUnknownTool

// StatusError is the error of a call the server answered with a status outside
// 2xx (a redirect to another host is refused before it gets here). Its message
// is "<status> <reason>: <first 500 bytes of the body>".
type StatusError struct {
	// StatusCode is the HTTP status, such as 404.
	StatusCode int
	// Reason is the reason phrase, such as "Not Found".
	Reason string
	// Body holds the first 500 bytes of the response body, credentials removed:
	// JSON compacted, an HTML page as a one-line summary (`HTML page "<title>"
	// (<n> bytes), not shown`).
	Body string
	// Message is the error message of a JSON body ({"message": ...},
	// {"error": {"message": ...}}, ...), credentials removed; "" when there is
	// none.
	Message string
}

// Error returns "<status> <reason>: <body>", without the colon when the body
// is empty. When the body was cut before its message, the message comes first:
// "<status> <reason>: <message>; body: <body>".
func (e *StatusError) Error() string {
	s := strconv.Itoa(e.StatusCode)
	if e.Reason != "" {
		s += " " + e.Reason
	}
	switch {
	case e.Message != "" && !strings.Contains(e.Body, e.Message):
		s += ": " + e.Message + "; body: " + e.Body
	case e.Body != "":
		s += ": " + e.Body
	}
	return s
}

// request is a call ready to send.
type request struct {
	url     *url.URL
	header  http.Header
	cookies []string
	body    []byte
	hasBody bool
	media   string
}

// prepare checks args against op and builds the request, credentials not yet
// included. It does no I/O.
func (op *operation) prepare(args map[string]any) (*request, error) {
	if err := op.checkNames(args); err != nil {
		return nil, err
	}
	if op.baseErr != nil {
		return nil, fmt.Errorf("tool %q has no usable base URL: %w", op.tool.Name, op.baseErr)
	}
	r := &request{header: http.Header{}, media: op.media}
	path, err := op.expandPath(args)
	if err != nil {
		return nil, err
	}
	u := *op.base
	escaped := strings.TrimSuffix(u.EscapedPath(), "/") + path
	if u.Path, err = url.PathUnescape(escaped); err != nil {
		return nil, op.argError("the path %q is not valid: %v", op.path, err)
	}
	u.RawPath = escaped
	query := u.Query()

	fields := map[string]any{} // JSON body properties
	var form formPairs         // form fields, in order
	var parts []multipartField // multipart fields, in order
	var payload any
	hasPayload := false
	for _, a := range op.args {
		v, ok := args[a.name]
		if !ok || v == nil {
			continue
		}
		v = normalizeValue(v)
		switch a.in {
		case inPath:
			// Done by expandPath.
		case inQuery:
			if err := a.addQuery(query, v); err != nil {
				return nil, op.argError("%v", err)
			}
		case inHeader:
			s, err := a.simple(v)
			if err == nil && strings.ContainsAny(s, "\r\n\x00") {
				err = fmt.Errorf("argument %q: a header value must not contain a line break or NUL", a.name)
			}
			if err != nil {
				return nil, op.argError("%v", err)
			}
			r.header.Set(a.wire, s)
		case inCookie:
			s, err := a.simple(v)
			if err == nil {
				err = checkCookieValue(a.name, s)
			}
			if err != nil {
				return nil, op.argError("%v", err)
			}
			r.cookies = append(r.cookies, a.wire+"="+s)
		case inBody:
			fields[a.wire] = coerceJSON(v, a.types)
		case inForm:
			v = coerceJSON(v, a.types)
			if op.body == bodyMultipart {
				parts = append(parts, multipartField{name: a.wire, value: v, enc: a.enc, binary: a.binary})
			} else if err := addField(&form, a.wire, v, a.enc); err != nil {
				return nil, op.argError("argument %q: %v", a.name, err)
			}
		case inPayload:
			payload, hasPayload = coerceJSON(v, a.types), true
		}
	}
	if err := op.checkPinned(query); err != nil {
		return nil, err
	}
	// Spaces as %20, the form OpenAPI's examples use and every server reads
	// (a literal "+" is already escaped as %2B).
	u.RawQuery = strings.ReplaceAll(query.Encode(), "+", "%20")
	r.url = &u

	switch op.body {
	case bodyJSON:
		switch {
		case hasPayload:
			r.body, err = json.Marshal(payload)
		case len(fields) > 0 || op.bodyRequired:
			r.body, err = json.Marshal(fields)
		}
		r.hasBody = r.body != nil
	case bodyForm:
		if hasPayload {
			err = op.payloadFields(payload, func(name string, v any, enc fieldEncoding) error {
				return addField(&form, name, v, enc)
			})
		}
		if err == nil && (len(form) > 0 || op.bodyRequired) {
			r.body, r.hasBody = []byte(form.encode()), true
		}
	case bodyMultipart:
		if hasPayload {
			err = op.payloadFields(payload, func(name string, v any, enc fieldEncoding) error {
				parts = append(parts, multipartField{name: name, value: v, enc: enc})
				return nil
			})
		}
		if err == nil && (len(parts) > 0 || op.bodyRequired) {
			r.body, r.media, err = multipartBody(parts)
			r.hasBody = true
		}
	case bodyRaw:
		if hasPayload {
			if s, ok := payload.(string); ok {
				r.body = []byte(s)
			} else {
				r.body, err = json.Marshal(payload)
			}
			r.hasBody = true
		}
	}
	if err != nil {
		return nil, op.argError("the request body cannot be encoded: %v", err)
	}
	return r, nil
}

// checkNames rejects unknown argument names and missing required arguments.
func (op *operation) checkNames(args map[string]any) error {
	var unknown, missing []string
	for name := range args {
		if _, ok := op.index[name]; !ok {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	for _, a := range op.args {
		if v, ok := args[a.name]; a.required && (!ok || v == nil) {
			missing = append(missing, strconv.Quote(a.name))
		}
	}
	slices.Sort(unknown)
	var problems []string
	if len(unknown) > 0 {
		problems = append(problems, plural(len(unknown), "unknown argument ", "unknown arguments ")+strings.Join(unknown, ", "))
	}
	if len(missing) > 0 {
		problems = append(problems, plural(len(missing), "missing required argument ", "missing required arguments ")+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return op.argProblems(problems...)
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// argError is the error of a call whose arguments cannot be sent: an
// *mcs.ArgumentsError with the problem (an unknown name, a missing required
// argument, a value that is not allowed where the spec puts it) and, last, the
// tool's argument names, so that the model can correct the call. Nothing was sent.
func (op *operation) argError(format string, args ...any) *mcs.ArgumentsError {
	return op.argProblems(fmt.Sprintf(format, args...))
}

// argProblems is argError with several problems.
func (op *operation) argProblems(problems ...string) *mcs.ArgumentsError {
	return &mcs.ArgumentsError{Tool: op.tool.Name, Problems: append(problems, op.validArguments())}
}

// validArguments lists the tool's argument names, in order, the required ones
// marked: "valid arguments: a (required), b", or "the tool takes no arguments".
func (op *operation) validArguments() string {
	if len(op.args) == 0 {
		return "the tool takes no arguments"
	}
	var sb strings.Builder
	sb.WriteString("valid arguments: ")
	for i, a := range op.args {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(a.name)
		if a.required {
			sb.WriteString(" (required)")
		}
	}
	return sb.String()
}

// expandPath fills the path template, each value percent-encoded as one
// segment, and returns the escaped path.
func (op *operation) expandPath(args map[string]any) (string, error) {
	var sb strings.Builder
	t := op.path
	if !strings.HasPrefix(t, "/") {
		sb.WriteByte('/')
	}
	for {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			sb.WriteString(escapeLiteral(t))
			return sb.String(), nil
		}
		end := strings.IndexByte(t[open:], '}')
		if end < 0 {
			return "", op.argError("the path template %q has an unclosed brace", op.path)
		}
		sb.WriteString(escapeLiteral(t[:open]))
		name := t[open+1 : open+end]
		t = t[open+end+1:]
		a := op.argIn(name, inPath)
		if a == nil {
			return "", op.argError("the path template %q uses {%s}, which the spec does not declare as a path parameter", op.path, name)
		}
		v, ok := args[a.name]
		if !ok || v == nil {
			return "", op.argError("missing required argument %q", a.name)
		}
		seg, err := a.pathValue(normalizeValue(v))
		if err != nil {
			return "", op.argError("%v", err)
		}
		sb.WriteString(seg)
	}
}

// escapeLiteral escapes the literal part of a path template as written in the
// document: slashes, the other characters RFC 3986 allows in a path and valid
// escapes such as %2F are kept; every other byte is percent-encoded.
func escapeLiteral(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			sb.WriteString(s[i : i+3])
			i += 2
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			strings.IndexByte("/-._~!$&'()*+,;=:@", c) >= 0:
			sb.WriteByte(c)
		default:
			fmt.Fprintf(&sb, "%%%02X", c)
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func (op *operation) argIn(wire, in string) *argument {
	for i := range op.args {
		if op.args[i].wire == wire && op.args[i].in == in {
			return &op.args[i]
		}
	}
	return nil
}

// pathValue serialises a path parameter (styles simple, label and matrix) with
// every value escaped so that it stays within one segment.
func (a *argument) pathValue(v any) (string, error) {
	var parts []string
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return "", fmt.Errorf("argument %q: an empty list cannot fill a path segment", a.name)
		}
		var err error
		if parts, err = a.scalars(x); err != nil {
			return "", err
		}
	case map[string]any:
		return a.pathObject(x)
	default:
		s, err := a.scalar(x)
		if err != nil {
			return "", err
		}
		parts = []string{s}
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return "", fmt.Errorf("argument %q: the value %q is not allowed in a path segment; give a non-empty value other than \".\" and \"..\"", a.name, p)
		}
	}
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	switch a.style {
	case "label":
		sep := ","
		if a.explode {
			sep = "."
		}
		return "." + strings.Join(parts, sep), nil
	case "matrix":
		if a.explode {
			return ";" + a.wire + "=" + strings.Join(parts, ";"+a.wire+"="), nil
		}
		return ";" + a.wire + "=" + strings.Join(parts, ","), nil
	default:
		return strings.Join(parts, ","), nil
	}
}

// pathObject serialises an object path parameter: simple "k,v,k2,v2"
// (exploded "k=v,k2=v2"), label ".k,v,k2,v2" (".k=v.k2=v2"), matrix
// ";name=k,v,k2,v2" (";k=v;k2=v2"); keys in order, every key and value escaped.
func (a *argument) pathObject(x map[string]any) (string, error) {
	if !a.allowsObject() {
		return "", fmt.Errorf("argument %q: a path parameter must be a string, number, boolean or list, not an object", a.name)
	}
	if len(x) == 0 {
		return "", fmt.Errorf("argument %q: an empty object cannot fill a path segment", a.name)
	}
	var flat, pairs []string
	for _, k := range sortedKeys(x) {
		s, err := a.scalar(x[k])
		if err != nil {
			return "", err
		}
		if s == "" {
			return "", fmt.Errorf("argument %q: the value of %q is empty; a path segment needs a value", a.name, k)
		}
		k, s = url.PathEscape(k), url.PathEscape(s)
		flat = append(flat, k, s)
		pairs = append(pairs, k+"="+s)
	}
	switch {
	case a.style == "label" && a.explode:
		return "." + strings.Join(pairs, "."), nil
	case a.style == "label":
		return "." + strings.Join(flat, ","), nil
	case a.style == "matrix" && a.explode:
		return ";" + strings.Join(pairs, ";"), nil
	case a.style == "matrix":
		return ";" + a.wire + "=" + strings.Join(flat, ","), nil
	case a.explode:
		return strings.Join(pairs, ","), nil
	default:
		return strings.Join(flat, ","), nil
	}
}

// addQuery adds a query parameter: lists repeated (form, explode) or joined,
// objects as deepObject or form fields, booleans as true/false.
func (a *argument) addQuery(q url.Values, v any) error {
	if a.asJSON {
		s, err := jsonText(v)
		if err != nil {
			return fmt.Errorf("argument %q: %v", a.name, err)
		}
		q.Add(a.wire, s)
		return nil
	}
	if a.style == "deepObject" {
		// Objects nest as name[key][sub]=v and lists as name[]=v, the convention
		// of the APIs that use deepObject (Stripe's expand[]=...).
		if m, ok := v.(map[string]any); ok && !a.allowsObject() {
			return a.scalarOnly(m)
		}
		var pairs formPairs
		if err := deepFields(&pairs, a.wire, v, 0); err != nil {
			return fmt.Errorf("argument %q: %v", a.name, err)
		}
		for _, p := range pairs {
			q.Add(p.name, p.value)
		}
		return nil
	}
	switch x := v.(type) {
	case []any:
		vals, err := a.scalars(x)
		if err != nil {
			return err
		}
		switch {
		case a.style == "spaceDelimited" && !a.explode:
			q.Add(a.wire, strings.Join(vals, " "))
		case a.style == "pipeDelimited" && !a.explode:
			q.Add(a.wire, strings.Join(vals, "|"))
		case !a.explode:
			q.Add(a.wire, strings.Join(vals, ","))
		default:
			for _, s := range vals {
				q.Add(a.wire, s)
			}
		}
	case map[string]any:
		if !a.allowsObject() {
			return a.scalarOnly(x)
		}
		keys := sortedKeys(x)
		var pairs []string
		for _, k := range keys {
			s, err := a.scalar(x[k])
			if err != nil {
				return err
			}
			switch {
			case a.explode:
				q.Add(k, s)
			default:
				pairs = append(pairs, k, s)
			}
		}
		if pairs != nil {
			q.Add(a.wire, strings.Join(pairs, ","))
		}
	default:
		s, err := a.scalar(x)
		if err != nil {
			return err
		}
		q.Add(a.wire, s)
	}
	return nil
}

// simple serialises a header or cookie value: lists and objects joined by
// commas (objects as k,v or, exploded, k=v).
func (a *argument) simple(v any) (string, error) {
	if a.asJSON {
		return jsonText(v)
	}
	switch x := v.(type) {
	case []any:
		vals, err := a.scalars(x)
		if err != nil {
			return "", err
		}
		return strings.Join(vals, ","), nil
	case map[string]any:
		if !a.allowsObject() {
			return "", a.scalarOnly(x)
		}
		var parts []string
		for _, k := range sortedKeys(x) {
			s, err := a.scalar(x[k])
			if err != nil {
				return "", err
			}
			if a.explode {
				parts = append(parts, k+"="+s)
			} else {
				parts = append(parts, k, s)
			}
		}
		return strings.Join(parts, ","), nil
	default:
		return a.scalar(x)
	}
}

// allowsObject reports whether the schema lets the value be an object, whose
// keys may become parameter names; without a schema it does.
func (a *argument) allowsObject() bool {
	return a.types == nil || slices.Contains(a.types, "object")
}

func (a *argument) scalarOnly(v any) error {
	_, err := a.scalar(v)
	return err
}

func formScalar(v any) (string, error) {
	switch v.(type) {
	case map[string]any, []any:
		return jsonText(v)
	}
	return scalarString(v)
}

// payloadFields hands each field of a whole-body argument given as an object
// to add, in name order, with the field's encoding.
func (op *operation) payloadFields(payload any, add func(name string, v any, enc fieldEncoding) error) error {
	m, ok := payload.(map[string]any)
	if !ok {
		return errors.New("a form body must be an object of field names and values")
	}
	for _, k := range sortedKeys(m) {
		if m[k] == nil {
			continue
		}
		if err := add(k, m[k], newFieldEncoding(op.encoding[k])); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	return nil
}

// scalars serialises the items of a list with scalar.
func (a *argument) scalars(items []any) ([]string, error) {
	vals := make([]string, 0, len(items))
	for _, e := range items {
		s, err := a.scalar(e)
		if err != nil {
			return nil, err
		}
		vals = append(vals, s)
	}
	return vals, nil
}

// scalar renders a string, number or boolean; anything else is an error that
// names the argument.
func (a *argument) scalar(v any) (string, error) {
	s, err := scalarString(v)
	if err != nil {
		return "", fmt.Errorf("argument %q: %v", a.name, err)
	}
	return s, nil
}

func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.Number:
		return x.String(), nil
	case nil:
		return "", nil
	default:
		return "", fmt.Errorf("%s is not allowed here; give a string, number or boolean", jsonKind(v))
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("a value of type %T", v)
	}
}

func jsonText(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	data, err := json.Marshal(v)
	return string(data), err
}

// normalizeValue turns Go values a programmatic caller may pass (ints, typed
// slices and maps, also inside lists and objects) into the JSON shapes the
// encoders expect. Values already in those shapes are returned as they are.
func normalizeValue(v any) any {
	if plainJSON(v) {
		return v
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return v
	}
	return out
}

// plainJSON reports whether v holds only the shapes encoding/json decodes to.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, string, bool, float64, json.Number:
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// coerceJSON adapts a value written as text to the type the schema wants, as
// models often write nested values as JSON text and numbers as strings: a
// string holding a JSON object or list, a number or a boolean becomes that
// value when the schema allows that type and not a string. Other values are
// returned unchanged.
func coerceJSON(v any, types []string) any {
	s, ok := v.(string)
	if !ok || len(types) == 0 || slices.Contains(types, "string") {
		return v
	}
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return v
	case t[0] == '{' && slices.Contains(types, "object"), t[0] == '[' && slices.Contains(types, "array"):
		var out any
		if json.Unmarshal([]byte(t), &out) == nil {
			return out
		}
	case slices.Contains(types, "integer") || slices.Contains(types, "number"):
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f
		}
	case slices.Contains(types, "boolean"):
		if b, err := strconv.ParseBool(t); err == nil && (t == "true" || t == "false") {
			return b
		}
	}
	return v
}

// checkCookieValue rejects bytes a cookie value cannot carry.
func checkCookieValue(name, s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\' {
			return fmt.Errorf("argument %q: a cookie value must not contain %q; give printable ASCII without spaces, quotes, commas, semicolons and backslashes", name, string(rune(c)))
		}
	}
	return nil
}

// statusLine renders "<code> <reason>".
func statusLine(resp *http.Response) string {
	return strconv.Itoa(resp.StatusCode) + " " + reason(resp)
}

func reason(resp *http.Response) string {
	if _, r, ok := strings.Cut(resp.Status, " "); ok && r != "" {
		return r
	}
	return http.StatusText(resp.StatusCode)
}
