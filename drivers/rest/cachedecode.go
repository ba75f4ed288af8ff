package rest

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
)

// The decoder of cache files.
//
// A warm start is dominated by decoding the listing, most of it parameter
// schemas, into generic values; encoding/json's reflection-driven decoding
// took three quarters of it. parseCacheFile validates the file with the fast
// path's scanner (RFC 8259 syntax, no duplicate keys, nesting within the
// standard library's limit) and builds the values directly: objects as
// map[string]any, arrays as []any, numbers as float64, as encoding/json
// decodes into any. A file that is not valid UTF-8, has a member of the wrong
// type, an unknown member or a number out of range is refused.

var errBadCache = errors.New("the cache file is not a valid entry")

// parseCacheFile decodes a cache file.
func parseCacheFile(data []byte) (*cacheFile, error) {
	if !utf8.Valid(data) {
		return nil, errBadCache
	}
	g := genericDecoder{s: docScanner{data: data}, text: string(data)}
	start := g.s.ws(0)
	if start >= len(data) || data[start] != '{' {
		return nil, errBadCache
	}
	v, end, err := g.value(start, 0)
	if err != nil || g.s.ws(end) != len(data) {
		return nil, errBadCache
	}
	return cacheFileFrom(v)
}

// genericDecoder validates and decodes JSON into generic values in one pass.
type genericDecoder struct {
	s    docScanner
	text string // the data as a string, for substrings
}

// value decodes the value at or after i (after white space) and returns the
// index after it.
func (g *genericDecoder) value(i, depth int) (any, int, error) {
	d := g.s.data
	i = g.s.ws(i)
	if i >= len(d) || depth >= maxScanDepth {
		return nil, 0, errBadCache
	}
	switch c := d[i]; {
	case c == '{':
		m := map[string]any{}
		i = g.s.ws(i + 1)
		if i < len(d) && d[i] == '}' {
			return m, i + 1, nil
		}
		for {
			if i >= len(d) || d[i] != '"' {
				return nil, 0, errBadCache
			}
			key, end, err := g.str(i)
			if err != nil {
				return nil, 0, err
			}
			if _, dup := m[key]; dup {
				return nil, 0, errBadCache
			}
			i = g.s.ws(end)
			if i >= len(d) || d[i] != ':' {
				return nil, 0, errBadCache
			}
			v, end, err := g.value(i+1, depth+1)
			if err != nil {
				return nil, 0, err
			}
			m[key] = v
			i = g.s.ws(end)
			if i >= len(d) {
				return nil, 0, errBadCache
			}
			switch d[i] {
			case '}':
				return m, i + 1, nil
			case ',':
				i = g.s.ws(i + 1)
			default:
				return nil, 0, errBadCache
			}
		}
	case c == '[':
		a := []any{}
		i = g.s.ws(i + 1)
		if i < len(d) && d[i] == ']' {
			return a, i + 1, nil
		}
		for {
			v, end, err := g.value(i, depth+1)
			if err != nil {
				return nil, 0, err
			}
			a = append(a, v)
			i = g.s.ws(end)
			if i >= len(d) {
				return nil, 0, errBadCache
			}
			switch d[i] {
			case ']':
				return a, i + 1, nil
			case ',':
				i++
			default:
				return nil, 0, errBadCache
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
	end := g.s.number(i)
	if end == fail {
		return nil, 0, errBadCache
	}
	f, err := strconv.ParseFloat(g.text[i:end], 64)
	if err != nil {
		return nil, 0, errBadCache
	}
	return f, end, nil
}

func (g *genericDecoder) lit(i int, lit string) int {
	if end := g.s.literal(i, lit); end != fail {
		return end
	}
	return 0
}

func (g *genericDecoder) litErr(i int, lit string) error {
	if g.s.literal(i, lit) == fail {
		return errBadCache
	}
	return nil
}

// str validates and decodes the string at i. A string without escapes is a
// substring of the file's text, so it costs no allocation of its own.
func (g *genericDecoder) str(i int) (string, int, error) {
	end, escaped := g.s.str(i)
	if end == fail {
		return "", 0, errBadCache
	}
	if !escaped {
		return g.text[i+1 : end-1], end, nil
	}
	return genericString(g.s.data, i)
}

// genericString decodes the validated string at i; a lone surrogate escape is
// refused.
func genericString(d []byte, i int) (string, int, error) {
	end := skipString(d, i)
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
					return "", 0, errBadCache
				}
				r = utf16.DecodeRune(r, hex4(raw[j+3:j+7]))
				if r == utf8.RuneError {
					return "", 0, errBadCache
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

// cacheFileFrom maps the decoded file onto cacheFile, refusing unknown
// members and members of the wrong type.
func cacheFileFrom(v any) (*cacheFile, error) {
	top, ok := v.(map[string]any)
	if !ok {
		return nil, errBadCache
	}
	cf := &cacheFile{}
	for k, x := range top {
		var ok bool
		switch k {
		case "Format":
			var f float64
			f, ok = x.(float64)
			cf.Format = int(f)
			ok = ok && float64(cf.Format) == f
		case "Build":
			cf.Build, ok = x.(string)
		case "SpecSHA256":
			cf.SpecSHA256, ok = x.(string)
		case "Tags":
			cf.Tags, ok = stringList(x)
		case "Paths":
			cf.Paths, ok = stringList(x)
		case "Tools":
			cf.Tools, ok = toolList(x)
		case "Secured":
			cf.Secured, ok = x.(bool)
		}
		if !ok {
			return nil, errBadCache
		}
	}
	return cf, nil
}

func stringList(x any) ([]string, bool) {
	if x == nil {
		return nil, true
	}
	a, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], ok = e.(string); !ok {
			return nil, false
		}
	}
	return out, true
}

func toolList(x any) ([]mcs.Tool, bool) {
	if x == nil {
		return nil, true
	}
	a, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]mcs.Tool, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		t := &out[i]
		for k, x := range m {
			switch k {
			case "Name":
				t.Name, ok = x.(string)
			case "Title":
				t.Title, ok = x.(string)
			case "Description":
				t.Description, ok = x.(string)
			case "Parameters":
				t.Parameters, ok = parameterList(x)
			case "Annotations":
				t.Annotations, ok = annotations(x)
			default:
				ok = false
			}
			if !ok {
				return nil, false
			}
		}
	}
	return out, true
}

func parameterList(x any) ([]mcs.Parameter, bool) {
	if x == nil {
		return nil, true
	}
	a, ok := x.([]any)
	if !ok {
		return nil, false
	}
	out := make([]mcs.Parameter, len(a))
	for i, e := range a {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		p := &out[i]
		for k, x := range m {
			switch k {
			case "Name":
				p.Name, ok = x.(string)
			case "Description":
				p.Description, ok = x.(string)
			case "Required":
				p.Required, ok = x.(bool)
			case "Schema":
				if x != nil {
					p.Schema, ok = x.(map[string]any)
				}
			default:
				ok = false
			}
			if !ok {
				return nil, false
			}
		}
	}
	return out, true
}

func annotations(x any) (*mcs.ToolAnnotations, bool) {
	if x == nil {
		return nil, true
	}
	m, ok := x.(map[string]any)
	if !ok {
		return nil, false
	}
	a := &mcs.ToolAnnotations{}
	for k, x := range m {
		switch k {
		case "ReadOnly":
			a.ReadOnly, ok = x.(bool)
		case "Destructive":
			a.Destructive, ok = x.(bool)
		case "Idempotent":
			a.Idempotent, ok = x.(bool)
		case "OpenWorld":
			a.OpenWorld, ok = x.(bool)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
	return a, true
}
