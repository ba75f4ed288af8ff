package mcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrMalformedCall is wrapped by the error of a call that named a tool but could not
// be decoded, even after repair, never closed, or named two different tools.
var ErrMalformedCall = errors.New("malformed tool call")

// ArgumentsError is the one error type for arguments a tool cannot take: either
// the arguments were not a JSON object at all (Field and Got are set), or they were
// an object with problems (Problems lists every one). Drivers, the orchestrator and
// middleware return it, or wrap it, so that a client can branch with errors.As and
// the model reads every problem in the retry prompt at once.
type ArgumentsError struct {
	Tool  string // the tool the call named
	Field string // the field that held the arguments, such as "arguments" or "input"
	Got   string // the JSON type found, such as "string" or "array"
	// Problems are the problems of an arguments object, each "path: what is wrong"
	// (for example `/count: want integer, got string "five"`), in a stable order.
	Problems []string
}

// Error returns a message for the model: which field of which call must be an
// object, and what it was instead; or every problem of the arguments.
func (e *ArgumentsError) Error() string {
	if len(e.Problems) > 0 {
		return e.Tool + ": invalid arguments: " + strings.Join(e.Problems, "; ")
	}
	article := "a "
	switch e.Got {
	case "array", "object":
		article = "an "
	case "null":
		article = ""
	}
	return fmt.Sprintf("the %q field of the call to %q must be a JSON object of named arguments, got %s%s", e.Field, e.Tool, article, e.Got)
}

// maxRestarts bounds how often Finish rescans after an object that never closed, so
// that hostile input cannot make decoding quadratic: each rescan is one more pass of
// Scan's cost over the text.
const maxRestarts = 8

// jsonDecoder is the incremental scanner of the JSON codec. It walks the text once,
// tracking code fences and reasoning blocks in prose and string, comment and nesting
// state inside objects. Complete top-level objects are decoded (with repair when
// needed) and reported when they name a tool.
//
// Cost: in prose, the scanner jumps from one byte that may matter (a brace, a
// backtick, the first byte of a reasoning tag) to the next with a vectorised search,
// remembering for each such byte where it occurs next, so prose is read once at
// memory speed. Inside objects it reads byte by byte. After a brace that turns out to
// be prose (no key follows it), scanning resumes right after the brace. The key
// check fails at any other brace, even one inside a comment or a quoted key, so the
// region it re-reads holds no brace: no byte is re-read by two key checks, and Scan
// reads each byte at most twice. Each complete object is decoded once.
type jsonDecoder struct {
	codec *JSONPromptStrategy
	pos   int  // next byte to scan
	final bool // Finish is running: the text is complete

	// next occurrences, in prose, of the bytes that may matter there
	marks    []mark
	marksBuf [4]mark
	markSet  byteSet     // the bytes of marks
	tagSet   byteSet     // the first bytes of reasoning tags
	outBuf   [1]ToolCall // the result of Finish when it holds one call

	// code fences in prose
	btRun      int  // length of the current run of backticks
	btStart    int  // offset of the run
	inFence    bool // inside an open fence
	fenceStart int
	fenceBody  bool       // a non-space byte arrived inside the open fence
	fenceLine  bool       // the opening fence's line (language tag) has ended
	waiting    []ToolCall // calls complete inside the open fence
	waitName   string     // the tool name all waiting calls share; "" when they differ

	// an open reasoning block: the tag that closes it; "" outside
	think string

	// the open top-level object
	depth        int
	objStart     int
	inStr        bool
	quote        byte
	esc          bool
	strStart     int
	comment      byte // '/' in a // comment, '*' in a /* */ comment, 0 outside
	commentStart int  // offset of the comment's second byte, so that "/*/" stays open
	prev         byte // last significant byte outside strings and comments
	keyState     int  // 0 expect first key, 1 in unquoted key, 2 expect ':', 3 committed
	expectKey    bool // the next string directly inside the object is a key
	keyQuoted    bool // the first key is a double-quoted string
	lastKey      string
	name         string // tool name found so far
	nameRank     int    // index of the alias that gave name; -1 for none
	nameFinal    bool   // name cannot change any more, short of a conflict
	otherName    string // a different name under the same alias: a conflict
	argsKey      bool   // a quoted key directly inside the object is an arguments alias
	otherKey     bool   // a quoted key directly inside the object is no alias at all

	restarts  int
	malformed []ToolCall // objects that named a tool and never closed
}

// mark remembers where byte c occurs next in prose: at pos, or (pos < 0) nowhere in
// [from, upto).
type mark struct {
	c         byte
	pos, from int
	upto      int
}

// next returns the offset of the first occurrence of m.c in text[i:], or -1. The
// answer is remembered, so that a byte of prose is searched once per mark.
func (m *mark) next(text string, i int) int {
	if m.pos >= i && m.from <= i {
		return m.pos
	}
	if m.pos < 0 && m.from <= i && m.upto >= len(text) {
		return -1
	}
	start := i
	if m.pos < 0 && m.from <= i && m.upto > i {
		start = m.upto
	}
	m.from = i
	if j := strings.IndexByte(text[start:], m.c); j >= 0 {
		m.pos = start + j
	} else {
		m.pos, m.upto = -1, len(text)
	}
	return m.pos
}

// Scan continues over text and returns the calls completed since the last call.
func (d *jsonDecoder) Scan(text string) []ToolCall {
	return d.scan(text, nil)
}

// Finish scans the rest of text, closes what the end of the text closes (a fence,
// a run of backticks) and looks for calls after objects that never closed.
func (d *jsonDecoder) Finish(text string) []ToolCall {
	d.final = true
	out := d.scan(text, d.outBuf[:0])
	n := len(text)
	if d.btRun > 0 {
		out = d.endBacktickRun(text, n, out)
	}
	for d.depth > 0 && d.restarts < maxRestarts {
		// An object that never closed. When it named a tool it is a truncated call,
		// and everything after its brace is that call's own text: objects nested in
		// its arguments are data, never calls.
		if d.name != "" {
			if !d.callLike() {
				break // a record that never closed: its nested objects are its data
			}
			d.malformed = append(d.malformed, ToolCall{Name: d.name, Arguments: map[string]any{}, Start: d.objStart, End: n,
				Err: fmt.Errorf("%w: the JSON object of the call to %q never closed", ErrMalformedCall, d.name)})
			break
		}
		// Otherwise it was prose (such as "{key: ..."): read the text after its brace.
		d.restarts++
		d.pos = d.objStart + 1
		d.depth = 0
		d.inStr = false
		d.comment = 0
		out = d.scan(text, out)
		if d.btRun > 0 {
			out = d.endBacktickRun(text, n, out)
		}
	}
	if d.inFence {
		out = d.releaseWaiting(n, out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// releaseWaiting reports the calls complete inside the fence that ends at end. The
// first call's span starts with the fence, the last one's ends with it, and each
// call in between spans from the end of the object before it to its own end: the
// spans cover the fence without overlapping, so text between two calls belongs to
// the later one.
func (d *jsonDecoder) releaseWaiting(end int, out []ToolCall) []ToolCall {
	from := d.fenceStart
	for k, c := range d.waiting {
		objEnd := c.End
		c.Start, c.End = from, objEnd
		if k == len(d.waiting)-1 {
			c.End = end
		}
		from = objEnd
		out = append(out, c)
	}
	d.waiting = nil
	return out
}

// Pending reports the earliest region that may still become a call. The name is
// the tool name every candidate in the region shares, "" when it is not known yet
// or when candidates differ: a caller that holds display on "" can never show a
// call it will own.
func (d *jsonDecoder) Pending() (int, string, bool) {
	if d.inFence {
		switch {
		case len(d.waiting) > 0:
			name := d.waitName
			if d.depth > 0 && d.formingName() != name {
				name = ""
			}
			return d.fenceStart, name, true
		case d.depth > 0:
			return d.fenceStart, d.formingName(), true
		case !d.fenceBody:
			// an open fence with nothing in it yet may be the start of a call
			return d.fenceStart, "", true
		}
	} else if d.depth > 0 {
		return d.objStart, d.formingName(), true
	}
	if d.btRun > 0 {
		return d.btStart, "", true
	}
	return 0, "", false
}

// formingName is the tool name of the open object once it is final, else "".
func (d *jsonDecoder) formingName() string {
	if d.nameFinal {
		return d.name
	}
	return ""
}

// Malformed returns the objects that named a tool and never closed (found by
// Finish). Objects that closed but cannot run are returned by Scan and Finish, in
// order, with Err set.
func (d *jsonDecoder) Malformed() []ToolCall { return d.malformed }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || c == '-' || (c >= '0' && c <= '9') }

// isKeyByte reports bytes that may make up an unquoted first key: identifier bytes
// and the bytes of non-ASCII characters (typographic quotes around a key).
func isKeyByte(c byte) bool { return isIdent(c) || c >= 0x80 }

// plainName reports whether a tool name is made only of the bytes tool names use,
// so that no repair of the object around it can change it.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isIdent(c) && c != '.' && c != ':' && c != '/' {
			return false
		}
	}
	return true
}

// byteByByteOnly turns the one-pass decoding of strict objects and the early
// refutation of prose braces (proseBrace) off, so that a test can compare them
// with the byte-by-byte reading they stand in for.
var byteByByteOnly = false

// scan is the main loop: prose, reasoning blocks and objects, until the end of text
// or until a decision needs bytes that have not arrived.
func (d *jsonDecoder) scan(text string, out []ToolCall) []ToolCall {
	n := len(text)
	i := d.pos
	for i < n {
		var wait bool
		switch {
		case d.think != "":
			i, wait = d.skipReasoning(text, i)
		case d.depth == 0:
			i, wait, out = d.scanProse(text, i, out)
		default:
			i, wait, out = d.scanObject(text, i, out)
		}
		if wait {
			d.pos = i
			return out
		}
	}
	d.pos = n
	return out
}

// skipReasoning skips the reasoning block that is open, up to and including its
// closing tag. Calls in it are the model thinking aloud: never calls.
func (d *jsonDecoder) skipReasoning(text string, i int) (int, bool) {
	j := strings.Index(text[i:], d.think)
	if j < 0 {
		// the closing tag may still arrive, split across the end of text
		return max(i, len(text)-len(d.think)+1), true
	}
	i += j + len(d.think)
	d.think = ""
	return i, false
}

// proseMarks returns the marks of the bytes that may matter in prose: a brace, a
// backtick, and the first byte of every reasoning tag.
func (d *jsonDecoder) proseMarks() []mark {
	if d.marks == nil {
		d.marks = append(d.marksBuf[:0], mark{c: '{', pos: -1}, mark{c: '`', pos: -1})
		d.markSet.add('{')
		d.markSet.add('`')
		for _, t := range d.codec.ReasoningTags {
			if t.Open == "" || t.Close == "" {
				continue
			}
			c := t.Open[0]
			if !slices.ContainsFunc(d.marks, func(m mark) bool { return m.c == c }) {
				d.marks = append(d.marks, mark{c: c, pos: -1})
				d.markSet.add(c)
				d.tagSet.add(c)
			}
		}
	}
	return d.marks
}

// scanProse reads prose from i: it jumps to the next byte that may matter, handles
// backtick runs, fences, reasoning tags, and opens an object at a brace. It returns
// where scanning goes on (after an object's brace, inside a reasoning block, or the
// end of text), and wait when a decision needs more text.
func (d *jsonDecoder) scanProse(text string, i int, out []ToolCall) (int, bool, []ToolCall) {
	n := len(text)
	marks := d.proseMarks()
	for i < n {
		c := text[i]
		if d.btRun == 0 && c != '{' && c != '`' && (!d.inFence || (d.fenceLine && d.fenceBody)) && !d.tagSet.has(c) {
			// Nothing in the bytes before the next mark changes any state. Look at a
			// few bytes one by one (text dense with marks stays cheap), then jump with
			// a vectorised search.
			j, lim := i+1, min(n, i+16)
			for j < lim && !d.markSet.has(text[j]) {
				j++
			}
			if j == lim && j < n {
				next := n
				for k := range marks {
					if m := marks[k].next(text, j); m >= 0 && m < next {
						next = m
					}
				}
				j = next
			}
			if j >= n {
				return n, false, out
			}
			i, c = j, text[j]
		}
		if c == '`' {
			if d.btRun == 0 {
				d.btStart = i
			}
			d.btRun++
			i++
			if d.btRun == 3 && d.inFence {
				// Three backticks close the open fence at once: the call in it runs in
				// the round that brings them, even when no byte follows.
				out = d.endBacktickRun(text, i, out)
			}
			continue
		}
		if d.btRun > 0 {
			out = d.endBacktickRun(text, i, out)
		}
		if c == '{' {
			if d.inFence {
				d.fenceBody = true
			}
			if next := i + 1; !byteByByteOnly && next < n && text[next] != '"' && text[next] != '/' && proseBrace(text, i) {
				i++
				continue
			}
			d.open(i)
			// Read the object here: most braces in hostile text are refuted by the
			// next byte, and prose goes on right after.
			j, wait, o := d.scanObject(text, i+1, out)
			out = o
			if wait || d.depth > 0 || d.think != "" {
				return j, wait, out
			}
			i = j
			continue
		}
		if d.tagSet.has(c) {
			if tag, wait := d.reasoningTag(text, i); wait {
				return i, true, out
			} else if tag != "" {
				d.think = tag
				return i + 1, false, out
			}
		}
		if d.inFence {
			if !d.fenceLine {
				d.fenceLine = c == '\n' // the language tag runs to the end of the line
			} else if !isSpace(c) {
				d.fenceBody = true
			}
		}
		i++
	}
	return n, false, out
}

// proseBrace reports whether the brace at text[i] is prose by its first key
// alone, as scanObject and firstKey would find byte by byte: a byte no key
// starts with, or a bare word that no colon follows. It reports false (read
// the object) for a quote, a closing brace, a colon after the word, a slash (a
// comment may start) and text that ends before the answer.
func proseBrace(text string, i int) bool {
	n := len(text)
	j := i + 1
	for j < n && isSpace(text[j]) {
		j++
	}
	if j >= n {
		return false
	}
	switch c := text[j]; {
	case c == '"' || c == '\'' || c == '}' || c == '/':
		return false
	case !isIdentStart(c) && c < 0x80:
		return true
	}
	for j++; j < n && isKeyByte(text[j]); j++ {
	}
	for j < n && isSpace(text[j]) {
		j++
	}
	return j < n && text[j] != ':' && text[j] != '/'
}

// byteSet is a set of bytes, one bit each.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }

// reasoningTag returns the closing tag of the reasoning block whose opening tag
// starts at text[i], or "". wait reports that text ends inside what may still
// become an opening tag.
func (d *jsonDecoder) reasoningTag(text string, i int) (closeTag string, wait bool) {
	rest := text[i:]
	for _, t := range d.codec.ReasoningTags {
		if t.Open == "" || t.Close == "" || t.Open[0] != text[i] {
			continue
		}
		if strings.HasPrefix(rest, t.Open) {
			return t.Close, false
		}
		if !d.final && len(rest) < len(t.Open) && strings.HasPrefix(t.Open, rest) {
			wait = true
		}
	}
	return "", wait
}

// scanObject reads the open top-level object from i, byte by byte, until it closes,
// turns out to be prose, or text ends.
func (d *jsonDecoder) scanObject(text string, i int, out []ToolCall) (int, bool, []ToolCall) {
	n := len(text)
	for ; i < n; i++ {
		c := text[i]
		if c == '{' && d.depth == 1 && d.keyState < 3 && (d.comment != 0 || d.inStr) {
			// A brace in a comment or a quoted key before the first key: not an object
			// (see Cost above). Resume after the opening brace.
			d.depth, d.inStr, d.comment = 0, false, 0
			return d.objStart + 1, false, out
		}
		if d.comment != 0 {
			if (d.comment == '/' && c == '\n') || (d.comment == '*' && c == '/' && text[i-1] == '*' && i-1 > d.commentStart) {
				d.comment = 0
			}
			continue
		}
		if d.inStr {
			switch {
			case d.esc:
				d.esc = false
			case c == '\\':
				d.esc = true
			case c == d.quote:
				d.inStr = false
				d.prev = c
				if d.depth == 1 {
					d.stringEnd(text, i)
				}
			}
			continue
		}
		if c == '/' {
			if i+1 >= n {
				return i, true, out // decide when the next byte arrives
			}
			if next := text[i+1]; next == '/' || next == '*' {
				d.comment = next
				d.commentStart = i + 1
				i++
				continue
			}
		}
		if d.depth == 1 && d.keyState < 3 {
			if !d.firstKey(c) {
				// Not an object after all (prose such as "{ this }"): resume after the brace.
				d.depth = 0
				return d.objStart + 1, false, out
			}
			if c == ':' && d.keyState == 3 && d.keyQuoted && d.restarts == 0 && !byteByByteOnly {
				// "{ "key":" so far, as strict JSON starts: most objects are strict
				// JSON, so decode this one in one pass, as the reading below would.
				// Not tried again after a restart, so a text of unclosed braces is
				// read at most twice; braces refuted earlier never get here.
				if call, bare, n, ok := d.codec.decodeCallPrefix(text[d.objStart:]); ok {
					d.depth, d.inStr, d.comment = 0, false, 0
					if call.Name != "" && (!bare || d.inFence) {
						out = d.emit(call, d.objStart, d.objStart+n, out)
					}
					return d.objStart + n, false, out
				}
			}
			if d.keyState < 3 && c != '"' && c != '\'' {
				continue
			}
		}
		prev := d.prev
		if !isSpace(c) {
			d.prev = c
		}
		switch c {
		case '"':
			d.inStr, d.quote, d.strStart = true, c, i
		case '\'':
			// A single quote starts a string only where a value or key may start;
			// elsewhere it is an apostrophe in a bare word ("it's").
			if prev == '{' || prev == '[' || prev == ',' || prev == ':' {
				d.inStr, d.quote, d.strStart = true, c, i
			}
		case '{', '[':
			d.depth++
		case '}', ']':
			d.depth--
			if d.depth == 0 {
				return i + 1, false, d.closeObject(text, i+1, out)
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
	return n, false, out
}

// open starts a top-level object at offset i.
func (d *jsonDecoder) open(i int) {
	d.depth, d.objStart, d.prev = 1, i, '{'
	d.keyState, d.expectKey, d.lastKey, d.keyQuoted = 0, true, "", false
	d.name, d.nameRank, d.nameFinal, d.otherName = "", -1, false, ""
	d.argsKey, d.otherKey = false, false
	d.inStr, d.esc, d.comment = false, false, 0
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
		d.keyQuoted = d.quote == '"'
	}
	if d.expectKey {
		d.lastKey = unquote(raw)
		if argsRank(d.codec, d.lastKey) >= 0 {
			d.argsKey = true
		} else if d.codec.aliasRank(d.lastKey) < 0 {
			d.otherKey = true
		}
		return
	}
	rank := d.codec.aliasRank(d.lastKey)
	if rank < 0 {
		return
	}
	v := unquote(raw)
	switch {
	case d.nameRank < 0 || rank < d.nameRank:
		if v != "" {
			// Only the first alias can never be overridden by a field still to come.
			d.name, d.nameRank, d.nameFinal = v, rank, rank == 0 && plainName(v)
		}
	case rank == d.nameRank && v != d.name && d.otherName == "":
		d.otherName = v // the same field twice, naming two tools
	}
}

// callLike reports whether the open object, as far as it has been read, may be a
// call by the rule of callFromObject: it names its tool with the first alias, or
// with another one and has an arguments field, or stands alone in a fence.
func (d *jsonDecoder) callLike() bool {
	return d.nameRank == 0 || d.argsKey || (d.inFence && !d.otherKey)
}

// aliasRank returns the index of key among the tool-name aliases, or -1.
func (s *JSONPromptStrategy) aliasRank(key string) int {
	for i, a := range s.ToolFieldAliases {
		if a == key {
			return i
		}
	}
	return -1
}

// unquote decodes a JSON string literal, or a single-quoted one, best effort.
func unquote(raw string) string {
	if len(raw) < 2 {
		return ""
	}
	inner := raw[1 : len(raw)-1]
	if strings.IndexByte(inner, '\\') < 0 && (raw[0] == '"' || strings.IndexByte(inner, '"') < 0) {
		return inner // the common case: nothing to decode
	}
	var b strings.Builder
	copyString(&b, raw, 0)
	var s string
	if json.Unmarshal([]byte(b.String()), &s) != nil {
		return inner
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
	return d.releaseWaiting(i, out)
}

func (d *jsonDecoder) closeObject(text string, end int, out []ToolCall) []ToolCall {
	call, bare, ok := d.codec.decodeObject(text[d.objStart:end])
	switch {
	case !ok:
		if d.name == "" || !d.callLike() {
			return out
		}
		call = ToolCall{Name: d.name, Arguments: map[string]any{},
			Err: fmt.Errorf("%w: the call to %q is not valid JSON, even after repair; write one JSON object with double-quoted keys and strings", ErrMalformedCall, d.name)}
	case call.Name == "" || (bare && !d.inFence):
		return out
	case d.otherName != "" || (d.nameFinal && call.Name != d.name):
		// Duplicate tool fields: the name a reader (or a stream) saw first is not the
		// one a JSON decoder keeps. Refuse to guess.
		other := d.otherName
		if other == "" {
			other = call.Name
		}
		call = ToolCall{Name: d.name, Arguments: map[string]any{},
			Err: fmt.Errorf("%w: the object names two tools, %q and %q; write one JSON object per call", ErrMalformedCall, d.name, other)}
	}
	return d.emit(call, d.objStart, end, out)
}

// emit adds the call of the object text[start:end]: to out, or to the calls
// waiting for the open fence to close.
func (d *jsonDecoder) emit(call ToolCall, start, end int, out []ToolCall) []ToolCall {
	call.Start, call.End = start, end
	if d.inFence {
		if len(d.waiting) == 0 {
			d.waitName = call.Name
		} else if call.Name != d.waitName {
			d.waitName = ""
		}
		d.waiting = append(d.waiting, call)
		return out
	}
	return append(out, call)
}

// decodeObject decodes one candidate object, repairing it when needed. ok is false
// when it is not JSON even after repair. A decoded object without a tool name gives
// a ToolCall with an empty Name; bare is callFromObject's.
func (s *JSONPromptStrategy) decodeObject(src string) (call ToolCall, bare, ok bool) {
	if call, bare, ok := s.decodeCallFast(src); ok {
		return call, bare, true
	}
	var m map[string]any
	if err := unmarshalJSON([]byte(src), &m); err != nil {
		healed := src
		for _, r := range s.Healing {
			healed = r.Pattern.ReplaceAllString(healed, r.Replacement)
		}
		healed = repairJSON(healed)
		m = nil
		if err := unmarshalJSON([]byte(healed), &m); err != nil || m == nil {
			return ToolCall{}, false, false
		}
	}
	call, bare = s.callFromObject(m)
	return call, bare, true
}

// callFromObject reads the tool name and arguments of a decoded object. The first
// tool-name alias present in the object is its tool-name field; the object is a call
// when that field holds a non-empty string (a name of any other type is not a call:
// Name stays empty). Likewise the first arguments alias present holds the
// arguments: missing or null means {}, anything but an object (or JSON text holding
// one) is an *ArgumentsError.
//
// An object that names its tool with any alias but the first ("name" in the
// bundled prompt) is a call only when it also has an arguments field: an answer
// that quotes a record such as {"id":5,"name":"Bella","owner":"bob"} is data, and
// Name stays empty. Such an object with no field but its name is bare: a call only
// where it stands in a code fence, which the decoder knows and this reading does
// not.
func (s *JSONPromptStrategy) callFromObject(m map[string]any) (call ToolCall, bare bool) {
	rank := -1
	for i, alias := range s.ToolFieldAliases {
		v, present := m[alias]
		if !present {
			continue
		}
		if name, ok := v.(string); ok {
			call.Name, rank = name, i
		}
		break
	}
	if call.Name == "" {
		return call, false
	}
	if rank > 0 && !slices.ContainsFunc(s.ArgumentsFieldAliases, func(a string) bool { _, ok := m[a]; return ok }) {
		if len(m) > 1 {
			return ToolCall{}, false // a record
		}
		bare = true
	}
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
			if unmarshalJSON([]byte(a), &inner) == nil && inner != nil {
				call.Arguments = inner
			} else {
				call.Err = &ArgumentsError{Tool: call.Name, Field: alias, Got: "string"}
			}
		default:
			call.Err = &ArgumentsError{Tool: call.Name, Field: alias, Got: jsonTypeName(v)}
		}
		break
	}
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	return call, bare
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
