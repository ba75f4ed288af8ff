package mcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrMalformedCall is wrapped by the error of a call that named a tool but could not
// be decoded, even after repair, or never closed.
var ErrMalformedCall = errors.New("malformed tool call")

// ArgumentsError reports that a call's arguments were not a JSON object.
type ArgumentsError struct {
	Tool  string
	Field string
	Got   string // the JSON type found, such as "string" or "array"
}

func (e *ArgumentsError) Error() string {
	return fmt.Sprintf("the %q field of the call to %q must be a JSON object of named arguments, got a %s", e.Field, e.Tool, e.Got)
}

// maxRestarts bounds how often Finish rescans after an object that never closed, so
// hostile input cannot make decoding quadratic.
const maxRestarts = 8

// jsonDecoder is the incremental scanner of the JSON codec. It walks the text once,
// byte by byte, tracking code fences in prose and string/nesting state inside
// objects. Complete top-level objects are decoded (with repair when needed) and
// reported when they name a tool.
type jsonDecoder struct {
	codec *JSONPromptStrategy
	pos   int // next byte to scan

	// code fences in prose
	btRun      int // length of the current run of backticks
	btStart    int
	inFence    bool
	fenceStart int
	fenceBody  bool // a non-space byte arrived inside the open fence
	fenceLine  bool // the opening fence's line (language tag) has ended
	waiting    []ToolCall

	// the open top-level object
	depth      int
	objStart   int
	inStr      bool
	comment    byte // '/' in a // comment, '*' in a /* */ comment, 0 outside
	quote      byte
	esc        bool
	strStart   int
	keyState   int // 0 expect first key, 1 in unquoted key, 2 expect ':', 3 committed
	expectKey  bool
	lastKey    string
	name       string
	nameRank   int
	restarts   int
	malformed  []ToolCall
	lastClosed int // end offset of the last object closed in the open fence
}

func (d *jsonDecoder) Scan(text string) []ToolCall {
	return d.scan(text, nil)
}

func (d *jsonDecoder) Finish(text string) []ToolCall {
	out := d.scan(text, nil)
	n := len(text)
	if d.btRun > 0 {
		out = d.endBacktickRun(text, n, out)
	}
	for d.depth > 0 && d.restarts < maxRestarts {
		// An object that never closed. Report it when it named a tool, then look for
		// calls after its opening brace.
		if d.name != "" {
			d.malformed = append(d.malformed, ToolCall{Name: d.name, Start: d.objStart, End: n,
				Err: fmt.Errorf("%w: the JSON object of the call to %q never closed", ErrMalformedCall, d.name)})
		}
		d.restarts++
		d.pos = d.objStart + 1
		d.depth = 0
		d.inStr = false
		out = d.scan(text, out)
		if d.btRun > 0 {
			out = d.endBacktickRun(text, n, out)
		}
	}
	if d.inFence && len(d.waiting) > 0 {
		for _, c := range d.waiting {
			c.Start, c.End = d.fenceStart, n
			out = append(out, c)
		}
		d.waiting = nil
	}
	return out
}

func (d *jsonDecoder) Pending() (int, string, bool) {
	switch {
	case len(d.waiting) > 0:
		return d.fenceStart, d.waiting[0].Name, true
	case d.depth > 0:
		if d.inFence {
			return d.fenceStart, d.name, true
		}
		return d.objStart, d.name, true
	case d.inFence && !d.fenceBody:
		// an open fence with nothing in it yet may be the start of a call
		return d.fenceStart, "", true
	case d.btRun > 0:
		return d.btStart, "", true
	}
	return 0, "", false
}

func (d *jsonDecoder) Malformed() []ToolCall { return d.malformed }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// isKeyByte reports bytes that may make up an unquoted first key: identifier bytes
// and the bytes of non-ASCII characters (typographic quotes around a key).
func isKeyByte(c byte) bool { return isIdent(c) || c >= 0x80 }

func isIdent(c byte) bool { return isIdentStart(c) || c == '-' || (c >= '0' && c <= '9') }

func (d *jsonDecoder) scan(text string, out []ToolCall) []ToolCall {
	n := len(text)
	for i := d.pos; i < n; i++ {
		c := text[i]
		if d.depth == 0 {
			if c == '`' {
				if d.btRun == 0 {
					d.btStart = i
				}
				d.btRun++
				continue
			}
			if d.btRun > 0 {
				out = d.endBacktickRun(text, i, out)
			}
			if d.inFence {
				if !d.fenceLine {
					if c == '\n' {
						d.fenceLine = true
					}
					// the language tag: anything but a brace keeps us on the tag line
					if c != '{' {
						continue
					}
				}
				if !isSpace(c) && c != '{' {
					d.fenceBody = true
				}
			}
			if c == '{' {
				if d.inFence {
					d.fenceBody = true
				}
				d.depth = 1
				d.objStart = i
				d.keyState = 0
				d.expectKey = true
				d.lastKey = ""
				d.name = ""
				d.nameRank = -1
				d.inStr = false
				d.esc = false
			}
			continue
		}
		if d.comment != 0 {
			if d.comment == '/' && c == '\n' {
				d.comment = 0
			} else if d.comment == '*' && c == '/' && text[i-1] == '*' && i-1 > d.strStart {
				d.comment = 0
			}
			continue
		}
		if c == '/' && !d.inStr {
			if i+1 >= n {
				d.pos = i // decide when the next byte arrives
				return out
			}
			if text[i+1] == '/' || text[i+1] == '*' {
				d.comment = text[i+1]
				d.strStart = i + 1 // so that "/*/" does not close the comment
				i++
				if d.depth == 1 && d.keyState == 0 {
					continue
				}
				continue
			}
		}
		if d.inStr {
			switch {
			case d.esc:
				d.esc = false
			case c == '\\':
				d.esc = true
			case c == d.quote:
				d.inStr = false
				if d.depth == 1 {
					d.stringEnd(text, i)
				}
			}
			continue
		}
		if d.depth == 1 && d.keyState < 3 {
			if ok := d.firstKey(c); !ok {
				// Not an object after all (prose such as "{ this }"): resume after the brace.
				d.depth = 0
				i = d.objStart
				continue
			}
			if d.keyState < 3 && c != '"' && c != '\'' {
				continue
			}
		}
		switch c {
		case '"', '\'':
			d.inStr = true
			d.quote = c
			d.strStart = i
		case '{', '[':
			d.depth++
		case '}', ']':
			d.depth--
			if d.depth == 0 {
				out = d.closeObject(text, i+1, out)
			}
		case ',':
			if d.depth == 1 {
				d.expectKey = true
			}
		case ':':
			if d.depth == 1 {
				d.expectKey = false
			}
		}
	}
	d.pos = n
	return out
}

// firstKey advances the check that an opened brace starts a JSON-like object: a
// quoted or bare key followed by a colon, or an empty object. It reports false when
// the brace is prose.
func (d *jsonDecoder) firstKey(c byte) bool {
	switch d.keyState {
	case 0:
		switch {
		case isSpace(c):
		case c == '"' || c == '\'':
			// the quoted key's end moves keyState to 2 (stringEnd)
		case c == '}':
			d.keyState = 3
		case isIdentStart(c) || c >= 0x80:
			d.keyState = 1
		default:
			return false
		}
	case 1:
		switch {
		case isKeyByte(c):
		case isSpace(c):
			d.keyState = 2
		case c == ':':
			d.keyState = 3
			d.expectKey = false
		default:
			return false
		}
	case 2:
		switch {
		case isSpace(c):
		case c == ':':
			d.keyState = 3
			d.expectKey = false
		default:
			return false
		}
	}
	return true
}

// stringEnd handles the end of a string directly inside the top-level object: a key,
// or a value that may be the tool name.
func (d *jsonDecoder) stringEnd(text string, end int) {
	raw := text[d.strStart : end+1]
	if d.keyState < 3 {
		d.keyState = 2
	}
	if d.expectKey {
		d.lastKey = unquote(raw)
		return
	}
	for rank, alias := range d.codec.ToolFieldAliases {
		if rank >= d.nameRank && d.nameRank >= 0 {
			break
		}
		if d.lastKey == alias {
			if v := unquote(raw); v != "" {
				d.name, d.nameRank = v, rank
			}
			break
		}
	}
}

// unquote decodes a JSON string literal, or a single-quoted one, best effort.
func unquote(raw string) string {
	if len(raw) < 2 {
		return ""
	}
	if raw[0] == '"' && strings.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1] // the common case: nothing to decode
	}
	if raw[0] == '\'' {
		inner := raw[1 : len(raw)-1]
		inner = strings.ReplaceAll(inner, `\'`, `'`)
		raw = `"` + strings.ReplaceAll(inner, `"`, `\"`) + `"`
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return raw[1 : len(raw)-1]
	}
	return s
}

func (d *jsonDecoder) endBacktickRun(text string, i int, out []ToolCall) []ToolCall {
	run, start := d.btRun, d.btStart
	d.btRun = 0
	// A fence is three or more backticks; two followed by a language tag is a known
	// typo of an opening fence, and two close an open fence.
	isFence := run >= 3 ||
		(run == 2 && !d.inFence && i < len(text) && isIdentStart(text[i])) ||
		(run == 2 && d.inFence)
	if !isFence {
		if d.inFence {
			d.fenceBody = true
		}
		return out
	}
	if !d.inFence {
		d.inFence = true
		d.fenceStart = start
		d.fenceBody = false
		d.fenceLine = false
		return out
	}
	d.inFence = false
	for _, c := range d.waiting {
		c.Start, c.End = d.fenceStart, i
		out = append(out, c)
	}
	d.waiting = nil
	return out
}

func (d *jsonDecoder) closeObject(text string, end int, out []ToolCall) []ToolCall {
	call, ok := d.codec.decodeObject(text[d.objStart:end])
	if !ok {
		if d.name != "" {
			d.malformed = append(d.malformed, ToolCall{Name: d.name, Start: d.objStart, End: end,
				Err: fmt.Errorf("%w: the call to %q is not valid JSON, even after repair; write one JSON object with double-quoted keys and strings", ErrMalformedCall, d.name)})
		}
		return out
	}
	if call.Name == "" {
		return out
	}
	if d.inFence {
		d.waiting = append(d.waiting, call)
		return out
	}
	call.Start, call.End = d.objStart, end
	return append(out, call)
}

// decodeObject decodes one candidate object, repairing it when needed. ok is false
// when it is not JSON even after repair. A decoded object without a tool name gives
// a ToolCall with an empty Name.
func (s *JSONPromptStrategy) decodeObject(src string) (ToolCall, bool) {
	var m map[string]any
	if err := json.Unmarshal([]byte(src), &m); err != nil {
		healed := src
		for _, r := range s.Healing {
			healed = r.Pattern.ReplaceAllString(healed, r.Replacement)
		}
		healed = repairJSON(healed)
		m = nil
		if err := json.Unmarshal([]byte(healed), &m); err != nil || m == nil {
			return ToolCall{}, false
		}
	}
	return s.callFromObject(m), true
}

// callFromObject reads the tool name and arguments of a decoded object. The first
// alias whose value is a non-empty string names the tool; a name of any other type is
// not a call (Name stays empty).
func (s *JSONPromptStrategy) callFromObject(m map[string]any) ToolCall {
	var call ToolCall
	for _, alias := range s.ToolFieldAliases {
		if v, ok := m[alias].(string); ok && v != "" {
			call.Name = v
			break
		}
	}
	if call.Name == "" {
		return call
	}
	call.Arguments = map[string]any{}
	for _, alias := range s.ArgumentsFieldAliases {
		v, present := m[alias]
		if !present {
			continue
		}
		switch a := v.(type) {
		case nil:
		case map[string]any:
			call.Arguments = a
		case string:
			// Some models double-encode the arguments; accept a string that holds an object.
			var inner map[string]any
			if json.Unmarshal([]byte(a), &inner) == nil && inner != nil {
				call.Arguments = inner
			} else {
				call.Err = &ArgumentsError{Tool: call.Name, Field: alias, Got: "string"}
			}
		default:
			call.Err = &ArgumentsError{Tool: call.Name, Field: alias, Got: jsonTypeName(v)}
		}
		break
	}
	return call
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
