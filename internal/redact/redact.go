// Package redact copies call arguments and results for telemetry with secrets
// removed and long strings cut, the way the hooks audit records them: a key whose
// normalised form (lower case, "-" and " " turned into "_") contains a sensitive
// fragment (password, token, api_key, ...) has its value replaced by [Redacted],
// at any depth.
package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcs-go/mcs/internal/clone"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Redacted replaces the value of a sensitive key.
const Redacted = "[REDACTED]"

// DefaultMaxValueLen is the length in bytes beyond which strings are cut.
const DefaultMaxValueLen = 256

// DefaultKeys returns the sensitive key fragments: password, passwd, secret,
// token, api_key, apikey, authorization, cookie, credential and private_key. The
// slice is a new copy on every call.
func DefaultKeys() []string {
	return []string{
		"password", "passwd", "secret", "token", "api_key", "apikey",
		"authorization", "cookie", "credential", "private_key",
	}
}

// Redactor copies values with sensitive keys redacted and long strings cut. It is
// immutable and safe for concurrent use.
type Redactor struct {
	keys   []string // normalised fragments
	maxLen int
}

// New returns a Redactor for the key fragments keys (nil: [DefaultKeys]; empty
// fragments are ignored) that cuts strings longer than maxValueLen bytes
// (<= 0: strings are kept whole).
func New(keys []string, maxValueLen int) *Redactor {
	if keys == nil {
		keys = DefaultKeys()
	}
	r := &Redactor{maxLen: maxValueLen}
	for _, k := range keys {
		if k = Normalise(k); k != "" {
			r.keys = append(r.keys, k)
		}
	}
	return r
}

var keyReplacer = strings.NewReplacer("-", "_", " ", "_")

// Normalise returns key in lower case with "-" and " " turned into "_".
func Normalise(key string) string {
	return keyReplacer.Replace(strings.ToLower(strings.TrimSpace(key)))
}

// Sensitive reports whether the value of key is redacted.
func (r *Redactor) Sensitive(key string) bool {
	k := Normalise(key)
	for _, f := range r.keys {
		if strings.Contains(k, f) {
			return true
		}
	}
	return false
}

// Value returns a copy of v with sensitive keys redacted and long strings cut.
// Maps with string keys become map[string]any and slices []any; raw JSON is
// decoded first; other byte slices are replaced by their length ("[12 bytes]").
// Nesting deeper than clone.MaxDepth becomes "[too deep]".
func (r *Redactor) Value(v any) any { return r.value(v, 0) }

func (r *Redactor) value(v any, depth int) any {
	if depth > clone.MaxDepth {
		return "[too deep]"
	}
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return r.Cut(x)
	case map[string]any:
		if x == nil {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r.Sensitive(k) {
				out[k] = Redacted
			} else {
				out[k] = r.value(e, depth+1)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.value(e, depth+1)
		}
		return out
	case json.RawMessage:
		var decoded any
		if json.Unmarshal(x, &decoded) != nil {
			return r.Cut(string(x))
		}
		return r.value(decoded, depth)
	case []byte:
		return fmt.Sprintf("[%d bytes]", len(x))
	case json.Number, bool, float64, int:
		return v
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || rv.IsNil() {
			return v
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			if r.Sensitive(k) {
				out[k] = Redacted
			} else {
				out[k] = r.value(it.Value().Interface(), depth+1)
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return fmt.Sprintf("[%d bytes]", rv.Len())
		}
		out := make([]any, rv.Len())
		for i := range rv.Len() {
			out[i] = r.value(rv.Index(i).Interface(), depth+1)
		}
		return out
	}
	return v
}

// Cut shortens s to at most the Redactor's length on a rune boundary and says how
// many bytes were left out.
func (r *Redactor) Cut(s string) string {
	if r.maxLen <= 0 || len(s) <= r.maxLen {
		return s
	}
	p := textcut.Prefix(s, r.maxLen)
	return fmt.Sprintf("%s…(%d more bytes)", p, len(s)-len(p))
}
