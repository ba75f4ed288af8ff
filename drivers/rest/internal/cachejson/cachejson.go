// Package cachejson decodes the REST driver's tool-table cache files: Decode
// validates a file and builds its generic values in one pass (objects as
// map[string]any, arrays as []any, numbers as float64, as encoding/json decodes
// into any), without encoding/json's reflection, which took three quarters of a
// warm start. With the build tag mcs_nofast, Decode is encoding/json's.
package cachejson

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcs-go/mcs/drivers/rest/internal/jsonscan"
	"github.com/mcs-go/mcs/internal/fastpath"
)

// ErrInvalid is the error of a file that is not one JSON object: a syntax error,
// invalid UTF-8, a duplicate key, nesting beyond the standard library's limit, a
// number out of range or a lone surrogate escape.
var ErrInvalid = errors.New("the cache file is not valid JSON")

// Decode decodes data, which must hold one JSON object. Without the fast path
// (mcs_nofast) it is json.Unmarshal after a check of the UTF-8, which also
// accepts duplicate keys (the last one wins) and lone surrogates.
func Decode(data []byte) (map[string]any, error) {
	if !utf8.Valid(data) {
		return nil, ErrInvalid
	}
	if !fastpath.On {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil || m == nil {
			return nil, ErrInvalid
		}
		return m, nil
	}
	g := genericDecoder{data: data, text: string(data)}
	start := jsonscan.WS(data, 0)
	if start >= len(data) || data[start] != '{' {
		return nil, ErrInvalid
	}
	v, end, err := g.value(start, 0)
	if err != nil || jsonscan.WS(data, end) != len(data) {
		return nil, ErrInvalid
	}
	return v.(map[string]any), nil
}

// genericDecoder validates and decodes JSON into generic values in one pass.
type genericDecoder struct {
	data []byte
	text string // the data as a string, for substrings
}

// value decodes the value at or after i (after white space) and returns the
// index after it.
func (g *genericDecoder) value(i, depth int) (any, int, error) {
	d := g.data
	i = jsonscan.WS(g.data, i)
	if i >= len(d) || depth >= jsonscan.MaxDepth {
		return nil, 0, ErrInvalid
	}
	switch c := d[i]; {
	case c == '{':
		m := map[string]any{}
		i = jsonscan.WS(g.data, i+1)
		if i < len(d) && d[i] == '}' {
			return m, i + 1, nil
		}
		for {
			if i >= len(d) || d[i] != '"' {
				return nil, 0, ErrInvalid
			}
			key, end, err := g.str(i)
			if err != nil {
				return nil, 0, err
			}
			if _, dup := m[key]; dup {
				return nil, 0, ErrInvalid
			}
			i = jsonscan.WS(g.data, end)
			if i >= len(d) || d[i] != ':' {
				return nil, 0, ErrInvalid
			}
			v, end, err := g.value(i+1, depth+1)
			if err != nil {
				return nil, 0, err
			}
			m[key] = v
			i = jsonscan.WS(g.data, end)
			if i >= len(d) {
				return nil, 0, ErrInvalid
			}
			switch d[i] {
			case '}':
				return m, i + 1, nil
			case ',':
				i = jsonscan.WS(g.data, i+1)
			default:
				return nil, 0, ErrInvalid
			}
		}
	case c == '[':
		a := []any{}
		i = jsonscan.WS(g.data, i+1)
		if i < len(d) && d[i] == ']' {
			return a, i + 1, nil
		}
		for {
			v, end, err := g.value(i, depth+1)
			if err != nil {
				return nil, 0, err
			}
			a = append(a, v)
			i = jsonscan.WS(g.data, end)
			if i >= len(d) {
				return nil, 0, ErrInvalid
			}
			switch d[i] {
			case ']':
				return a, i + 1, nil
			case ',':
				i++
			default:
				return nil, 0, ErrInvalid
			}
		}
	case c == '"':
		return g.str(i)
	case c == 't':
		return true, g.lit(i, "true"), g.litErr(i, "true")
	case c == 'f':
		return false, g.lit(i, "false"), g.litErr(i, "false")
	case c == 'n':
		return nil, g.lit(i, "null"), g.litErr(i, "null")
	}
	end, _ := jsonscan.Number(d, i)
	if end == jsonscan.Fail {
		return nil, 0, ErrInvalid
	}
	f, err := strconv.ParseFloat(g.text[i:end], 64)
	if err != nil {
		return nil, 0, ErrInvalid
	}
	return f, end, nil
}

func (g *genericDecoder) lit(i int, lit string) int {
	if end := jsonscan.Literal(g.data, i, lit); end != jsonscan.Fail {
		return end
	}
	return 0
}

func (g *genericDecoder) litErr(i int, lit string) error {
	if jsonscan.Literal(g.data, i, lit) == jsonscan.Fail {
		return ErrInvalid
	}
	return nil
}

// str validates and decodes the string at i. A string without escapes is a
// substring of the file's text, so it costs no allocation of its own.
func (g *genericDecoder) str(i int) (string, int, error) {
	end, escaped := jsonscan.Str(g.data, i)
	if end == jsonscan.Fail {
		return "", 0, ErrInvalid
	}
	if !escaped {
		return g.text[i+1 : end-1], end, nil
	}
	return genericString(g.data, i)
}

// genericString decodes the validated string at i; a lone surrogate escape is
// refused.
func genericString(d []byte, i int) (string, int, error) {
	end, _ := jsonscan.Str(d, i)
	raw := d[i+1 : end-1]
	j := 0
	for j < len(raw) && raw[j] != '\\' {
		j++
	}
	if j == len(raw) {
		return string(raw), end, nil
	}
	out := make([]byte, 0, len(raw))
	out = append(out, raw[:j]...)
	for ; j < len(raw); j++ {
		c := raw[j]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		j++
		switch raw[j] {
		case '"', '\\', '/':
			out = append(out, raw[j])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[j+1 : j+5])
			j += 4
			if utf16.IsSurrogate(r) {
				if j+6 >= len(raw) || raw[j+1] != '\\' || raw[j+2] != 'u' {
					return "", 0, ErrInvalid
				}
				r = utf16.DecodeRune(r, hex4(raw[j+3:j+7]))
				if r == utf8.RuneError {
					return "", 0, ErrInvalid
				}
				j += 6
			}
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out), end, nil
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}
