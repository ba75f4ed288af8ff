package mcs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The size limits of a reply's calls: how many run (WithMaxCalls), how large
// their arguments may be (WithMaxArgumentBytes) and how much of a result enters
// the history (WithMaxResultBytes).

// ErrArgumentsTooLarge is wrapped by the error of a call whose arguments are
// larger than the driver's limit (see [WithMaxArgumentBytes]); such a call never
// runs.
var ErrArgumentsTooLarge = errors.New("tool call arguments too large")

// limitOf resolves an option: 0 is def, a negative value is -1 (no limit).
func limitOf(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return -1
	}
	return n
}

// callLimits are the limits run applies, resolved once per reply.
type callLimits struct {
	calls, args, results int // -1: none
	text                 bool
	overAt               int // the index in the batch of the first call over the call limit
	rest                 error
}

func (b *BaseDriver) callLimits(f WireFormat, before int) callLimits {
	l := callLimits{
		calls:   b.maxCalls(),
		args:    limitOf(b.opts.MaxArgumentBytes, DefaultMaxArgumentBytes),
		results: limitOf(b.opts.MaxResultBytes, DefaultMaxResultBytes),
	}
	_, l.text = f.(textFormat)
	l.overAt = l.calls - before
	return l
}

// overCalls returns the error of the call at index i of the batch when it is over
// the per-reply limit, and whether the call gets a message in the history. The
// calls over the limit are answered by one message, the first one's: in text, once
// per reply (a stream's later rounds only carry their text); in a native format,
// once per batch, since each call the assistant message holds needs its answer.
func (l *callLimits) overCalls(c ToolCall, i int) (err error, answer bool) {
	if l.calls < 0 || i < l.overAt {
		return nil, true
	}
	if i == max(l.overAt, 0) && (l.overAt >= 0 || !l.text) {
		return fmt.Errorf("%w: the call to %q and every later call of this reply were not run: one reply may make at most %d tool calls; make fewer calls and wait for their results", ErrTooManyCalls, c.Name, l.calls), true
	}
	if l.rest == nil {
		l.rest = fmt.Errorf("%w: the call was not run: one reply may make at most %d tool calls", ErrTooManyCalls, l.calls)
	}
	return l.rest, false
}

// argumentsError returns the error of a call whose arguments are over the limit,
// or nil.
func (l *callLimits) argumentsError(c ToolCall) error {
	if l.args < 0 || c.Err != nil {
		return nil
	}
	// A text call's arguments were decoded from its span, and encoding a decoded
	// value writes at most 6 bytes per byte of JSON it came from (a '<' written
	// as \u003c): a span of a sixth of the limit needs no walk of the arguments.
	if span := c.End - c.Start; span > 0 && span <= l.args/6 {
		return nil
	}
	if n, ok := jsonSize(c.Arguments, l.args, 0); ok && n <= l.args {
		return nil
	} else if !ok && len(appendArguments(nil, c.Arguments)) <= l.args {
		return nil
	}
	return fmt.Errorf("%w: the arguments of the call to %q are more than %d bytes of JSON, the most one call may send; the call was not run: send less data per call, in several calls or by reference (a path or an address)", ErrArgumentsTooLarge, c.Name, l.args)
}

// boundOutcome cuts the result or the error of o, as the text the model reads, to
// the limit: head and tail kept, a notice between them. It reports whether it
// changed o.
func (l *callLimits) boundOutcome(o *CallRecord) (changed bool) {
	limit := l.results
	if limit < 0 {
		return false
	}
	if o.Err != nil {
		if msg := o.Err.Error(); len(msg) > limit {
			o.Err = &cutError{msg: cutMiddle(msg, limit, "error"), err: o.Err}
			return true
		}
		return false
	}
	var text string
	switch r := o.Result.(type) {
	case string:
		if len(r) <= limit {
			return false
		}
		text = r
	case []byte:
		if len(r) <= limit {
			return false
		}
		text = string(r)
	case json.RawMessage:
		if len(r) <= limit {
			return false
		}
		text = string(r)
	default:
		if n, ok := jsonSize(r, limit, 0); ok && n <= limit {
			return false
		}
		// Rendered once here; the formats take the text as it is.
		if text = ResultText(r); len(text) <= limit {
			o.Result = text
			return true
		}
	}
	o.Result = cutMiddle(text, limit, "result")
	return true
}

// cutError is an error whose message enters the history cut.
type cutError struct {
	msg string
	err error
}

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return e.err }

// cutMiddle returns s in at most limit bytes (unless the notice alone is longer):
// its head and its tail, never splitting a UTF-8 sequence, with a notice between
// them that says how much was cut.
func cutMiddle(s string, limit int, what string) string {
	notice := func(cut int) string {
		return fmt.Sprintf("\n[… %d bytes cut: this %s was %d bytes, more than the %d bytes one %s may bring into the conversation …]\n", cut, what, len(s), limit, what)
	}
	keep := max(limit-len(notice(len(s))), 0) // the longest notice: the most digits
	head := s[:runeStartBefore(s, keep-keep/2)]
	tail := s[runeStartAfter(s, len(s)-(keep-len(head))):]
	return head + notice(len(s)-len(head)-len(tail)) + tail
}

// runeStartBefore returns the largest i <= n where a UTF-8 sequence of s starts
// (n itself when s is not UTF-8 there).
func runeStartBefore(s string, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(s) {
		return len(s)
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// runeStartAfter returns the smallest i >= n where a UTF-8 sequence of s starts
// (n itself when s is not UTF-8 there).
func runeStartAfter(s string, n int) int {
	if n <= 0 {
		return 0
	}
	if n >= len(s) {
		return len(s)
	}
	for i := n; i < len(s) && i < n+utf8.UTFMax; i++ {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// jsonSize returns the size of v encoded as JSON by appendJSON, or more (a number
// counts as its longest form). It stops counting once the size passes budget. ok
// is false for a value appendJSON does not encode: the caller then encodes it to
// know.
func jsonSize(v any, budget, depth int) (n int, ok bool) {
	if !fastPaths || depth > 64 {
		return 0, false
	}
	switch x := v.(type) {
	case nil, bool:
		return 5, true
	case string:
		return jsonStringSize(x), true
	case float64:
		return 25, true // "-0.0000012345678901234567" and "-2.2250738585072014e-308" are 25 and 24
	case int:
		return 20, true
	case json.Number:
		return len(x) + 1, true
	case map[string]any:
		n = 2
		for k, e := range x {
			m, ok := jsonSize(e, budget-n, depth+1)
			if !ok {
				return 0, false
			}
			if n += jsonStringSize(k) + 2 + m; n > budget {
				return n, true
			}
		}
		return n, true
	case []any:
		n = 2
		for _, e := range x {
			m, ok := jsonSize(e, budget-n, depth+1)
			if !ok {
				return 0, false
			}
			if n += m + 1; n > budget {
				return n, true
			}
		}
		return n, true
	}
	return 0, false
}

// jsonStringSize is the length of appendJSONString(nil, s).
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&':
				n++
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// textWithout returns text with the text of each call listed in big (indices in
// calls, in order) replaced by a short note. The calls' offsets are those of the text the decoder read; text is
// that text, or (a stream's round) the part of it that ends with the last of calls.
func textWithout(text string, calls []ToolCall, big []int, limit int) string {
	end := 0
	for _, c := range calls {
		end = max(end, c.End)
	}
	base := max(end-len(text), 0)
	var b strings.Builder
	from := 0
	for _, k := range big {
		c := calls[k]
		start, stop := c.Start-base, c.End-base
		if start < from || stop > len(text) || start >= stop {
			continue
		}
		b.WriteString(text[from:start])
		fmt.Fprintf(&b, "[the call to %q is left out here: its arguments were more than the %d bytes one call may send]", c.Name, limit)
		from = stop
	}
	b.WriteString(text[from:])
	return b.String()
}
