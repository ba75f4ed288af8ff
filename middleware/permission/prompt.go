package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"github.com/mcs-go/mcs/internal/clone"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Limits of what the prompt shows of the arguments.
const (
	promptMaxString = 200 // bytes of a string value
	promptMaxItems  = 20  // elements of an array
	maxAnswerLen    = 64  // bytes of an answer line; longer lines are invalid answers
)

// ErrInputClosed is wrapped by the error of a [Prompt] handler whose input ended
// (or failed) before an answer was read. The call fails closed.
var ErrInputClosed = errors.New("consent prompt input ended before an answer")

// Prompt returns a ConsentFunc that asks a person on a terminal: it writes the tool
// name and its arguments to out, as indented JSON with long strings and arrays cut
// and control characters escaped, and reads a line from in:
//
//	y or yes     allow this call
//	n or no      deny this call
//	a or always  allow this call and every later call of the same tool, for the
//	             life of the returned handler
//
// Any other line repeats the question. Answers are case-insensitive.
//
// When in ends or fails before an answer, the handler returns an error wrapping
// [ErrInputClosed], so the call fails closed (it is not reported to the model as a
// user's denial); every later question fails the same way. When ctx ends while it
// waits for an answer, the handler writes a notice to out and returns ctx's cause.
//
// The handler is safe for concurrent use: questions are asked one at a time, and a
// call waiting for its turn gives up when its ctx ends. It reads in byte by byte
// and only while a question is waiting, so it never consumes input meant for
// another reader of in; the one exception is a read still blocked when its
// question was given up, whose line goes to the next question if one is waiting
// by then and is dropped otherwise.
func Prompt(in io.Reader, out io.Writer) ConsentFunc {
	p := &prompter{in: in, out: out, turn: make(chan struct{}, 1), always: map[string]bool{}}
	return p.consent
}

type prompter struct {
	in   io.Reader
	out  io.Writer
	turn chan struct{} // holds a token while a question is shown

	mu      sync.Mutex
	always  map[string]bool
	waiting chan readResult // the question waiting for a line, if any
	reading bool            // a read of in is in flight
	readErr error           // set once in has ended or failed
}

type readResult struct {
	line string
	err  error
}

func (p *prompter) consent(ctx context.Context, name string, args map[string]any) (bool, error) {
	if p.isAlways(name) {
		return true, nil
	}
	if ctx.Err() != nil { // never ask about a call that has already ended
		return false, context.Cause(ctx)
	}
	select {
	case p.turn <- struct{}{}:
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
	defer func() { <-p.turn }()
	if p.isAlways(name) { // answered while this call waited for its turn
		return true, nil
	}
	if _, err := io.WriteString(p.out, question(name, args)); err != nil {
		return false, fmt.Errorf("consent prompt: write question: %w", err)
	}
	for {
		line, err := p.readLine(ctx)
		if err != nil {
			if ctx.Err() != nil {
				_, _ = io.WriteString(p.out, "\n(no answer; the tool was not run)\n")
			}
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		case "a", "always":
			p.mu.Lock()
			p.always[name] = true
			p.mu.Unlock()
			return true, nil
		}
		if _, err := io.WriteString(p.out, "Please answer y (yes), n (no) or a (always allow this tool): "); err != nil {
			return false, fmt.Errorf("consent prompt: write question: %w", err)
		}
	}
}

func (p *prompter) isAlways(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.always[name]
}

// readLine waits for the next line of in, or for ctx to end.
func (p *prompter) readLine(ctx context.Context) (string, error) {
	ch := make(chan readResult, 1)
	p.mu.Lock()
	if p.readErr != nil {
		err := p.readErr
		p.mu.Unlock()
		return "", err
	}
	p.waiting = ch
	if !p.reading {
		p.reading = true
		go p.read()
	}
	p.mu.Unlock()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-ctx.Done():
		p.mu.Lock()
		if p.waiting == ch {
			p.waiting = nil
		}
		p.mu.Unlock()
		return "", context.Cause(ctx)
	}
}

// read reads one line and hands it to the question waiting for it, if any.
func (p *prompter) read() {
	line, err := readLine(p.in)
	p.mu.Lock()
	p.reading = false
	w := p.waiting
	p.waiting = nil
	res := readResult{line: line}
	if err != nil {
		p.readErr = fmt.Errorf("%w: %w", ErrInputClosed, err)
		if line == "" { // a last line without a newline still counts as an answer
			res.err = p.readErr
		}
	}
	p.mu.Unlock()
	if w != nil {
		w <- res
	}
}

// readLine reads up to and including the next newline, one byte at a time so that
// nothing after it is consumed. A line longer than maxAnswerLen reads as "".
func readLine(r io.Reader) (string, error) {
	var b []byte
	var one [1]byte
	long := false
	for empty := 0; ; {
		n, err := r.Read(one[:])
		if n == 1 {
			empty = 0
			if one[0] == '\n' {
				break
			}
			if len(b) < maxAnswerLen {
				b = append(b, one[0])
			} else {
				long = true
			}
		}
		if err != nil {
			if long {
				return "", err
			}
			return string(b), err
		}
		if n == 0 {
			if empty++; empty > 100 {
				return "", io.ErrNoProgress
			}
		}
	}
	if long {
		return "", nil
	}
	return string(b), nil
}

// question renders the question for one call.
func question(name string, args map[string]any) string {
	var b strings.Builder
	b.WriteString("Tool ")
	b.WriteString(strconv.Quote(name))
	if len(args) == 0 {
		b.WriteString(" wants to run without arguments.\n")
	} else {
		b.WriteString(" wants to run with these arguments:\n")
		b.WriteString(showArgs(args))
		b.WriteString("\n")
	}
	b.WriteString("Allow it? y (yes), n (no), a (always allow this tool): ")
	return b.String()
}

// showArgs renders args as indented JSON with long values cut and every character
// that could control a terminal escaped.
func showArgs(args map[string]any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(shorten(args, 0)); err != nil { // not expected: shorten returns JSON values
		return strconv.Quote(cut(fmt.Sprint(args)))
	}
	return escapeTerminal(strings.TrimSuffix(buf.String(), "\n"))
}

// cut shortens s to promptMaxString bytes on a rune boundary and says how much was
// left out.
func cut(s string) string {
	if len(s) <= promptMaxString {
		return s
	}
	p := textcut.Prefix(s, promptMaxString)
	return fmt.Sprintf("%s… (%d more bytes)", p, len(s)-len(p))
}

// shorten returns a copy of v for display, made of JSON values only: long strings
// and arrays cut. Values of other Go types (map[string]string, []string, structs,
// []byte) are shown the way encoding/json encodes them, and cut the same way; a
// value JSON cannot represent (NaN, a channel) is shown as fmt prints it.
func shorten(v any, depth int) any {
	if depth > clone.MaxDepth {
		return "…"
	}
	switch x := v.(type) {
	case nil, bool:
		return v
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return v
	case string:
		return cut(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = shorten(e, depth+1)
		}
		return out
	case []any:
		n := min(len(x), promptMaxItems)
		out := make([]any, 0, n+1)
		for _, e := range x[:n] {
			out = append(out, shorten(e, depth+1))
		}
		if len(x) > n {
			out = append(out, fmt.Sprintf("… (%d more items)", len(x)-n))
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return cut(fmt.Sprint(v))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // show integers exactly
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return cut(string(b))
	}
	if _, again := decoded.(json.Number); again {
		return decoded
	}
	return shorten(decoded, depth+1)
}

// escapeTerminal escapes, as JSON \u sequences, the characters JSON leaves as they
// are but a terminal may act on: C1 controls, bidirectional overrides and other
// invisible format characters. Newlines of the indentation are kept.
func escapeTerminal(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && !unicode.IsPrint(r) && r != ' ' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == ' ' || unicode.IsPrint(r) {
			b.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
