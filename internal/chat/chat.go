// Package chat is the terminal chat of the mcs command: a read-eval-print loop
// over one driver and one model that streams the answer, shows every tool call
// on one line, keeps the history of the session and understands a few commands.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/textcut"
	"github.com/mcs-go/mcs/runner"
)

// Config configures a chat session.
type Config struct {
	Driver mcs.Driver   // the tools; several drivers go behind an orchestrator
	Model  runner.Model // the model
	// In is read one byte at a time and only while the chat waits for a line, so
	// that a consent prompt of the permission middleware can share it.
	In io.Reader
	// Out receives the chat. Make it a *Terminal shared with the consent prompt
	// (permission.Prompt(in, term)) so that a question starts on a line of its own.
	Out io.Writer
	// Native sends the tools natively (runner.WithNativeTools).
	Native bool
	// NoStream makes non-streaming requests; the answer is printed when complete.
	NoStream bool
	// MaxRounds is the runner's round limit per question; 0 keeps its default.
	MaxRounds int
	// Endpoint is named when the model cannot be reached; "" asks the model
	// (a Model with an Endpoint() string method, as the adapters of this module).
	Endpoint string
	// BaseURLHint says how to point the chat elsewhere, such as
	// "--base-url URL or OPENAI_BASE_URL"; "" says "--base-url URL".
	BaseURLHint string
	// RoundHooks run around every model request (runner.WithRoundHook), in order:
	// the place for a "chat {model}" span under which the tool calls' spans nest.
	RoundHooks []runner.RoundHook
	// Options are further runner options, after those above (such as
	// runner.WithApprovals for a stack whose calls wait for approval).
	Options []runner.Option
}

// Commands the chat understands.
const help = "commands: /tools lists the tools, /reset starts a new conversation, /quit (or Ctrl-D) ends the chat"

// maxLine is the longest input line the chat accepts, in bytes.
const maxLine = 64 << 10

// Run runs the chat until In ends (Ctrl-D), /quit, or ctx ends (Ctrl-C); each of
// these is a clean end and returns nil. Every line is a question to the model,
// with the history of the session, or a command (/tools, /reset, /quit, /help).
// A failed question is reported on Out and the chat goes on; when the model
// cannot be reached the report names the endpoint tried and how to point the
// chat elsewhere. Run returns an error only when Out cannot be written.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Driver == nil || cfg.Model == nil || cfg.In == nil || cfg.Out == nil {
		return errors.New("chat: Driver, Model, In and Out must be set")
	}
	term, ok := cfg.Out.(*Terminal)
	if !ok {
		term = NewTerminal(cfg.Out)
	}
	c := &session{cfg: cfg, out: &lineWriter{t: term}}
	opts := []runner.Option{
		runner.WithNativeTools(cfg.Native),
		runner.WithMaxRounds(cfg.MaxRounds),
		runner.WithOnCall(c.showCall),
	}
	for _, h := range cfg.RoundHooks {
		opts = append(opts, runner.WithRoundHook(h))
	}
	if !cfg.NoStream {
		opts = append(opts, runner.WithStream(func(s string) { c.out.text(s) }))
	}
	opts = append(opts, cfg.Options...)
	c.r = runner.New(cfg.Driver, cfg.Model, opts...)
	c.out.printf("mcs chat with %s (%s)\n", cfg.Model.Name(), help)
	for {
		c.out.printf("> ")
		if c.out.err != nil {
			return c.out.err
		}
		line, err := readLine(ctx, cfg.In)
		if err != nil {
			c.out.newline()
			if errors.Is(err, errTooLong) {
				c.out.printf("the line is longer than %d bytes; it was not sent\n", maxLine)
				continue
			}
			return c.out.err // end of input or ctx: a clean end
		}
		c.out.t.lineEnded() // the terminal echoed the newline of the input
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case line == "/quit" || line == "/exit":
			return c.out.err
		case line == "/reset":
			c.history = nil
			c.out.printf("(a new conversation starts)\n")
		case line == "/tools":
			c.tools(ctx)
		case line == "/help":
			c.out.printf("%s\n", help)
		case strings.HasPrefix(line, "/"):
			c.out.printf("unknown command %s; %s\n", clean(line), help)
		default:
			c.ask(ctx, line)
		}
		if ctx.Err() != nil {
			c.out.newline()
			return c.out.err
		}
		if c.out.err != nil {
			return c.out.err
		}
	}
}

type session struct {
	cfg     Config
	r       *runner.Runner
	out     *lineWriter
	history []map[string]any
}

func (c *session) ask(ctx context.Context, line string) {
	res, err := c.r.Run(ctx, c.history, line)
	if err == nil {
		c.history = res.History
		if c.cfg.NoStream {
			c.out.text(res.Text)
		}
		c.out.newline()
		return
	}
	c.out.newline()
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, runner.ErrMaxRounds) {
		c.history = res.History // a valid conversation: the next question goes on from it
	}
	c.out.printf("error: %s\n", clean(err.Error()))
	if errors.Is(err, runner.ErrUnreachable) {
		endpoint := c.cfg.Endpoint
		if e, ok := c.cfg.Model.(interface{ Endpoint() string }); ok && endpoint == "" {
			endpoint = e.Endpoint()
		}
		hint := c.cfg.BaseURLHint
		if hint == "" {
			hint = "--base-url URL"
		}
		c.out.printf("The model could not be reached at %s. Start the server there, or point the chat elsewhere with %s.\n", clean(endpoint), hint)
	}
}

// showCall prints "→ name {args}" and "← N bytes" or "← error: ...".
func (c *session) showCall(rec mcs.CallRecord) {
	args, err := json.Marshal(rec.Arguments)
	if err != nil || rec.Arguments == nil {
		args = []byte("{}")
	}
	c.out.newline()
	c.out.printf("→ %s %s\n", clean(rec.Name), textcut.Prefix(string(args), 500))
	if rec.Err != nil {
		c.out.printf("← error: %s\n", clean(textcut.Prefix(rec.Err.Error(), 500)))
		return
	}
	if link, code := signInLink(rec.Result); link != "" {
		// The model is asked to pass the link on, but the user should not have to
		// rely on that: the terminal shows it as it is.
		if code != "" {
			c.out.printf("← sign-in needed: open %s and enter the code %s, then ask again\n", clean(link), clean(code))
		} else {
			c.out.printf("← sign-in needed: open %s, then ask again\n", clean(link))
		}
		return
	}
	c.out.printf("← %d bytes\n", len(mcs.ResultText(rec.Result)))
}

// signInLink returns the link and code of an auth challenge result.
func signInLink(res any) (link, code string) {
	var sig mcs.Signal
	switch s := res.(type) {
	case mcs.Signal:
		sig = s
	case *mcs.Signal:
		if s == nil {
			return "", ""
		}
		sig = *s
	default:
		return "", ""
	}
	if sig.Kind != mcs.CodeChallenge {
		return "", ""
	}
	link, _ = sig.Data["url"].(string)
	code, _ = sig.Data["code"].(string)
	return link, code
}

func (c *session) tools(ctx context.Context) {
	var tools []mcs.Tool
	if td, ok := c.cfg.Driver.(mcs.ToolDriver); ok {
		var err error
		if tools, err = td.ListTools(ctx); err != nil {
			c.out.printf("error: %s\n", clean(err.Error()))
			return
		}
	} else {
		c.out.printf("this driver does not list its tools\n")
		return
	}
	if len(tools) == 0 {
		c.out.printf("no tools\n")
	}
	for _, t := range tools {
		c.out.printf("  %s  %s\n", clean(t.Name), clean(textcut.Prefix(firstLine(t.Summary()), 100)))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// clean replaces control characters (terminal escapes among them) of hostile
// text by U+FFFD, keeping newlines and tabs.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

// Terminal is the chat's output. Give the same Terminal to whatever else writes
// to the terminal during a question (the consent prompt of the permission
// middleware): its Write first ends a line of model text left open, so a
// question never starts in the middle of an answer. Safe for concurrent use.
type Terminal struct {
	mu     sync.Mutex
	w      io.Writer
	midRow bool
}

// NewTerminal returns a Terminal writing to w. Run wraps a Config.Out that is not
// a *Terminal in one.
func NewTerminal(w io.Writer) *Terminal { return &Terminal{w: w} }

// Write writes p on a line of its own: after a newline when model text left the
// current line open.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.midRow && len(p) > 0 {
		if _, err := io.WriteString(t.w, "\n"); err != nil {
			return 0, err
		}
		t.midRow = false
	}
	n, err := t.w.Write(p)
	if n > 0 {
		t.midRow = p[n-1] != '\n'
	}
	return n, err
}

// LineEnded records that the cursor is at the start of a line, as after a
// terminal echoed the line end of typed input (the answer to a consent
// question), so that the next write does not add an empty line.
func (t *Terminal) LineEnded() { t.lineEnded() }

// lineEnded records that the cursor is at the start of a line.
func (t *Terminal) lineEnded() {
	t.mu.Lock()
	t.midRow = false
	t.mu.Unlock()
}

// lineWriter is the chat's own writing to a Terminal: it continues open lines
// and keeps the first write error.
type lineWriter struct {
	t   *Terminal
	err error
}

func (l *lineWriter) write(s string) {
	if l.err != nil || s == "" {
		return
	}
	l.t.mu.Lock()
	defer l.t.mu.Unlock()
	_, l.err = io.WriteString(l.t.w, s)
	l.t.midRow = !strings.HasSuffix(s, "\n")
}

func (l *lineWriter) printf(format string, a ...any) { l.write(fmt.Sprintf(format, a...)) }

// text writes model text, cleaned.
func (l *lineWriter) text(s string) { l.write(clean(s)) }

// newline ends the current line, if one is open.
func (l *lineWriter) newline() {
	l.t.mu.Lock()
	open := l.t.midRow
	l.t.mu.Unlock()
	if open {
		l.write("\n")
	}
}

var errTooLong = errors.New("line too long")

// readLine reads up to the next newline, one byte at a time so that nothing
// after it is consumed (a consent prompt reads the same input). It returns
// io.EOF at the end of input without a partial line, and ctx's error when ctx
// ends first; the read then still pending is left to finish on its own.
func readLine(ctx context.Context, in io.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var b []byte
		var one [1]byte
		long := false
		for empty := 0; ; {
			n, err := in.Read(one[:])
			if n == 1 {
				empty = 0
				if one[0] == '\n' {
					break
				}
				if len(b) < maxLine {
					b = append(b, one[0])
				} else {
					long = true
				}
			}
			if err != nil {
				if len(b) > 0 && errors.Is(err, io.EOF) {
					break // a last line without a newline
				}
				ch <- result{err: err}
				return
			}
			if n == 0 {
				if empty++; empty > 100 {
					ch <- result{err: io.ErrNoProgress}
					return
				}
			}
		}
		if long {
			ch <- result{err: errTooLong}
			return
		}
		ch <- result{line: strings.TrimSuffix(string(b), "\r")}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
