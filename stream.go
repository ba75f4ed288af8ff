package mcs

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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
// the display. The formats are guarded when the buffer is made, and so is the
// assembler of the recognised one: a panic in them is logged (slog.Default) and
// gives the method's zero value. Drivers decide through the buffer's protocol:
// View, Hold, Claim, MarkExecuted, CallNames and [StreamState].
type StreamBuffer struct {
	// asmMu serialises the use of the assembler and the recognition of the format
	// (format code); mu guards the fields below and is never held while user code
	// runs. asmMu is taken before mu, never the other way.
	asmMu sync.Mutex
	mu    sync.Mutex

	formats []StreamingFormat // each a *guardedFormat
	format  *guardedFormat
	asm     Assembler // guarded: &guarded, or the kernel's own text assembler
	guarded guardedAssembler
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

	// consumed are the spans of text calls some driver claimed, sorted by start.
	// Spans before live lie wholly before the display cursor.
	consumed []span
	live     int
	// states are the drivers' own states on the buffer (see StreamState);
	// last is the entry asked for last (read without a lock), which a driver
	// asks for again after every Add. Entries never change once made.
	states map[any]*stateEntry
	last   atomic.Pointer[stateEntry]

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
		a.grow(len(s))
	}
	a.buf = append(a.buf, s...)
}

// grow makes room for n more bytes in a new array, leaving the old one as it is.
func (a *appendBuffer) grow(n int) {
	grown := make([]byte, len(a.buf), max(2*cap(a.buf), len(a.buf)+n, 512))
	copy(grown, a.buf)
	a.buf = grown
}

func (a *appendBuffer) String() string {
	if len(a.buf) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(a.buf), len(a.buf))
}

// NewStreamBuffer returns a buffer that recognises the format of the first chunk
// among formats, asked in order; with none, among all built-in formats (with the
// default prompt strategy for text). Nil entries are ignored.
func NewStreamBuffer(formats ...StreamingFormat) *StreamBuffer {
	return &StreamBuffer{formats: guardFormats(formats)}
}

// guardFormats returns formats without nil entries, each guarded; with none, the
// built-in formats. A list that is guarded already (a BaseDriver's) is used as it
// is.
func guardFormats(formats []StreamingFormat) []StreamingFormat {
	guarded := true
	for _, f := range formats {
		if _, ok := f.(*guardedFormat); !ok {
			guarded = false
			break
		}
	}
	if guarded && len(formats) > 0 {
		return formats
	}
	out := make([]StreamingFormat, 0, len(formats))
	for _, f := range formats {
		if f != nil {
			out = append(out, guardFormat(f))
		}
	}
	if len(out) == 0 {
		return defaultGuarded()
	}
	return out
}

// defaultGuarded is the built-in streaming chain, guarded.
var defaultGuarded = sync.OnceValue(func() []StreamingFormat {
	var out []StreamingFormat
	for _, f := range defaultStreaming(nil) {
		out = append(out, guardFormat(f))
	}
	return out
})

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
	if s, ok := chunk.(string); ok && b.addText(s) {
		return
	}
	b.add(chunk)
}

// add is Add on its general path: a chunk of a stream whose format is not
// known yet or is not plain text.
func (b *StreamBuffer) add(chunk any) {
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
	text := asm.Add(c)
	done := asm.Done()
	b.mu.Lock()
	b.content.WriteString(text)
	if done {
		b.finished, b.ended = true, true
	}
	b.mu.Unlock()
}

// AddString is Add(s) for a chunk held as a string, without boxing it in an
// interface first (as WriteString is to Write): the same outcome, and on a
// plain-text stream, the common case, no allocation.
func (b *StreamBuffer) AddString(s string) {
	if !b.addText(s) {
		b.add(s)
	}
}

// addText is Add for a text chunk of a plain-text stream, the common case: one
// lock, no assembler. It reports false, having done nothing, when the stream is
// not known to be text (or a driver marked calls executed, which the next Add
// must move), and Add takes its general path.
func (b *StreamBuffer) addText(s string) bool {
	b.mu.Lock()
	if !b.isText || len(b.ranNative) > 0 {
		b.mu.Unlock()
		return false
	}
	b.held = false
	b.round++
	if !b.finished {
		b.content.WriteString(s)
	}
	b.mu.Unlock()
	return true
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
// its assembler, guarded. It runs format code: call it with asmMu held and mu not
// held.
func (b *StreamBuffer) recognise(c any) Assembler {
	format, asm, isText := b.pick(c)
	if _, own := asm.(*textAssembler); !own {
		b.guarded.a = asm
		asm = &b.guarded
	}
	b.mu.Lock()
	b.format, b.asm, b.isText = format, asm, isText
	b.mu.Unlock()
	return asm
}

// pick returns the first format that matches c, with its assembler (not guarded
// yet). The formats are guarded: one that panics does not match, and one whose
// assembler cannot be made gives way to plain text.
func (b *StreamBuffer) pick(c any) (format *guardedFormat, asm Assembler, isText bool) {
	if m, ok := c.(map[string]any); ok {
		for _, f := range b.formats {
			g := f.(*guardedFormat)
			if !g.text && g.MatchChunk(m) {
				if asm := g.newAssembler(); asm != nil {
					return g, asm, false
				}
				return plainText()
			}
		}
		// an unknown object: treat it as text
	}
	for _, f := range b.formats {
		g := f.(*guardedFormat)
		if g.MatchChunk("") {
			if asm := g.newAssembler(); asm != nil {
				return g, asm, g.text
			}
			break
		}
	}
	return plainText()
}

// plainText is the format of a stream no format claims: text.
func plainText() (*guardedFormat, Assembler, bool) {
	return guardFormat(TextFormat(nil)), &textAssembler{}, true
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
	msg := asm.Message()
	if len(drop) > 0 {
		msg = dropCalls(msg, drop)
	}
	return msg
}

// Format returns the name of the recognised wire format, "" before the first chunk.
func (b *StreamBuffer) Format() string {
	b.mu.Lock()
	f := b.format
	b.mu.Unlock()
	if f == nil {
		return ""
	}
	return f.Format()
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

// consume records that a driver took the text in [start, end); call it with mu
// held.
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
// call is gone for every other driver. Call it with mu held.
func (b *StreamBuffer) takenBefore(start, end int) bool {
	i := sort.Search(len(b.consumed), func(i int) bool { return b.consumed[i].start >= start })
	for ; i < len(b.consumed) && b.consumed[i].start == start; i++ {
		if b.consumed[i].end == end && b.consumed[i].round < b.round {
			return true
		}
	}
	return false
}

// The protocol of a streaming driver. A driver that implements
// [SupportsStreaming] decides, once per round, on what the buffer holds; these
// methods are all it needs, and all that BaseDriver uses. In each round a driver
// reads a [StreamView], advances its own decoding state (see [StreamState]) and
// then, as it decides:
//
//   - holds display while a call it may own is forming ([StreamBuffer.Hold]);
//   - claims the text calls it runs ([StreamBuffer.Claim]): a call another driver
//     claimed in an earlier round is gone, one claimed in this round is still
//     there for the drivers asked after it, and the text of claimed calls is never
//     displayed;
//   - marks the native calls it runs as executed ([StreamBuffer.MarkExecuted]), so
//     that Message leaves them out from the next Add on.
//
// No method of the protocol runs user code under the buffer's display lock, and
// all are safe for concurrent use.

// StreamView is a snapshot of a [StreamBuffer], as [StreamBuffer.View] returns it.
type StreamView struct {
	// Round is the display round the snapshot belongs to: Add and Finish each
	// start a new one. Pass it to Hold.
	Round int
	// Format is the recognised wire format; nil until the first chunk that carries
	// data. Its methods, and those of its assemblers, never panic: a panic is
	// logged and gives the method's zero value.
	Format StreamingFormat
	// Native reports a stream of provider chunks, whose native calls CallNames and
	// Message tell; false for plain text and before the format is known.
	Native bool
	// Text is all text so far, calls included (as Content returns it). Offsets of
	// text calls are byte offsets into it; a later view's Text extends it.
	Text string
	// Finished reports that no more chunks come: the provider's end signal, or
	// Finish. The round of a finished view is the stream's last chance to decide:
	// nothing should stay held.
	Finished bool
	// Ended reports that the provider signalled the end of the message; a stream
	// that is Finished but not Ended broke off.
	Ended bool
}

// View returns a snapshot of the buffer's current state.
func (b *StreamBuffer) View() StreamView {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := StreamView{Round: b.round, Native: b.asm != nil && !b.isText, Text: b.content.String(),
		Finished: b.finished, Ended: b.ended}
	if b.format != nil {
		v.Format = b.format
	}
	return v
}

// Hold holds display for the round of a view: Text returns nothing until the next
// Add or Finish. It reports whether the hold took; it does not when the buffer has
// moved on to a later round (the next round asks every driver again).
func (b *StreamBuffer) Hold(round int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.round != round {
		return false
	}
	b.held = true
	return true
}

// Claim takes the text calls of calls (by their Start and End offsets) for the
// caller, who runs them: a call whose region another driver claimed in an earlier
// round is refused, every other one is recorded so that Text never shows its text.
// It returns the calls claimed, in order, reusing the backing array of calls, and
// the text their history answers: from the end of the text that an earlier claim
// on this buffer (by any driver) covered to the end of the last call claimed now,
// so that appending every Response's messages repeats nothing. With nothing
// claimed, history is "".
func (b *StreamBuffer) Claim(calls []ToolCall) (claimed []ToolCall, history string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	claimed = calls[:0]
	for _, c := range calls {
		if !b.takenBefore(c.Start, c.End) {
			claimed = append(claimed, c)
		}
	}
	if len(claimed) == 0 {
		return nil, ""
	}
	text := b.content.String()
	end := 0
	for _, c := range claimed {
		b.consume(c.Start, c.End)
		end = max(end, c.End)
	}
	end = min(end, len(text))
	from := min(b.histFrom, end)
	b.histFrom = max(b.histFrom, end)
	return claimed, text[from:end]
}

// MarkExecuted records native calls (by ID and Name) that the caller ran: from the
// next Add on, Message leaves them out, so that a client that appends Message and
// the Response's history does not send them twice.
func (b *StreamBuffer) MarkExecuted(calls []ToolCall) {
	if len(calls) == 0 {
		return
	}
	b.mu.Lock()
	b.ranNative = append(b.ranNative, calls...)
	b.ranRound = b.round
	b.mu.Unlock()
}

// CallNames returns the tool names of the native calls that have started, from
// index from on, up to and including the first name not known yet (""), and how
// many have started in all. Names, once known, never change, so a driver that has
// judged the first from names asks only for the rest: a stream of many calls stays
// linear. The slice is the caller's. A text stream has none.
func (b *StreamBuffer) CallNames(from int) (names []string, total int) {
	b.asmMu.Lock()
	defer b.asmMu.Unlock()
	b.mu.Lock()
	asm, isText := b.asm, b.isText
	b.mu.Unlock()
	if asm == nil || isText {
		return nil, 0
	}
	all := asm.CallNames()
	if from >= 0 && from < len(all) {
		end := len(all)
		if i := slices.Index(all[from:], ""); i >= 0 {
			end = from + i + 1
		}
		names = slices.Clone(all[from:end])
	}
	return names, len(all)
}

// stateKey keys the states of StreamState by driver and by type, for a driver
// that keeps states of more than one type: the first is keyed by the driver alone
// (a pointer-shaped key costs no allocation), the others by a stateKey.
type stateKey[T any] struct{ key any }

// StreamState returns the state of type T that the driver identified by key keeps
// on buf, created (as a zero T) on first use; the same key and T give the same
// pointer for the life of the buffer. key must be comparable: use the driver
// itself, as [net/http.ResponseController] is used with the ResponseWriter. The state
// is the driver's: the buffer never reads it, and a driver that is asked
// concurrently on one buffer guards it with a mutex of its own.
func StreamState[T any](buf *StreamBuffer, key any) *T {
	if e := buf.last.Load(); e != nil && e.key == key {
		if st, ok := e.st.(*T); ok {
			return st
		}
	}
	buf.mu.Lock()
	defer buf.mu.Unlock()
	e := stateOf[T](buf, key)
	buf.last.Store(e)
	return e.st.(*T)
}

// stateEntry is one state of StreamState: the driver's key and its *T.
type stateEntry struct{ key, st any }

// stateOf looks the state of key and T up in buf.states, making it when
// missing; buf.mu must be held.
func stateOf[T any](buf *StreamBuffer, key any) *stateEntry {
	var k any = key
	if e, ok := buf.states[k]; ok {
		if _, ok := e.st.(*T); ok {
			return e
		}
		k = stateKey[T]{key}
		if e, ok := buf.states[k]; ok {
			return e
		}
	}
	if buf.states == nil {
		buf.states = map[any]*stateEntry{}
	}
	box := new(stateBox[T]) // the entry and the state in one allocation
	box.e = stateEntry{key: key, st: &box.st}
	buf.states[k] = &box.e
	return &box.e
}

// stateBox holds a state and its entry.
type stateBox[T any] struct {
	e  stateEntry
	st T
}
