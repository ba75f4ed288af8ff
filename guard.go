package mcs

// User code that a stream runs (a format, its assembler, a text decoder) is wrapped
// once, where it is installed: in NewStreamBuffer for the buffer's formats and
// their assemblers, in NewBaseDriver for the driver's native formats, and when a
// driver's decoder for a stream is created. Each method of a wrapper recovers a
// panic, logs it (slog.Default, with the stack) and returns its zero value, so the
// stream code around them needs no recover of its own.

// guardedFormat is a StreamingFormat whose methods never panic.
type guardedFormat struct {
	f    StreamingFormat
	text bool // f is a TextFormat: the plain-text stream
}

var _ StreamingFormat = (*guardedFormat)(nil)

// guardFormat wraps f; a format already guarded is returned as it is.
func guardFormat(f StreamingFormat) *guardedFormat {
	if g, ok := f.(*guardedFormat); ok {
		return g
	}
	_, text := f.(textFormat)
	return &guardedFormat{f: f, text: text}
}

// Format returns the format's name; "" after a panic.
func (g *guardedFormat) Format() string { return safeFormat(g.f) }

// Match reports whether out is in the format; false after a panic.
func (g *guardedFormat) Match(out Output) (ok bool) {
	defer g.recover("matching an output", func() { ok = false })
	return g.f.Match(out)
}

// Extract returns the calls of out, each with its Index; none after a panic.
func (g *guardedFormat) Extract(out Output) (calls []ToolCall) {
	defer g.recover("extracting the calls of a streamed message", func() { calls = nil })
	return extractIndexed(g.f, out)
}

// History returns the history entries of out; none after a panic.
func (g *guardedFormat) History(out Output, calls []CallRecord) (msgs []Message) {
	defer g.recover("writing the history of a streamed message", func() { msgs = nil })
	return g.f.History(out, calls)
}

// MatchChunk reports whether chunk starts a stream in the format; false after a
// panic.
func (g *guardedFormat) MatchChunk(chunk any) (ok bool) {
	defer g.recover("recognising the format of a stream", func() { ok = false })
	return g.f.MatchChunk(chunk)
}

// NewAssembler returns a guarded assembler; nil after a panic.
func (g *guardedFormat) NewAssembler() Assembler {
	switch a := g.newAssembler().(type) {
	case nil:
		return nil
	case *textAssembler:
		return a // the kernel's own, which no user code reaches
	default:
		return &guardedAssembler{a: a}
	}
}

// newAssembler returns the format's own assembler, not guarded; nil after a panic.
func (g *guardedFormat) newAssembler() (asm Assembler) {
	defer g.recover("creating an assembler", func() { asm = nil })
	return g.f.NewAssembler()
}

// recover is deferred by each method: on a panic it logs and calls zero, which
// sets the method's zero result.
func (g *guardedFormat) recover(doing string, zero func()) {
	if v := recover(); v != nil {
		logPanic(doing, g.f, v)
		zero()
	}
}

// guardedAssembler is an Assembler whose methods never panic.
type guardedAssembler struct{ a Assembler }

// Add folds chunk in; a panic drops the chunk.
func (g *guardedAssembler) Add(chunk any) (text string) {
	defer guard("assembling a stream chunk", func() { text = "" })
	return g.a.Add(chunk)
}

// Message returns the message so far; an empty assistant message after a panic.
func (g *guardedAssembler) Message() (msg Message) {
	defer guard("reassembling a streamed message", func() { msg = Message{"role": "assistant", "content": nil} })
	return g.a.Message()
}

// Done reports the end of the message; false after a panic.
func (g *guardedAssembler) Done() (done bool) {
	defer guard("assembling a stream chunk", func() { done = false })
	return g.a.Done()
}

// CallNames returns the names of the native calls started; none after a panic.
func (g *guardedAssembler) CallNames() (names []string) {
	defer guard("listing the native calls of a stream", func() { names = nil })
	return g.a.CallNames()
}

// guardedDecoder is a TextDecoder whose methods never panic. After a panic it is
// off: every method returns its zero value for the rest of the stream.
type guardedDecoder struct {
	d   TextDecoder
	off bool
}

// newGuardedDecoder returns ps.NewDecoder() guarded; a panic (or a nil decoder)
// gives a decoder that is off.
func newGuardedDecoder(ps PromptStrategy) (g guardedDecoder) {
	g.off = true
	defer guard("creating a text decoder", func() {})
	if d := ps.NewDecoder(); d != nil {
		g.d, g.off = d, false
	}
	return g
}

// decoded is what one round of a guarded decoder reports.
type decoded struct {
	calls     []ToolCall // completed in this round, in order
	malformed []ToolCall // every malformed call so far
	pendName  string     // the name of the region that may still become a call,
	pending   bool       // as TextDecoder.Pending reports them
}

// step advances the decoder over text as one stream round does, under one
// guard: Scan while the stream runs, or Finish (finish set) once it ended;
// then, with query set, Malformed and, while the stream runs, Pending. After a
// panic the decoder is off: the round reports the calls Scan or Finish
// returned before it, and nothing else.
func (g *guardedDecoder) step(text string, finish, query bool, r *decoded) {
	if g.off {
		return
	}
	defer guard("decoding streamed text", func() { g.off, *r = true, decoded{calls: r.calls} })
	if finish {
		r.calls = g.d.Finish(text)
	} else {
		r.calls = g.d.Scan(text)
	}
	if query {
		g.ask(finish, r)
	}
}

// query asks Malformed and Pending without scanning (the stream has nothing
// new to decode); nothing after a panic.
func (g *guardedDecoder) query(finished bool, r *decoded) {
	if g.off {
		return
	}
	defer guard("decoding streamed text", func() { g.off, *r = true, decoded{} })
	g.ask(finished, r)
}

// ask sets the malformed calls so far and, while the stream runs, the region
// that may still become a call; its callers guard it.
func (g *guardedDecoder) ask(finished bool, r *decoded) {
	r.malformed = g.d.Malformed()
	if !finished {
		_, r.pendName, r.pending = g.d.Pending()
	}
}

// guard is deferred by the methods of the wrappers: on a panic it logs and calls
// zero, which sets the method's zero result.
func guard(doing string, zero func()) {
	if v := recover(); v != nil {
		logPanic(doing, nil, v)
		zero()
	}
}
