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
type StreamBuffer struct {
	mu         sync.Mutex
	strategies []ExtractionStrategy
	format     ExtractionStrategy
	asm        Assembler
	isText     bool

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

// streamState is one driver's decoding state on a buffer.
type streamState struct {
	dec        TextDecoder // nil when the driver has no text format
	nativeDone bool        // the native batch ran
	finishDone bool        // the text decoder was finished
	malformed  int         // malformed calls before this index are handled
	forming    int         // native calls before this index are known to be foreign
	lastName   string      // one-entry cache of ownsName
	lastOwned  bool
}

// NewStreamBuffer returns a buffer that recognises the format of the first chunk
// among strategies; with none, among all built-in formats (with the default prompt
// strategy for text). Nil entries are ignored.
func NewStreamBuffer(strategies ...ExtractionStrategy) *StreamBuffer {
	if slices.Contains(strategies, nil) {
		strategies = slices.DeleteFunc(slices.Clone(strategies), func(s ExtractionStrategy) bool { return s == nil })
	}
	if len(strategies) == 0 {
		strategies = DefaultExtractionStrategies(nil)
	}
	return &StreamBuffer{strategies: strategies}
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
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = false
	b.round++
	if b.finished {
		return
	}
	if b.isText {
		b.content.WriteString(textOf(chunk))
		return
	}
	if b.asm == nil {
		if s, ok := dataless(chunk); ok {
			b.undecided.WriteString(s)
			return
		}
	}
	c := b.normalizeChunk(chunk)
	if b.asm == nil {
		b.recognise(c)
		if b.isText {
			b.content.WriteString(b.undecided.String())
			b.content.WriteString(textOf(chunk))
		}
		b.undecided.Reset()
		if b.isText {
			return
		}
	}
	if s, ok := c.(string); ok {
		if t := strings.TrimSpace(s); t == "[DONE]" || sseData(t) == "[DONE]" {
			b.finished, b.ended = true, true
			return
		}
	}
	b.content.WriteString(b.asm.Add(c))
	if b.asm.Done() {
		b.finished, b.ended = true, true
	}
}

// textOf returns the text of a chunk in a text stream: the string or bytes as they
// are, even when they happen to hold a JSON object; any other value as JSON.
func textOf(chunk any) string {
	switch v := chunk.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case json.RawMessage:
		return string(v)
	case nil:
		return ""
	}
	if raw, err := json.Marshal(chunk); err == nil {
		return string(raw)
	}
	return ""
}

// dataless returns the text of a chunk that cannot tell the wire format: nil, a
// string or bytes that are blank or a server-sent event without a "data:" line.
func dataless(chunk any) (string, bool) {
	var s string
	switch v := chunk.(type) {
	case nil:
		return "", true
	case string:
		s = v
	case []byte:
		s = string(v)
	case json.RawMessage:
		s = string(v)
	default:
		return "", false
	}
	for line := range strings.Lines(s) {
		if !sseMeta(strings.TrimRight(line, "\r\n")) {
			return "", false
		}
	}
	return s, true
}

// normalizeChunk turns bytes and foreign values into a string or a map.
func (b *StreamBuffer) normalizeChunk(chunk any) any {
	var raw []byte
	switch v := chunk.(type) {
	case map[string]any:
		return v
	case nil:
		return ""
	case string:
		if m, ok := decodeChunkJSON([]byte(v)); ok && (b.asm != nil || looksLikeProviderChunk(m)) {
			return m
		}
		return v
	case []byte:
		raw = v
	case json.RawMessage:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(chunk); err != nil {
			return ""
		}
		if m, ok := decodeChunkJSON(raw); ok {
			return m
		}
		return string(raw)
	}
	if m, ok := decodeChunkJSON(raw); ok && (b.asm != nil || looksLikeProviderChunk(m)) {
		return m
	}
	return string(raw)
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
	if json.Unmarshal(t, &m) != nil {
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

func (b *StreamBuffer) recognise(c any) {
	if m, ok := c.(map[string]any); ok {
		for _, s := range b.strategies {
			if _, isText := s.(textFormat); isText {
				continue
			}
			if s.MatchChunk(m) {
				b.format, b.asm = s, s.NewAssembler()
				return
			}
		}
		// an unknown object: treat it as text
	}
	for _, s := range b.strategies {
		if s.MatchChunk("") {
			b.format, b.asm = s, s.NewAssembler()
			_, b.isText = s.(textFormat)
			return
		}
	}
	b.format, b.asm, b.isText = TextFormat(nil), &textAssembler{}, true
}

// Finish marks the end of the stream and starts its final round: ask every driver
// once more, then call Text. Use it for streams without an end signal of their own
// (plain strings) and when a stream broke off. In that final round nothing is held:
// a malformed owned text call is released as a failed call, and native calls of a
// stream that broke off before the provider's end signal fail without running.
func (b *StreamBuffer) Finish() {
	b.mu.Lock()
	if b.asm == nil && b.undecided.Len() > 0 {
		// only data-less chunks came: they were the text of a plain-text stream
		b.recognise("")
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
func (b *StreamBuffer) Message() map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.asm == nil || b.isText {
		return map[string]any{"role": "assistant", "content": b.content.String()}
	}
	return b.asm.Message()
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

func (b *StreamBuffer) state(d *BaseDriver) *streamState {
	if b.states == nil {
		b.states = map[*BaseDriver]*streamState{}
	}
	st := b.states[d]
	if st == nil {
		st = &streamState{}
		if d.text != nil {
			st.dec = d.text.ps.NewDecoder()
		}
		b.states[d] = st
	}
	return st
}

// NewStreamBuffer returns a buffer that recognises the formats of the driver's
// extraction strategies.
func (d *BaseDriver) NewStreamBuffer() *StreamBuffer {
	return NewStreamBuffer(d.strategies...)
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
//   - Flow: plain text, or a call known to be foreign: the zero Response.
//
// In the round after the end of the stream nothing stays held: a malformed owned
// text call is released as a failed call with a retry prompt, and so is every owned
// native call of a stream that broke off (Finish before the provider's end signal).
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
// The driver's text format is the TextFormat among its extraction strategies; a
// driver without one runs no text calls. In a native stream, text calls in the
// message's text run as they complete until a native call starts; from then on the
// message is not parsed as text. Safe for concurrent use.
func (d *BaseDriver) ProcessStream(ctx context.Context, buf *StreamBuffer) Response {
	if buf == nil {
		return Response{}
	}
	p := d.decide(ctx, buf)
	var resp Response
	switch {
	case len(p.native) > 0:
		resp = d.run(ctx, p.nativeFormat, p.nativeReply, p.native)
	case len(p.text) > 0:
		resp = d.run(ctx, d.text, p.textReply, p.text)
	}
	resp.CallPending = p.hold
	return resp
}

// streamPlan is what ProcessStream decided under the buffer's lock.
type streamPlan struct {
	hold         bool
	native       []ToolCall
	nativeFormat ExtractionStrategy
	nativeReply  Reply
	text         []ToolCall
	textReply    Reply
}

// decide updates the driver's decoding state on buf and plans the round. A panic in
// a user's strategy, decoder or tool listing leaves the round empty.
func (d *BaseDriver) decide(ctx context.Context, buf *StreamBuffer) (plan streamPlan) {
	buf.mu.Lock()
	defer buf.mu.Unlock()
	defer func() {
		if recover() != nil {
			plan = streamPlan{}
		}
	}()
	if buf.asm == nil {
		return streamPlan{}
	}
	st := buf.state(d)
	text := buf.content.String()
	finished := buf.finished
	hold := false

	// Native calls: held while forming, run as one batch at the end.
	var native []ToolCall
	var nativeFormat ExtractionStrategy
	var nativeReply Reply
	nativeForming := false
	if !buf.isText {
		forming := buf.asm.Forming()
		nativeForming = len(forming) > 0
		switch {
		case !finished:
			// Names, once known, do not change: skip those already known to be foreign.
			for ; st.forming < len(forming); st.forming++ {
				if name := forming[st.forming]; name == "" || d.cachedOwns(ctx, st, name) {
					hold = true
					break
				}
			}
		case !st.nativeDone:
			st.nativeDone = true
			nativeReply = NewReply(buf.asm.Message())
			nativeFormat, native = d.nativeCalls(ctx, nativeReply)
			if !buf.ended {
				for i := range native {
					native[i].Err = fmt.Errorf("%w: the stream ended before the call to %q was complete", ErrMalformedCall, native[i].Name)
				}
			}
		}
	}

	// Text calls: decoded incrementally from all text so far. A message with native
	// calls is never parsed as text.
	var owned []ToolCall
	if st.dec != nil {
		var found []ToolCall
		switch {
		case !finished:
			found = st.dec.Scan(text)
		case !st.finishDone:
			st.finishDone = true
			found = st.dec.Finish(text)
		}
		if !nativeForming {
			for _, c := range found {
				if d.cachedOwns(ctx, st, c.Name) && !buf.takenBefore(c.Start, c.End) {
					owned = append(owned, c)
				}
			}
			// Malformed owned calls hold display until the end of the stream.
			all := st.dec.Malformed()
			sorted := true
			for ; st.malformed < len(all); st.malformed++ {
				c := all[st.malformed]
				if !d.cachedOwns(ctx, st, c.Name) || buf.takenBefore(c.Start, c.End) {
					continue
				}
				if !finished {
					hold = true
					break
				}
				if c.Arguments == nil {
					c.Arguments = map[string]any{}
				}
				if len(owned) > 0 && owned[len(owned)-1].Start > c.Start {
					sorted = false
				}
				owned = append(owned, c)
			}
			if !sorted {
				sort.SliceStable(owned, func(i, j int) bool { return owned[i].Start < owned[j].Start })
			}
			if !finished && !hold {
				if _, name, ok := st.dec.Pending(); ok && (name == "" || d.cachedOwns(ctx, st, name)) {
					hold = true
				}
			}
		}
	}
	var textReply Reply
	if len(owned) > 0 {
		end := 0
		for _, c := range owned {
			buf.consume(c.Start, c.End)
			end = max(end, c.End)
		}
		end = min(end, len(text))
		from := min(buf.histFrom, end)
		buf.histFrom = max(buf.histFrom, end)
		textReply = Reply{Text: text[from:end]}
	}
	if hold {
		buf.held = true
	}
	return streamPlan{hold: hold, native: native, nativeFormat: nativeFormat, nativeReply: nativeReply, text: owned, textReply: textReply}
}

// nativeCalls finds the native strategy that matches reply and returns it with the
// owned calls.
func (d *BaseDriver) nativeCalls(ctx context.Context, reply Reply) (ExtractionStrategy, []ToolCall) {
	for _, s := range d.strategies {
		if _, isText := s.(textFormat); isText {
			continue
		}
		if s.Match(reply) {
			return s, d.owned(ctx, s.Extract(reply))
		}
	}
	return nil, nil
}

// cachedOwns is ownsName with a one-entry cache per stream, so that a call that
// stays pending over many chunks costs one lookup.
func (d *BaseDriver) cachedOwns(ctx context.Context, st *streamState, name string) bool {
	if name == "" {
		return false
	}
	if name == st.lastName {
		return st.lastOwned
	}
	st.lastName, st.lastOwned = name, d.ownsName(ctx, name)
	return st.lastOwned
}
