package mcs

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The fast path of decoding a text call: a strict JSON parser for the one object a
// call is, which reads the tool-name and arguments fields without building the
// top-level map, keeps keys and plain strings as substrings of the text (no copy),
// and materialises only the arguments. It accepts exactly what encoding/json
// accepts and decodes it to the same values; whatever it is not sure about (an
// escape, invalid UTF-8, a number encoding/json cannot hold, deep nesting) it leaves
// to encoding/json, so the result never differs (FuzzFastJSON checks it).

// fastMaxDepth is the nesting the fast path handles; deeper objects take the slow
// path, which has its own limit.
const fastMaxDepth = 64

// fastPair is one top-level field. A string value stays unboxed in str.
type fastPair struct {
	key   string
	str   string
	isStr bool
	val   any
	built bool // val was built (an alias field); false: only validated
}

type fastParser struct {
	s     string
	i     int
	depth int
}

// decodeCallFast decodes src, one complete JSON object, into a call as
// callFromObject would from encoding/json's map. ok is false when the fast path
// cannot decide: the caller then takes the slow path.
func (s *JSONPromptStrategy) decodeCallFast(src string) (call ToolCall, bare, ok bool) {
	if !fastPaths {
		return ToolCall{}, false, false
	}
	p := fastParser{s: src}
	p.ws()
	call, bare, ok = s.fastCall(&p, false)
	if !ok {
		return ToolCall{}, false, false
	}
	p.ws()
	if p.i != len(p.s) {
		return ToolCall{}, false, false
	}
	return call, bare, true
}

// decodeCallPrefix decodes the strict JSON object that src starts with, as the
// prose scanner would find and decode it, and returns where the object ends. The
// scanner tries it once the object has begun as strict JSON does ({"key":), so the
// first key holds no brace (the scanner refuses those before). ok is false when the
// object is not strict JSON the fast path can decide, or when it repeats a
// tool-name field (the scanner reports the conflict): the scanner then reads it
// byte by byte.
func (s *JSONPromptStrategy) decodeCallPrefix(src string) (call ToolCall, bare bool, end int, ok bool) {
	if !fastPaths {
		return ToolCall{}, false, 0, false
	}
	p := fastParser{s: src}
	if call, bare, ok = s.fastCall(&p, true); !ok {
		return ToolCall{}, false, 0, false
	}
	return call, bare, p.i, true
}

// fastCall reads the object at p's position. asScanner adds the refusal of
// decodeCallPrefix.
func (s *JSONPromptStrategy) fastCall(p *fastParser, asScanner bool) (call ToolCall, bare, ok bool) {
	var buf [8]fastPair
	pairs := buf[:0]
	if !p.eat('{') {
		return ToolCall{}, false, false
	}
	p.ws()
	if !p.eat('}') {
		for {
			p.ws()
			key, ok := p.str()
			if !ok {
				return ToolCall{}, false, false
			}
			if asScanner && s.aliasRank(key) >= 0 && slices.ContainsFunc(pairs, func(pr fastPair) bool { return pr.key == key }) {
				return ToolCall{}, false, false
			}
			p.ws()
			if !p.eat(':') {
				return ToolCall{}, false, false
			}
			p.ws()
			pr := fastPair{key: key}
			if p.i < len(p.s) && p.s[p.i] == '"' {
				if pr.str, ok = p.str(); !ok {
					return ToolCall{}, false, false
				}
				pr.isStr = true
			} else {
				pr.built = s.aliasRank(key) >= 0 || argsRank(s, key) >= 0
				if pr.val, ok = p.value(pr.built); !ok {
					return ToolCall{}, false, false
				}
			}
			pairs = append(pairs, pr)
			p.ws()
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				break
			}
			return ToolCall{}, false, false
		}
	}
	call, bare = s.callFromPairs(pairs)
	return call, bare, true
}

func argsRank(s *JSONPromptStrategy, key string) int {
	for i, a := range s.ArgumentsFieldAliases {
		if a == key {
			return i
		}
	}
	return -1
}

// lastPair returns the last field named key (encoding/json keeps the last of
// duplicate keys).
func lastPair(pairs []fastPair, key string) (*fastPair, bool) {
	for i := len(pairs) - 1; i >= 0; i-- {
		if pairs[i].key == key {
			return &pairs[i], true
		}
	}
	return nil, false
}

// callFromPairs is callFromObject over the fields of the fast path.
func (s *JSONPromptStrategy) callFromPairs(pairs []fastPair) (call ToolCall, bare bool) {
	rank := -1
	for i, alias := range s.ToolFieldAliases {
		pr, present := lastPair(pairs, alias)
		if !present {
			continue
		}
		if pr.isStr {
			call.Name, rank = pr.str, i
		}
		break
	}
	if call.Name == "" {
		return call, false
	}
	if rank > 0 && !slices.ContainsFunc(s.ArgumentsFieldAliases, func(a string) bool { _, ok := lastPair(pairs, a); return ok }) {
		key := s.ToolFieldAliases[rank]
		if slices.ContainsFunc(pairs, func(pr fastPair) bool { return pr.key != key }) {
			return ToolCall{}, false // a record
		}
		bare = true
	}
	for _, alias := range s.ArgumentsFieldAliases {
		pr, present := lastPair(pairs, alias)
		if !present {
			continue
		}
		switch a := pr.val.(type) {
		case nil:
			if pr.isStr {
				var inner map[string]any
				if unmarshalJSON([]byte(pr.str), &inner) == nil && inner != nil {
					call.Arguments = inner
				} else {
					call.Err = &ArgumentsError{Tool: call.Name, Field: alias, Got: "string"}
				}
			}
		case map[string]any:
			call.Arguments = a
		default:
			call.Err = &ArgumentsError{Tool: call.Name, Field: alias, Got: jsonTypeName(a)}
		}
		break
	}
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	return call, bare
}

func (p *fastParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string literal without escapes and with valid UTF-8 as a substring
// of the text; anything else is left to the slow path.
func (p *fastParser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	ascii := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			out := p.s[start:p.i]
			p.i++
			if !ascii && !utf8.ValidString(out) {
				return "", false
			}
			return out, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		p.i++
	}
	return "", false
}

// value reads any JSON value; it builds it only when build is set.
func (p *fastParser) value(build bool) (any, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(build)
	case c == '[':
		return p.array(build)
	case c == '"':
		s, ok := p.str()
		if !ok || !build {
			return nil, ok
		}
		return s, true
	case c == 't':
		return true, p.word("true")
	case c == 'f':
		return false, p.word("false")
	case c == 'n':
		return nil, p.word("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(build)
	}
	return nil, false
}

func (p *fastParser) word(w string) bool {
	if len(p.s)-p.i >= len(w) && p.s[p.i:p.i+len(w)] == w {
		p.i += len(w)
		return true
	}
	return false
}

// number reads a number in JSON's grammar and converts it as encoding/json does.
func (p *fastParser) number(build bool) (any, bool) {
	start := p.i
	p.eat('-')
	switch {
	case p.eat('0'):
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.eat('.') {
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if !p.eat('+') {
			p.eat('-')
		}
		if !p.digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		return nil, false // out of range: encoding/json reports it
	}
	if !build {
		return nil, true
	}
	if lit := p.s[start:p.i]; inexactInt(lit, f) {
		return json.Number(lit), true // see unmarshalJSON
	}
	return f, true
}

func (p *fastParser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

func (p *fastParser) object(build bool) (any, bool) {
	if p.depth++; p.depth > fastMaxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	var m map[string]any
	if build {
		m = map[string]any{}
	}
	p.ws()
	if p.eat('}') {
		return m, true
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if !p.eat(':') {
			return nil, false
		}
		p.ws()
		v, ok := p.value(build)
		if !ok {
			return nil, false
		}
		if build {
			m[key] = v
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return m, true
		}
		return nil, false
	}
}

func (p *fastParser) array(build bool) (any, bool) {
	if p.depth++; p.depth > fastMaxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // '['
	var list []any
	if build {
		list = []any{}
	}
	p.ws()
	if p.eat(']') {
		return list, true
	}
	for {
		p.ws()
		v, ok := p.value(build)
		if !ok {
			return nil, false
		}
		if build {
			list = append(list, v)
		}
		p.ws()
		if p.eat(',') {
			continue
		}
		if p.eat(']') {
			return list, true
		}
		return nil, false
	}
}

// decodeObjectText decodes src, JSON text that should hold an object, as
// json.Unmarshal into a map would; ok is false when the fast path cannot decide.
func decodeObjectText(src string) (map[string]any, bool) {
	if !fastPaths {
		return nil, false
	}
	p := fastParser{s: src}
	p.ws()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, false
	}
	v, ok := p.object(true)
	if !ok {
		return nil, false
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, false
	}
	return v.(map[string]any), true
}
