package rest

import (
	"bytes"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// fieldEncoding is how one field of a form or multipart body is serialised:
// the media type's encoding object for the field, with the OpenAPI defaults.
type fieldEncoding struct {
	style   string // "" when the document names none
	explode bool
	// contentType is the encoding's contentType; "" when the document names
	// none.
	contentType string
}

// newFieldEncoding reads the encoding object of a field (nil when the document
// has none): style form and explode true by default, explode defaulting to
// true only for style form.
func newFieldEncoding(e *openapi3.Encoding) fieldEncoding {
	fe := fieldEncoding{explode: true}
	if e == nil {
		return fe
	}
	fe.style = e.Style
	fe.contentType = strings.TrimSpace(e.ContentType)
	if fe.style != "" && fe.style != "form" {
		fe.explode = false
	}
	if e.Explode != nil {
		fe.explode = *e.Explode
	}
	return fe
}

// jsonContent reports whether a media type is JSON.
func jsonContent(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// pair is one name=value of a form body, in order.
type pair struct{ name, value string }

// formPairs collects the fields of a form body in order.
type formPairs []pair

func (p *formPairs) add(name, value string) { *p = append(*p, pair{name, value}) }

// encode renders the pairs as application/x-www-form-urlencoded, in order
// (brackets escaped, spaces as "+").
func (p formPairs) encode() string {
	var sb strings.Builder
	for i, kv := range p {
		if i > 0 {
			sb.WriteByte('&')
		}
		sb.WriteString(url.QueryEscape(kv.name))
		sb.WriteByte('=')
		sb.WriteString(url.QueryEscape(kv.value))
	}
	return sb.String()
}

// addField serialises the form field name with value v as enc says:
//
//   - a JSON contentType sends the value as JSON text;
//   - deepObject nests objects as name[key][sub]=v, lists of scalars as
//     name[]=v and lists of objects as name[0][key]=v (the Rack and Stripe
//     convention); an empty object or list is sent as name= (which such APIs
//     read as "clear");
//   - form sends scalars as name=v, lists repeated (explode) or joined with
//     commas, objects as one field per key (explode) or name=k,v,k2,v2;
//     spaceDelimited and pipeDelimited join lists with " " and "|";
//   - an object with no style given in the document is sent as deepObject:
//     the form default would drop the field's name, which no API reads.
func addField(out *formPairs, name string, v any, enc fieldEncoding) error {
	if jsonContent(enc.contentType) {
		s, err := jsonText(v)
		if err != nil {
			return err
		}
		out.add(name, s)
		return nil
	}
	style := enc.style
	if _, isObject := v.(map[string]any); isObject && style == "" {
		style = "deepObject"
	}
	switch style {
	case "deepObject":
		return deepFields(out, name, v, 0)
	}
	switch x := v.(type) {
	case []any:
		vals := make([]string, 0, len(x))
		for _, e := range x {
			s, err := formScalar(e)
			if err != nil {
				return err
			}
			vals = append(vals, s)
		}
		switch {
		case enc.explode:
			for _, s := range vals {
				out.add(name, s)
			}
		case style == "spaceDelimited":
			out.add(name, strings.Join(vals, " "))
		case style == "pipeDelimited":
			out.add(name, strings.Join(vals, "|"))
		default:
			out.add(name, strings.Join(vals, ","))
		}
	case map[string]any:
		var flat []string
		for _, k := range sortedKeys(x) {
			s, err := formScalar(x[k])
			if err != nil {
				return err
			}
			if enc.explode {
				out.add(k, s)
			} else {
				flat = append(flat, k, s)
			}
		}
		if !enc.explode {
			out.add(name, strings.Join(flat, ","))
		}
	default:
		s, err := scalarString(x)
		if err != nil {
			return err
		}
		out.add(name, s)
	}
	return nil
}

// maxDeepNesting bounds the nesting deepFields follows.
const maxDeepNesting = 32

// deepFields adds v under prefix in deepObject notation.
func deepFields(out *formPairs, prefix string, v any, depth int) error {
	if depth > maxDeepNesting {
		return fmt.Errorf("the value of %q is nested more than %d levels deep", prefix, maxDeepNesting)
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out.add(prefix, "")
			return nil
		}
		for _, k := range sortedKeys(x) {
			if err := deepFields(out, prefix+"["+k+"]", x[k], depth+1); err != nil {
				return err
			}
		}
	case []any:
		if len(x) == 0 {
			out.add(prefix, "")
			return nil
		}
		scalars := true
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				scalars = false
			}
		}
		for i, e := range x {
			key := prefix + "[]"
			if !scalars {
				key = prefix + "[" + strconv.Itoa(i) + "]"
			}
			if err := deepFields(out, key, e, depth+1); err != nil {
				return err
			}
		}
	case nil:
		out.add(prefix, "")
	default:
		s, err := scalarString(x)
		if err != nil {
			return err
		}
		out.add(prefix, s)
	}
	return nil
}

// multipartField is one field of a multipart body, in order.
type multipartField struct {
	name   string
	value  any
	enc    fieldEncoding
	binary bool
}

// multipartBody encodes fields as multipart/form-data, following OpenAPI:
// a field with a style in the encoding object is expanded like a form field
// into text parts; a JSON contentType, and an object without one, is one part
// of JSON text with that Content-Type (application/json by default); a list
// is one part per item; a scalar is a text part (with the encoding's
// contentType when given); a binary field (format binary) is a file part named
// after the field.
func multipartBody(fields []multipartField) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part := func(name, contentType, filename, value string) error {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + escapeQuotes(name) + `"`
		if filename != "" {
			disp += `; filename="` + escapeQuotes(filename) + `"`
		}
		h.Set("Content-Disposition", disp)
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			return err
		}
		_, err = pw.Write([]byte(value))
		return err
	}
	//lint:ignore S1021 one calls itself, so it is declared before it is assigned
	var one func(f multipartField, v any) error
	one = func(f multipartField, v any) error {
		switch {
		case f.binary:
			s, err := formScalar(v)
			if err != nil {
				return err
			}
			return part(f.name, "application/octet-stream", f.name, s)
		case jsonContent(f.enc.contentType):
			s, err := jsonText(v)
			if err != nil {
				return err
			}
			return part(f.name, f.enc.contentType, "", s)
		}
		switch x := v.(type) {
		case map[string]any:
			s, err := jsonText(x)
			if err != nil {
				return err
			}
			return part(f.name, "application/json", "", s)
		case []any:
			return fmt.Errorf("a list inside a list cannot be a multipart field")
		default:
			s, err := scalarString(x)
			if err != nil {
				return err
			}
			return part(f.name, f.enc.contentType, "", s)
		}
	}
	for _, f := range fields {
		if f.enc.style != "" && !f.binary {
			var pairs formPairs
			if err := addField(&pairs, f.name, f.value, f.enc); err != nil {
				return nil, "", fmt.Errorf("field %q: %w", f.name, err)
			}
			for _, p := range pairs {
				if err := part(p.name, f.enc.contentType, "", p.value); err != nil {
					return nil, "", err
				}
			}
			continue
		}
		items := []any{f.value}
		if list, ok := f.value.([]any); ok {
			items = list
		}
		for _, it := range items {
			if err := one(f, it); err != nil {
				return nil, "", fmt.Errorf("field %q: %w", f.name, err)
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }
