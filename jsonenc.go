package mcs

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSON appends the JSON encoding of v to b exactly as json.Marshal writes it,
// for the values decoded JSON holds (map[string]any, []any, string, float64,
// bool, nil, json.Number, int). ok is false for any other value, or one
// json.Marshal refuses (NaN, Inf): the caller then uses json.Marshal. It exists
// because history shaping re-encodes every call's arguments, and reflection was
// the largest cost of a small call.
func appendJSON(b []byte, v any, depth int) (_ []byte, ok bool) {
	if !fastPaths || depth > 64 {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendJSONString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return appendJSONFloat(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case json.Number:
		if x == "" {
			return append(b, '0'), true
		}
		if !json.Valid([]byte(x)) || x[0] == '"' || x[0] == '{' || x[0] == '[' || x[0] == 't' || x[0] == 'f' || x[0] == 'n' {
			return b, false
		}
		return append(b, x...), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		if len(x) == 1 { // the common case: no keys to sort
			for k, v := range x {
				b = appendJSONString(append(b, '{'), k)
				if b, ok = appendJSON(append(b, ':'), v, depth+1); !ok {
					return b, false
				}
			}
			return append(b, '}'), true
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			if b, ok = appendJSON(b, x[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendJSON(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendJSONFloat writes f as encoding/json does (ES6 number formatting).
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s quoted as encoding/json does, HTML characters escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
