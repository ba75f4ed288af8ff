package mcs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// StreamBuffer reassembles one streamed model response in its provider's own shape
// and carries the display decisions of the drivers that look at it.
//
// Use one buffer per streamed response. Each round is: Add one chunk, ask every
// driver (ProcessStream), then call Text for what may be shown now. Call Finish when
// the stream ends (required for plain strings, which have no end signal of their
// own, and for a stream that broke off), ask every driver once more and call Text a
// last time. A StreamBuffer is safe for concurrent use, but a round is meant to run
// in that order.
//
// No user code (a format, an assembler, a tool listing, a decoder) runs under the
// lock that Text, Content, Finished and Format take: a driver whose first listing is
// slow (a specification fetched over HTTP) delays only its own ProcessStream, never
// the display.
type StreamBuffer struct {
	// asmMu serialises the use of the assembler and the recognition of the format
	// (format code); mu guards the fields below and is never held while user code
	// runs. asmMu is taken before mu, never the other way.
	asmMu sync.Mutex
	mu    sync.Mutex

	formats []StreamingFormat
	format  StreamingFormat
	asm     Assembler
	isText  bool

	// undecided holds the data-less chunks that came before the format was known.
	undecided strings.Builder

	content  appendBuffer
	finished bool // no more chunks: the provider's end signal, or Finish
	ended    bool // the provider signalled the end of the message
	round    int  // incremented by Add and Finish
	held     bool // a driver held display this round
	display  int  // display cursor: bytes of content already returned by Text
	histFrom int  // end of the text already reported in some Response's history

	// consumed are the spans of text calls some driver ran, sorted by start. Spans
	// before live lie wholly before the display cursor.
	consumed []span
	live     int
	states   map[*BaseDriver]*streamState

	// ranNative are the native calls some driver ran, in the round ranRound; from
	// the next Add on they are in dropNative, and Message leaves them out.
	ranNative  []ToolCall
	ranRound   int
	dropNative []ToolCall
}

// span is a region of content taken by a call, and the round it was taken in.
type span struct{ start, end, round int }

// appendBuffer accumulates text and hands it out as a string without copying. It
// doubles its capacity, so a stream of N bytes allocates less than 4N in total, and
// never changes bytes already written, so strings handed out stay valid.
type appendBuffer struct{ buf []byte }

func (a *appendBuffer) WriteString(s string) {
	if len(a.buf)+len(s) > cap(a.buf) {
		grown := make([]byte, len(a.buf), max(2*cap(a.buf), len(a.buf)+len(s), 512))
		copy(grown, a.buf)
		a.buf = grown
	}
	a.buf = append(a.buf, s...)
}

func (a *appendBuffer) String() string {
	if len(a.buf) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(a.buf), len(a.buf))
}

// streamState is one driver's decoding state on a buffer. Its mutex serialises the
// driver's rounds on the buffer; the buffer's own lock is not held meanwhile.
type streamState struct {
	mu         sync.Mutex
	decInit    bool        // dec was created (or the driver has no text format)
	dec        TextDecoder // nil when the driver has no text format, or it panicked
	nativeDone bool        // the native batch ran
	finishDone bool        // the text decoder was finished
	malformed  int         // malformed calls before this index are handled
	forming    int         // native calls before this index are known to be foreign
	ownedForms bool        // an owned native call is forming: held until the message ends
	lastName   string      // one-entry cache of ownsName
	lastOwned  bool
	ran        int   // owned calls run or failed so far: the per-reply limit counts them
	unavail    error // the first failure to tell whether a call is owned
	reported   bool  // unavail was reported in a Response
	textCalls  int   // text calls seen so far: the next one's Index
	// The calls of tools the driver does not publish, reported once the output is
	// finished: those of the native message when it held calls (as a whole
	// output's are), else those of the text.
	foreign       []ToolCall // found in the text
	nativeForeign []ToolCall // found in the native message
	nativeFmt     string     // the format of a native message that held calls; "" for none
	foreignOut    bool       // the foreign calls were reported in a Response
}

// NewStreamBuffer returns a buffer that recognises the format of the first chunk
// among formats, asked in order; with none, among all built-in formats (with the
// default prompt strategy for text). Nil entries are ignored.
func NewStreamBuffer(formats ...StreamingFormat) *StreamBuffer {
	if slices.Contains(formats, nil) {
		formats = slices.DeleteFunc(slices.Clone(formats), func(f StreamingFormat) bool { return f == nil })
	}
	if len(formats) == 0 {
		formats = defaultStreaming(nil)
	}
	return &StreamBuffer{formats: formats}
}

// Add folds one provider chunk into the buffer. chunk is a string (model text, or
// the JSON of a provider chunk, optionally as a server-sent event with a "data:"
// line), JSON bytes, or a decoded map; any other value is marshalled to JSON. The
// wire format is recognised on the first chunk that carries data: an object in a
// known provider shape selects that format, anything else makes a plain-text
// stream. Chunks before it that carry no data (nil, white space, a server-sent
// event line without data such as "event: message_start" or a ": keep-alive"
// comment) wait: they are the start of the text if the stream turns out to be
// text, and are dropped otherwise. Add starts a new display round: holds of the
// previous round end, and calls consumed before it can no longer be claimed by
// another driver. Chunks after the end of the message are ignored.
func (b *StreamBuffer) Add(chunk any) {
	b.asmMu.Lock()
	defer b.asmMu.Unlock()
	b.mu.Lock()
	b.held = false
	b.round++
	if len(b.ranNative) > 0 && b.ranRound < b.round {
		// an executed batch leaves the message: a client that appends Message and
		// the Response's history does not send the calls twice
		b.dropNative = append(b.dropNative, b.ranNative...)
		b.ranNative = nil
	}
	finished, isText, asm := b.finished, b.isText, b.asm
	if !finished && asm == nil {
		if s, ok := dataless(chunk); ok {
			b.undecided.WriteString(s)
			b.mu.Unlock()
			return
		}
	}
	b.mu.Unlock()
	switch {
	case finished:
		return
	case isText:
		b.appendText(textOf(chunk))
		return
	}
	c := normalizeChunk(chunk, asm != nil)
	if asm == nil {
		asm = b.recognise(c)
		b.mu.Lock()
		text := b.isText
		if text {
			b.content.WriteString(b.undecided.String())
			b.content.WriteString(textOf(chunk))
		}
		b.undecided.Reset()
		b.mu.Unlock()
		if text {
			return
		}
	}
	if s, ok := c.(string); ok {
		if t := strings.TrimSpace(s); t == "[DONE]" || sseData(t) == "[DONE]" {
			b.mu.Lock()
			b.finished, b.ended = true, true
			b.mu.Unlock()
			return
		}
	}
	text, done := safeAdd(asm, c)
	b.mu.Lock()
	b.content.WriteString(text)
	if done {
		b.finished, b.ended = true, true
	}
	b.mu.Unlock()
}

// safeAdd folds c into asm; a panic in the assembler is logged and the chunk is
// dropped.
func safeAdd(asm Assembler, c any) (text string, done bool) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("assembling a stream chunk", nil, v)
			text, done = "", false
		}
	}()
	text = asm.Add(c)
	return text, asm.Done()
}

func (b *StreamBuffer) appendText(s string) {
	b.mu.Lock()
	b.content.WriteString(s)
	b.mu.Unlock()
}

// textOf returns the text of a chunk in a text stream: the string or bytes as they
// are, even when they happen to hold a JSON object; any other value as JSON.
func textOf(chunk any) string {
	in := normalize(chunk)
	if in.obj != nil {
		if raw, err := json.Marshal(in.obj); err == nil {
			return string(raw)
		}
		return ""
	}
	return in.text
}

// dataless returns the text of a chunk that cannot tell the wire format: nil, a
// string or bytes that are blank or a server-sent event without a "data:" line.
func dataless(chunk any) (string, bool) {
	in := normalize(chunk)
	switch in.kind {
	case inputNil:
		return "", true
	case inputText, inputBytes:
	default:
		return "", false
	}
	for line := range strings.Lines(in.text) {
		if !sseMeta(strings.TrimRight(line, "\r\n")) {
			return "", false
		}
	}
	return in.text, true
}

// normalizeChunk turns a chunk into a string or a map. Text (a string or bytes) that
// holds a JSON object, possibly as a server-sent event, is decoded when the format
// is known (known) or when the object looks like a provider's chunk; the JSON of a
// foreign value is always decoded.
func normalizeChunk(chunk any, known bool) any {
	in := normalize(chunk)
	switch in.kind {
	case inputMap:
		return in.obj
	case inputNil:
		return ""
	case inputOther:
		if m, ok := decodeChunkJSON([]byte(in.text)); ok {
			return m
		}
		return in.text
	}
	if m, ok := decodeChunkJSON([]byte(in.text)); ok && (known || looksLikeProviderChunk(m)) {
		return m
	}
	return in.text
}

// looksLikeProviderChunk reports whether a JSON object that arrived as text is a
// provider's stream chunk rather than model text that happens to be JSON (a text
// call such as {"tool": ...}): providers' chunks carry an envelope key.
func looksLikeProviderChunk(m map[string]any) bool {
	for _, k := range [...]string{"choices", "object", "type", "candidates", "done", "message"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// decodeChunkJSON decodes a JSON object, tolerating a server-sent event around it
// ("event:" and "id:" lines, and a "data:" line that carries the object).
func decodeChunkJSON(p []byte) (map[string]any, bool) {
	t := bytes.TrimSpace(p)
	if len(t) == 0 {
		return nil, false
	}
	if t[0] != '{' {
		if d := sseData(string(t)); d != "" {
			t = []byte(d)
		}
	}
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, false
	}
	var m map[string]any
	if unmarshalJSON(t, &m) != nil {
		return nil, false
	}
	return m, true
}

// sseData returns the payload of the "data:" lines of a server-sent event, joined
// by newlines, or "" when s is not an event.
func sseData(s string) string {
	var data []string
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimSpace(line[len("data:"):]))
		case sseMeta(line):
		default:
			return ""
		}
	}
	return strings.Join(data, "\n")
}

// sseMeta reports whether line, without its line break, is a line of a server-sent
// event that carries no data: blank, a comment, or an event, id or retry field.
func sseMeta(line string) bool {
	return strings.TrimSpace(line) == "" || strings.HasPrefix(line, "event:") || strings.HasPrefix(line, "id:") ||
		strings.HasPrefix(line, "retry:") || strings.HasPrefix(line, ":")
}

// recognise picks the format of the first chunk that carries data and installs
// its assembler. It runs format code: call it with asmMu held and mu not held.
func (b *StreamBuffer) recognise(c any) Assembler {
	format, asm, isText := b.pick(c)
	b.mu.Lock()
	b.format, b.asm, b.isText = format, asm, isText
	b.mu.Unlock()
	return asm
}

func (b *StreamBuffer) pick(c any) (format StreamingFormat, asm Assembler, isText bool) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("recognising the format of a stream", format, v)
			format, asm, isText = TextFormat(nil), &textAssembler{}, true
		}
	}()
	if m, ok := c.(map[string]any); ok {
		for _, s := range b.formats {
			if _, isText := s.(textFormat); isText {
				continue
			}
			format = s
			if s.MatchChunk(m) {
				return s, s.NewAssembler(), false
			}
		}
		// an unknown object: treat it as text
	}
	for _, s := range b.formats {
		format = s
		if s.MatchChunk("") {
			_, isText = s.(textFormat)
			return s, s.NewAssembler(), isText
		}
	}
	return TextFormat(nil), &textAssembler{}, true
}

// Finish marks the end of the stream and starts its final round: ask every driver
// once more, then call Text. Use it for streams without an end signal of their own
// (plain strings) and when a stream broke off. In that final round nothing is held:
// a malformed owned text call is released as a failed call, and native calls of a
// stream that broke off before the provider's end signal fail without running.
func (b *StreamBuffer) Finish() {
	b.asmMu.Lock()
	defer b.asmMu.Unlock()
	b.mu.Lock()
	undecided := b.asm == nil && b.undecided.Len() > 0
	b.mu.Unlock()
	if undecided {
		// only data-less chunks came: they were the text of a plain-text stream
		b.recognise("")
	}
	b.mu.Lock()
	if undecided {
		if b.isText {
			b.content.WriteString(b.undecided.String())
		}
		b.undecided.Reset()
	}
	b.finished = true
	b.held = false
	b.round++
	b.mu.Unlock()
}

// Finished reports whether the provider signalled the end of the message or Finish
// was called.
func (b *StreamBuffer) Finished() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.finished
}

// Content returns all text accumulated so far, calls included.
func (b *StreamBuffer) Content() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.content.String()
}

// Message returns the reassembled native message, in the provider's own shape; for
// text, {"role":"assistant","content": text}.
//
// Native calls a driver executed are left out from the Add after the round that ran
// them on: their history is in that driver's Response.
func (b *StreamBuffer) Message() map[string]any {
	b.asmMu.Lock()
	defer b.asmMu.Unlock()
	b.mu.Lock()
	asm, isText, drop := b.asm, b.isText, b.dropNative
	if asm == nil || isText {
		defer b.mu.Unlock()
		return map[string]any{"role": "assistant", "content": b.content.String()}
	}
	b.mu.Unlock()
	msg := safeMessage(asm)
	if len(drop) > 0 {
		msg = dropCalls(msg, drop)
	}
	return msg
}

// safeMessage returns asm.Message(); a panic is logged and gives an empty message.
func safeMessage(asm Assembler) (msg map[string]any) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("reassembling a streamed message", nil, v)
			msg = map[string]any{"role": "assistant", "content": nil}
		}
	}()
	return asm.Message()
}

// Format returns the name of the recognised wire format, "" before the first chunk.
func (b *StreamBuffer) Format() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.format == nil {
		return ""
	}
	return b.format.Format()
}

// Text returns the text that may be displayed now and advances the display cursor
// past it. It is empty while any driver holds the buffer this round. The text of
// calls a driver executed (or released as failed) is never returned.
func (b *StreamBuffer) Text() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held {
		return ""
	}
	all := b.content.String()
	end := len(all)
	if b.display >= end {
		return ""
	}
	for b.live < len(b.consumed) && b.consumed[b.live].end <= b.display {
		b.live++
	}
	cur := b.display
	b.display = end
	var out []byte
	for _, sp := range b.consumed[b.live:] {
		if sp.start >= end {
			break
		}
		if sp.end <= cur {
			continue
		}
		if sp.start > cur {
			out = append(out, all[cur:sp.start]...)
		}
		cur = sp.end
	}
	if out == nil {
		return all[cur:end] // nothing cut out of the middle: no copy
	}
	out = append(out, all[cur:end]...)
	return string(out)
}

// consume records that a driver took the text in [start, end).
func (b *StreamBuffer) consume(start, end int) {
	n := len(b.consumed)
	i := n
	if n > 0 && b.consumed[n-1].start > start {
		i = sort.Search(n, func(i int) bool { return b.consumed[i].start > start })
	}
	for j := i - 1; j >= 0 && b.consumed[j].start == start; j-- {
		if b.consumed[j].end == end {
			return
		}
	}
	b.consumed = slices.Insert(b.consumed, i, span{start, end, b.round})
	if i < b.live {
		b.live = i
	}
}

// takenBefore reports whether a driver took [start, end) in an earlier round: the
// call is gone for every other driver.
func (b *StreamBuffer) takenBefore(start, end int) bool {
	i := sort.Search(len(b.consumed), func(i int) bool { return b.consumed[i].start >= start })
	for ; i < len(b.consumed) && b.consumed[i].start == start; i++ {
		if b.consumed[i].end == end && b.consumed[i].round < b.round {
			return true
		}
	}
	return false
}

// state returns d's state on the buffer; call it with mu held.
func (b *StreamBuffer) state(d *BaseDriver) *streamState {
	if b.states == nil {
		b.states = map[*BaseDriver]*streamState{}
	}
	st := b.states[d]
	if st == nil {
		st = &streamState{}
		b.states[d] = st
	}
	return st
}

// NewStreamBuffer returns a buffer that recognises the driver's streaming formats
// (see [WithFormats]), in their order.
func (b *BaseDriver) NewStreamBuffer() *StreamBuffer {
	return NewStreamBuffer(b.streaming...)
}

// ProcessStream makes the driver's decision on the buffer's current state, once per
// round:
//
//   - Execute: a text call the driver owns is complete (its closing brace, or the
//     closing fence around it, arrived): it runs at once through the middleware
//     chain and the Response reports it. Native calls run as one batch when the
//     provider signals the end of the message.
//   - Hold: a call is forming whose tool name is not settled yet (a later field
//     of the object could still name another tool) or belongs to this driver:
//     CallPending is set and Text returns nothing this round.
//   - Flow: plain text, or a call known to be foreign: no Calls (the foreign calls
//     are reported in Response.Foreign once the output is finished).
//
// A text call that names an owned tool but cannot run as written (not JSON even
// after repair, two tool names) is released as a failed call with a retry prompt as
// soon as its braces close, as ProcessLLMResponse reports it. In the round after
// the end of the stream nothing stays held: an owned text call that never closed is
// released as a failed call, and so is every owned native call of a stream that
// broke off (Finish before the provider's end signal) or whose arguments never
// arrived. Owned calls beyond the per-reply limit (WithMaxCalls, counted over the
// whole stream) fail without running. A lookup of the driver's tools that fails sets
// Response.Unavailable once. A panic in a format, an assembler or a decoder is
// logged (slog.Default); it never loses the native calls of the stream.
//
// The Messages of a Response have the shapes of ProcessLLMResponse. For text calls
// the assistant message holds the text from the end of the text already reported
// in an earlier Response of this buffer (by any driver) to the end of the last call
// run now, so that appending every Response's Messages repeats nothing; text after
// the last call is in no Response.
//
// The buffer may be shared by several drivers, each asked after every Add; each
// keeps its own decoding state in it, so a call one driver took is still there for
// the drivers asked after it in the same round, and gone from the next round on.
// The driver's text format is the first TextFormat among its formats; a driver
// without one runs no text calls. The foreign calls of the stream (Response.Foreign)
// are reported once, in the first round after the stream finished in which
// nothing is held. In a native stream, text calls in the
// message's text run as they complete until a native call starts; from then on the
// message is not parsed as text. Safe for concurrent use; no user code runs under
// the buffer's display lock.
func (b *BaseDriver) ProcessStream(ctx context.Context, buf *StreamBuffer) Response {
	if buf == nil {
		return Response{}
	}
	p := b.decide(ctx, buf)
	var resp Response
	switch {
	case len(p.native) > 0:
		resp = b.run(ctx, p.nativeFormat, p.nativeReply, p.native, p.before)
		resp.Format = safeFormat(p.nativeFormat)
		buf.ranBatch(p.native)
	case len(p.text) > 0:
		resp = b.run(ctx, *b.text, p.textReply, p.text, p.before)
		resp.Format = b.text.Format()
	case len(p.foreign) > 0:
		resp.Format = p.format
	}
	resp.Foreign = p.foreign
	resp.CallPending = p.hold
	resp.Unavailable = p.unavailable
	return resp
}

// ranBatch records native calls a driver ran, so that Message leaves them out from
// the next Add on.
func (b *StreamBuffer) ranBatch(calls []ToolCall) {
	b.mu.Lock()
	b.ranNative = append(b.ranNative, calls...)
	b.ranRound = b.round
	b.mu.Unlock()
}

// streamPlan is what ProcessStream decided for one round.
type streamPlan struct {
	hold         bool
	native       []ToolCall
	nativeFormat WireFormat
	nativeReply  Output
	text         []ToolCall
	textReply    Output
	foreign      []ToolCall // the stream's foreign calls, once it is finished
	format       string     // the format of the foreign calls
	before       int        // owned calls of the stream run before this round
	unavailable  error      // reported in this round's Response
}

// streamView is what decide reads from the buffer under its lock.
type streamView struct {
	text            string
	finished, ended bool
	isText          bool
	asm             Assembler
	round           int
}

// decide updates the driver's decoding state on buf and plans the round. It runs
// user code (tool listings, the assembler, the decoder) without the buffer's lock,
// under the driver's own state lock, and takes the buffer's lock only to read a
// view of it and to record what it took.
func (b *BaseDriver) decide(ctx context.Context, buf *StreamBuffer) streamPlan {
	buf.mu.Lock()
	if buf.asm == nil {
		buf.mu.Unlock()
		return streamPlan{}
	}
	st := buf.state(b)
	buf.mu.Unlock()

	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.decInit {
		st.decInit = true
		if b.text != nil {
			st.dec = newDecoder(b.text.ps)
		}
	}
	buf.mu.Lock()
	v := streamView{text: buf.content.String(), finished: buf.finished, ended: buf.ended,
		isText: buf.isText, asm: buf.asm, round: buf.round}
	buf.mu.Unlock()

	var plan streamPlan
	nativeForming := false
	if !v.isText {
		nativeForming = b.planNative(ctx, buf, st, v, &plan)
	}
	var found []ToolCall
	if st.dec != nil && !nativeForming {
		found = b.planText(ctx, st, v, &plan)
	} else if st.dec != nil {
		b.scanText(st, v) // keep the decoder current; a native message is not parsed as text
	}
	if st.unavail != nil && !st.reported {
		st.reported = true
		plan.unavailable = st.unavail
	}
	if v.finished && !st.foreignOut && !plan.hold {
		st.foreignOut = true
		switch {
		case st.nativeFmt != "":
			plan.foreign, plan.format = st.nativeForeign, st.nativeFmt
		case len(st.foreign) > 0 && b.text != nil:
			plan.foreign, plan.format = st.foreign, b.text.Format()
		}
		st.foreign, st.nativeForeign = nil, nil
	}

	buf.mu.Lock()
	defer buf.mu.Unlock()
	if len(found) > 0 {
		b.takeText(buf, v, found, &plan)
	}
	if plan.hold && buf.round == v.round {
		buf.held = true
	}
	plan.before = st.ran
	st.ran += len(plan.native) + len(plan.text)
	return plan
}

// planNative plans the native calls: held while an owned one forms, run as one batch
// at the end of the message. It reports whether native calls have started.
func (b *BaseDriver) planNative(ctx context.Context, buf *StreamBuffer, st *streamState, v streamView, plan *streamPlan) bool {
	buf.asmMu.Lock()
	var forming []string
	total := 0
	if !st.ownedForms {
		forming, total = safeForming(v.asm, st.forming)
	} else {
		total = 1
	}
	var msg map[string]any
	if v.finished && !st.nativeDone {
		msg = safeMessage(v.asm)
	}
	buf.asmMu.Unlock()
	switch {
	case !v.finished:
		// Names, once known, do not change: skip those already known to be foreign,
		// and once an owned call forms, hold to the end of the message without
		// looking again.
		if st.ownedForms {
			plan.hold = true
			break
		}
		for _, name := range forming {
			if name == "" {
				plan.hold = true
				break
			}
			if b.cachedOwns(ctx, st, name) {
				plan.hold, st.ownedForms = true, true
				break
			}
			st.forming++
		}
	case !st.nativeDone:
		st.nativeDone = true
		plan.nativeReply = NewOutput(msg)
		plan.nativeFormat, plan.native, st.nativeForeign = b.nativeCalls(ctx, st, plan.nativeReply)
		if len(plan.native) > 0 || len(st.nativeForeign) > 0 {
			st.nativeFmt = safeFormat(plan.nativeFormat)
		}
		if !v.ended {
			for i := range plan.native {
				plan.native[i].Err = fmt.Errorf("%w: the stream ended before the call to %q was complete", ErrMalformedCall, plan.native[i].Name)
			}
		}
	}
	return total > 0
}

// safeForming returns a copy of the names of asm.CallNames() from index from on, up
// to the first that is not known yet ("") included, and how many calls have
// started. The names before from are known already, and planNative holds at the
// first unknown name: copying them every round would make a stream of many calls
// quadratic. A panic is logged and gives none.
func safeForming(asm Assembler, from int) (names []string, total int) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("listing the native calls of a stream", nil, v)
			names, total = nil, 0
		}
	}()
	all := asm.CallNames()
	if from < len(all) {
		end := len(all)
		if i := slices.Index(all[from:], ""); i >= 0 {
			end = from + i + 1
		}
		names = slices.Clone(all[from:end])
	}
	return names, len(all)
}

// newDecoder returns ps.NewDecoder(); a panic is logged and gives nil.
func newDecoder(ps PromptStrategy) (dec TextDecoder) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("creating a text decoder", nil, v)
			dec = nil
		}
	}()
	return ps.NewDecoder()
}

// scanText advances the decoder over the text: Scan while the stream runs, Finish
// once at its end. A panic in the decoder is logged and disables it for the stream.
func (b *BaseDriver) scanText(st *streamState, v streamView) (found []ToolCall) {
	defer func() {
		if r := recover(); r != nil {
			logPanic("decoding streamed text", nil, r)
			st.dec, found = nil, nil
		}
	}()
	switch {
	case !v.finished:
		return st.dec.Scan(v.text)
	case !st.finishDone:
		st.finishDone = true
		return st.dec.Finish(v.text)
	}
	return nil
}

// planText decodes the text so far and returns the owned calls found, in order;
// takeText later drops those another driver took in an earlier round. It sets
// plan.hold while an owned call may be forming.
func (b *BaseDriver) planText(ctx context.Context, st *streamState, v streamView, plan *streamPlan) (owned []ToolCall) {
	found := b.scanText(st, v)
	for _, c := range found {
		c.Index = st.textCalls
		st.textCalls++
		if b.cachedOwns(ctx, st, c.Name) {
			owned = append(owned, c)
		} else if c.Name != "" && st.lastName == c.Name {
			// The lookup succeeded (a failed one is not cached): foreign.
			st.foreign = append(st.foreign, c)
		}
	}
	if st.dec == nil {
		return owned
	}
	defer func() {
		if r := recover(); r != nil {
			logPanic("decoding streamed text", nil, r)
			st.dec = nil
		}
	}()
	// Calls a decoder reports only through Malformed (the ones that never closed)
	// are released at the end of the stream; until then they hold display.
	all := st.dec.Malformed()
	sorted := true
	for ; st.malformed < len(all); st.malformed++ {
		c := all[st.malformed]
		if !b.cachedOwns(ctx, st, c.Name) {
			if v.finished && c.Name != "" && st.lastName == c.Name {
				// A foreign call that never closed: the client answers it too.
				if c.Arguments == nil {
					c.Arguments = map[string]any{}
				}
				c.Index = st.textCalls
				st.textCalls++
				st.foreign = append(st.foreign, c)
			}
			continue
		}
		if !v.finished {
			plan.hold = true
			break
		}
		if c.Arguments == nil {
			c.Arguments = map[string]any{}
		}
		if c.Err == nil {
			c.Err = fmt.Errorf("%w: the call to %q cannot be decoded", ErrMalformedCall, c.Name)
		}
		c.Index = st.textCalls
		st.textCalls++
		if len(owned) > 0 && owned[len(owned)-1].Start > c.Start {
			sorted = false
		}
		owned = append(owned, c)
	}
	if !sorted {
		sort.SliceStable(owned, func(i, j int) bool { return owned[i].Start < owned[j].Start })
	}
	if !v.finished && !plan.hold {
		if _, name, ok := st.dec.Pending(); ok && (name == "" || b.cachedOwns(ctx, st, name)) {
			plan.hold = true
		}
	}
	return owned
}

// takeText keeps the owned text calls no other driver took in an earlier round,
// records their spans as consumed and sets the text of the round's history. Call it
// with buf.mu held.
func (b *BaseDriver) takeText(buf *StreamBuffer, v streamView, found []ToolCall, plan *streamPlan) {
	owned := found[:0]
	for _, c := range found {
		if !buf.takenBefore(c.Start, c.End) {
			owned = append(owned, c)
		}
	}
	if len(owned) == 0 {
		return
	}
	end := 0
	for _, c := range owned {
		buf.consume(c.Start, c.End)
		end = max(end, c.End)
	}
	end = min(end, len(v.text))
	from := min(buf.histFrom, end)
	buf.histFrom = max(buf.histFrom, end)
	plan.text = owned
	plan.textReply = Output{Text: v.text[from:end]}
}

// nativeCalls finds the native format that matches out and returns it with the
// owned and the foreign calls, each with its Index. A panic in a format is logged,
// and the next format is asked.
func (b *BaseDriver) nativeCalls(ctx context.Context, st *streamState, out Output) (WireFormat, []ToolCall, []ToolCall) {
	for _, f := range b.formats {
		if _, isText := f.(textFormat); isText {
			continue
		}
		if _, streams := f.(StreamingFormat); !streams {
			continue
		}
		calls, ok := safeExtract(f, out)
		if !ok {
			continue
		}
		owned, foreign, err := b.owned(ctx, calls)
		if err != nil && st.unavail == nil {
			st.unavail = err
		}
		return f, owned, foreign
	}
	return nil, nil, nil
}

// safeExtract returns s's calls of reply when s matches it; a panic is logged and
// counts as no match.
func safeExtract(s WireFormat, reply Output) (calls []ToolCall, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			logPanic("extracting the calls of a streamed message", s, v)
			calls, ok = nil, false
		}
	}()
	if !s.Match(reply) {
		return nil, false
	}
	return extractIndexed(s, reply), true
}

// cachedOwns is ownsName with a one-entry cache per stream, so that a call that
// stays pending over many chunks costs one lookup. A failed lookup is remembered in
// st.unavail.
func (b *BaseDriver) cachedOwns(ctx context.Context, st *streamState, name string) bool {
	if name == "" {
		return false
	}
	if name == st.lastName {
		return st.lastOwned
	}
	owned, err := b.ownsName(ctx, name)
	if err != nil {
		if st.unavail == nil {
			st.unavail = err
		}
		return false // not cached: the next lookup may succeed
	}
	st.lastName, st.lastOwned = name, owned
	return owned
}
