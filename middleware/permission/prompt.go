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

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/clone"
	"github.com/mcs-go/mcs/internal/textcut"
)

// Limits of the prompt.
const (
	// PageBytes and PageLines bound one page of the arguments shown by [Prompt]:
	// longer arguments are shown a page at a time, after a warning that gives their
	// full size.
	PageBytes = 4096
	PageLines = 40

	maxAnswerLen = 64 // bytes of an answer line; longer lines are invalid answers
)

// ErrInputClosed is wrapped by the error of a [Prompt] handler whose input ended
// (or failed) before an answer was read. The call fails closed.
var ErrInputClosed = errors.New("consent prompt input ended before an answer")

// Prompt returns a ConsentFunc that asks a person on a terminal: it writes the
// tool, the driver it runs on (label, name and id from the call's [mcs.CallInfo])
// and its arguments to out, as indented JSON with control characters escaped, and
// reads a line from in. When the middleware sits on an orchestrator, the call has
// not been routed yet: the question names the driver the orchestrator says the call
// reaches ([mcs.CallInfo].Route; Tool "pets__addPet" (driver "pets", via the
// orchestrator) under namespacing), or says only "via the orchestrator" when it
// cannot tell; a label a tool writes into its own name is never shown as the
// driver. It then reads a line from in:
//
//	y or yes     allow this call
//	n or no      deny this call
//	a or always  allow this call and every later call of the same tool on the
//	             same driver, for the life of the returned handler
//	m or more    show the next page of the arguments
//
// Any other line repeats the question. Answers are case-insensitive.
//
// Nothing of the arguments is left out: every key, every element and every byte
// of every string is shown, so that a command cannot hide a trailing part. When
// the arguments are longer than one page ([PageBytes] or [PageLines]) a warning
// gives their full size and the number of pages, the first page is shown, and
// the question says how many pages are left; "m" shows the next one. An answer
// may be given before the last page (the question then says that not all of it
// was seen).
//
// "Always" is remembered for the tool of one driver: the driver's id, name and
// label and the tool's definition must all be the same. A tool of the same name on
// another driver sharing the middleware, or a tool whose definition changed, is
// asked about again. Drivers that share the id and name and are not told apart by
// an orchestrator label are indistinguishable; give them labels. On an
// orchestrator's own chain the driver is told apart by the exposed name, which
// carries its label under namespacing: "always" for pets__addPet does not allow
// shop__addPet. A bare exposed name (no namespacing) is remembered as the
// orchestrator's tool of that name and definition.
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
	always  map[string]bool // keyed by alwaysKey
	waiting chan readResult // the question waiting for a line, if any
	reading bool            // a read of in is in flight
	readErr error           // set once in has ended or failed
}

type readResult struct {
	line string
	err  error
}

func (p *prompter) consent(ctx context.Context, name string, args map[string]any) (bool, error) {
	info, hasInfo := mcs.CallInfoFromContext(ctx)
	key := alwaysKey(name, info, hasInfo)
	if p.isAlways(key) {
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
	if p.isAlways(key) { // answered while this call waited for its turn
		return true, nil
	}
	q := newQuestion(name, info, hasInfo, args)
	if _, err := io.WriteString(p.out, q.first()); err != nil {
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
			p.always[key] = true
			p.mu.Unlock()
			return true, nil
		case "m", "more":
			if _, err := io.WriteString(p.out, q.next()); err != nil {
				return false, fmt.Errorf("consent prompt: write question: %w", err)
			}
			continue
		}
		if _, err := io.WriteString(p.out, q.reask()); err != nil {
			return false, fmt.Errorf("consent prompt: write question: %w", err)
		}
	}
}

func (p *prompter) isAlways(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.always[key]
}

// alwaysKey identifies a tool of one driver for "always": the driver's id, name
// and label and the tool's definition (so that a tool whose definition changed is
// asked about again).
func alwaysKey(name string, info mcs.CallInfo, hasInfo bool) string {
	if !hasInfo {
		return "\x00" + name
	}
	def, err := json.Marshal(info.Tool)
	if err != nil {
		def = []byte(fmt.Sprint(info.Tool))
	}
	return strings.Join([]string{info.Driver.ID, info.Driver.Name, info.Label, name, string(def)}, "\x00")
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

// question is the text of one consent question: the heading, the arguments in
// pages, and the line that asks.
type question struct {
	head  string
	pages []string
	shown int // pages written so far
	total int // bytes of the rendered arguments
}

func newQuestion(name string, info mcs.CallInfo, hasInfo bool, args map[string]any) *question {
	var b strings.Builder
	b.WriteString("Tool ")
	b.WriteString(strconv.Quote(name))
	if hasInfo {
		b.WriteString(where(info))
	}
	q := &question{}
	if len(args) == 0 {
		b.WriteString(" wants to run without arguments.\n")
		q.head = escapeTerminal(b.String())
		return q
	}
	b.WriteString(" wants to run with these arguments:\n")
	shown := showArgs(args)
	q.total = len(shown)
	q.pages = paginate(shown)
	if len(q.pages) > 1 {
		fmt.Fprintf(&b, "Warning: the arguments are long (%d bytes, %d lines); they are shown in %d pages. Read them all before you allow the call.\n",
			len(shown), strings.Count(shown, "\n")+1, len(q.pages))
	}
	q.head = escapeTerminal(b.String())
	return q
}

// orchestratorID is the Meta ID of the orchestrator (orchestrator.ID; this
// package does not import it). A call whose CallInfo names it runs on the
// orchestrator's own chain, before the orchestrator routes it to a driver.
const orchestratorID = "mcs-go/orchestrator"

// where says, after the tool's name, where the call runs: on a driver
// (" on driver ..."), or, on the orchestrator's own chain, the driver the call
// reaches when the orchestrator can tell ([mcs.CallInfo].Route: " (driver "pets",
// via the orchestrator)" for pets__addPet under namespacing) and " (via the
// orchestrator)" when it cannot. A label written into a tool's own name is never
// shown as the driver. An orchestrator that is itself registered under a label is
// named by it.
func where(info mcs.CallInfo) string {
	if info.Driver.ID != orchestratorID && info.Route.Label == "" {
		return " on driver " + driverName(info)
	}
	via := "via the orchestrator"
	if info.Label != "" {
		via += " " + strconv.Quote(info.Label)
	}
	if info.Route.Label != "" {
		return " (driver " + strconv.Quote(info.Route.Label) + ", " + via + ")"
	}
	return " (" + via + ")"
}

// driverName names the driver of a call: its label, name and id, such as
// "files" (Filesystem, id "filesystem"), or "Filesystem" (id "filesystem") for a
// driver used without a label.
func driverName(info mcs.CallInfo) string {
	d := info.Driver
	id := ""
	if d.ID != "" {
		id = "id " + strconv.Quote(d.ID)
	}
	switch {
	case info.Label != "" && d.Name != "" && id != "":
		return strconv.Quote(info.Label) + " (" + d.Name + ", " + id + ")"
	case info.Label != "" && (d.Name != "" || id != ""):
		return strconv.Quote(info.Label) + " (" + d.Name + id + ")"
	case info.Label != "":
		return strconv.Quote(info.Label)
	case d.Name != "" && id != "":
		return strconv.Quote(d.Name) + " (" + id + ")"
	case d.Name != "":
		return strconv.Quote(d.Name)
	case id != "":
		return "with " + id
	}
	return "(unnamed)"
}

// first returns the heading, the first page and the question line.
func (q *question) first() string {
	if len(q.pages) == 0 {
		return q.head + q.ask()
	}
	return q.head + q.page()
}

// next returns the next page and the question line, or a notice that everything
// was shown.
func (q *question) next() string {
	if q.shown >= len(q.pages) {
		return "(that was all of the arguments)\n" + q.ask()
	}
	return q.page()
}

func (q *question) page() string {
	p := q.pages[q.shown]
	q.shown++
	head := ""
	if len(q.pages) > 1 {
		head = fmt.Sprintf("--- page %d of %d ---\n", q.shown, len(q.pages))
	}
	return head + p + "\n" + q.ask()
}

func (q *question) ask() string {
	if left := len(q.pages) - q.shown; left > 0 {
		return fmt.Sprintf("Allow it? (%d of %d pages not shown yet) y (yes), n (no), a (always allow this tool), m (more): ", left, len(q.pages))
	}
	return "Allow it? y (yes), n (no), a (always allow this tool): "
}

func (q *question) reask() string {
	if len(q.pages)-q.shown > 0 {
		return "Please answer y (yes), n (no), a (always allow this tool) or m (more): "
	}
	return "Please answer y (yes), n (no) or a (always allow this tool): "
}

// paginate splits s into pages of at most PageLines lines and PageBytes bytes; a
// line longer than a page is split on a UTF-8 boundary. Nothing is dropped:
// joining the pages with newlines (where a line ended) gives s back.
func paginate(s string) []string {
	if len(s) <= PageBytes && strings.Count(s, "\n") < PageLines {
		return []string{s}
	}
	var pages []string
	var cur strings.Builder
	lines := 0
	flush := func() {
		pages = append(pages, strings.TrimSuffix(cur.String(), "\n"))
		cur.Reset()
		lines = 0
	}
	for line := range strings.Lines(s) {
		for len(line) > 0 {
			room := PageBytes - cur.Len()
			if room <= 0 || lines >= PageLines {
				flush()
				room = PageBytes
			}
			piece := line
			if len(piece) > room {
				piece = textcut.Prefix(line, room)
				if piece == "" { // room is less than one character
					flush()
					continue
				}
			}
			cur.WriteString(piece)
			line = line[len(piece):]
			if strings.HasSuffix(piece, "\n") {
				lines++
			} else if len(line) > 0 {
				flush() // the page is full in the middle of a line
			}
		}
	}
	if cur.Len() > 0 {
		flush()
	}
	return pages
}

// showArgs renders args in full as indented JSON with every character that could
// control a terminal escaped.
func showArgs(args map[string]any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(display(args, 0)); err != nil { // not expected: display returns JSON values
		return strconv.Quote(fmt.Sprint(args))
	}
	return escapeTerminal(strings.TrimSuffix(buf.String(), "\n"))
}

// display returns a copy of v for display, made of JSON values only. Values of
// other Go types (map[string]string, []string, structs, []byte) are shown the way
// encoding/json encodes them; a value JSON cannot represent (NaN, a channel) is
// shown as fmt prints it. Nothing is cut, except nesting deeper than the clone
// limit, which a tool could not have received either.
func display(v any, depth int) any {
	if depth > clone.MaxDepth {
		return "… (nested too deep to show)"
	}
	switch x := v.(type) {
	case nil, bool, string:
		return v
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = display(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = display(e, depth+1)
		}
		return out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // show integers exactly
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return string(b)
	}
	if _, again := decoded.(json.Number); again {
		return decoded
	}
	return display(decoded, depth+1)
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
