package mcs

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// StreamBuffer reassembles one streamed model response in its provider's own shape
// and carries the display decisions of the drivers that look at it.
//
// Use one buffer per streamed response. After each Add, ask every driver
// (ProcessStream), then call Text for what may be shown now. Call Finish when a
// stream without an end signal of its own (plain strings) ends. A StreamBuffer is
// safe for concurrent use, but a round (Add, the drivers, Text) is meant to run in
// that order.
type StreamBuffer struct {
	mu         sync.Mutex
	strategies []ExtractionStrategy
	format     ExtractionStrategy
	asm        Assembler
	isText     bool

	content  appendBuffer
	finished bool
	held     bool   // a driver held display this round
	display  int    // display cursor: bytes of content already returned by Text
	consumed []span // call spans executed by some driver, hidden from display
	states   map[any]*streamState
}

type span struct{ start, end int }

// appendBuffer accumulates text and hands it out as a string without copying. It
// doubles its capacity, so a stream of N bytes allocates less than 2N in total, and
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

func (a *appendBuffer) Len() int { return len(a.buf) }

// streamState is one driver's decoding state on a buffer.
type streamState struct {
	dec        TextDecoder
	nativeDone bool // the native batch ran
	finishDone bool // the text decoder was finished
	malformed  int  // malformed calls already handled
	lastName   string
	lastOwned  bool
}

// NewStreamBuffer returns a buffer that recognises the format of the first chunk
// among strategies; with none, among all built-in formats (with the default prompt
// strategy for text).
func NewStreamBuffer(strategies ...ExtractionStrategy) *StreamBuffer {
	if len(strategies) == 0 {
		strategies = DefaultExtractionStrategies(nil)
	}
	return &StreamBuffer{strategies: strategies}
}

// Add folds one provider chunk into the buffer. chunk is a string (model text, or
// the JSON of a provider chunk once a native format is recognised), JSON bytes, or a
// decoded map; any other value is marshalled to JSON. The wire format is recognised
// on the first chunk. Add starts a new display round: holds of the previous round
// end, and calls consumed in it are dropped from display. Chunks after the end of
// the message are ignored.
func (b *StreamBuffer) Add(chunk any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = false
	if b.finished {
		return
	}
	if s, ok := chunk.(string); ok && b.isText {
		b.content.WriteString(s) // the common case, without conversions
		return
	}
	c := b.normalizeChunk(chunk)
	if b.asm == nil {
		b.recognise(c)
	}
	if b.isText {
		b.content.WriteString(textOf(chunk, c))
		return
	}
	if s, ok := c.(string); ok && strings.HasPrefix(strings.TrimSpace(s), "data:") && strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "data:")) == "[DONE]" {
		b.finished = true
		return
	}
	if s, ok := c.(string); ok && strings.TrimSpace(s) == "[DONE]" {
		b.finished = true
		return
	}
	b.content.WriteString(b.asm.Add(c))
	if b.asm.Done() {
		b.finished = true
	}
}

// textOf returns the text of a chunk in a text stream: the original string or
// bytes, even when they happened to hold a JSON object.
func textOf(orig, normalized any) string {
	switch v := orig.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case json.RawMessage:
		return string(v)
	}
	if s, ok := normalized.(string); ok {
		return s
	}
	if raw, err := json.Marshal(normalized); err == nil {
		return string(raw)
	}
	return ""
}

// normalizeChunk turns bytes and foreign values into a string or a map.
func (b *StreamBuffer) normalizeChunk(chunk any) any {
	switch v := chunk.(type) {
	case string:
		if b.isText {
			return v
		}
		if m, ok := decodeChunkJSON([]byte(v)); ok && (b.asm != nil || looksLikeProviderChunk(m)) {
			return m
		}
		return v
	case map[string]any:
		return v
	case []byte:
		if m, ok := decodeChunkJSON(v); ok && !b.isText && (b.asm != nil || looksLikeProviderChunk(m)) {
			return m
		}
		return string(v)
	case json.RawMessage:
		if m, ok := decodeChunkJSON(v); ok && !b.isText && (b.asm != nil || looksLikeProviderChunk(m)) {
			return m
		}
		return string(v)
	case nil:
		return ""
	}
	raw, err := json.Marshal(chunk)
	if err != nil {
		return ""
	}
	if m, ok := decodeChunkJSON(raw); ok {
		return m
	}
	return ""
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

// decodeChunkJSON decodes a JSON object, tolerating a server-sent-events "data:"
// prefix.
func decodeChunkJSON(p []byte) (map[string]any, bool) {
	t := bytes.TrimSpace(p)
	t = bytes.TrimSpace(bytes.TrimPrefix(t, []byte("data:")))
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(t, &m) != nil {
		return nil, false
	}
	return m, true
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

// Finish marks the end of the stream. Use it for streams without an end signal of
// their own (plain strings) and when a stream broke off; held calls are then
// released by the next ProcessStream.
func (b *StreamBuffer) Finish() {
	b.mu.Lock()
	b.finished = true
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
// calls a driver executed is never returned.
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
	var out strings.Builder
	cur := b.display
	for _, sp := range b.consumed {
		if sp.end <= cur {
			continue
		}
		if sp.start >= end {
			break
		}
		if sp.start > cur {
			if out.Len() == 0 && sp.start >= end {
				break
			}
			out.WriteString(all[cur:sp.start])
		}
		cur = max(cur, sp.end)
	}
	b.display = end
	b.pruneConsumed()
	if out.Len() == 0 {
		if cur >= end {
			return ""
		}
		return all[cur:end]
	}
	if cur < end {
		out.WriteString(all[cur:end])
	}
	return out.String()
}

// pruneConsumed drops spans that lie wholly before the display cursor.
func (b *StreamBuffer) pruneConsumed() {
	i := 0
	for i < len(b.consumed) && b.consumed[i].end <= b.display {
		i++
	}
	if i > 0 {
		b.consumed = append(b.consumed[:0], b.consumed[i:]...)
	}
}

func (b *StreamBuffer) consume(s span) {
	for _, c := range b.consumed {
		if c == s {
			return
		}
	}
	b.consumed = append(b.consumed, s)
	sort.Slice(b.consumed, func(i, j int) bool { return b.consumed[i].start < b.consumed[j].start })
}

func (b *StreamBuffer) state(key any, ps PromptStrategy) *streamState {
	if b.states == nil {
		b.states = map[any]*streamState{}
	}
	st := b.states[key]
	if st == nil {
		st = &streamState{dec: ps.NewDecoder()}
		b.states[key] = st
	}
	return st
}

// NewStreamBuffer returns a buffer that recognises the formats of the driver's
// extraction strategies.
func (d *BaseDriver) NewStreamBuffer() *StreamBuffer {
	return NewStreamBuffer(d.strategies...)
}

// ProcessStream makes the driver's decision on the buffer's current state, once per
// chunk:
//
//   - Execute: a text call the driver owns is complete (its closing brace, or the
//     closing fence around it, arrived): it runs at once through the middleware
//     chain and the Response reports it. Native calls run as one batch when the
//     provider signals the end of the message.
//   - Hold: a call is forming whose tool name is not known yet or belongs to this
//     driver: CallPending is set and Text returns nothing this round.
//   - Flow: plain text, or a call known to be foreign: the zero Response.
//
// At the end of the stream nothing stays held: a malformed owned call and a native
// call whose arguments never completed are released as failed calls with a retry
// prompt. The buffer may be shared by several drivers; each keeps its own decoding
// state in it. Safe for concurrent use.
func (d *BaseDriver) ProcessStream(ctx context.Context, buf *StreamBuffer) Response {
	if buf == nil {
		return Response{}
	}
	buf.mu.Lock()
	if buf.asm == nil {
		buf.mu.Unlock()
		return Response{}
	}
	st := buf.state(d, d.ps)
	text := buf.content.String()
	finished := buf.finished
	var calls []ToolCall
	var strategy ExtractionStrategy
	var reply Reply
	hold := false
	nativeForming := false
	if !buf.isText {
		forming := buf.asm.Forming()
		nativeForming = len(forming) > 0
		if !finished {
			for _, name := range forming {
				if name == "" || d.cachedOwns(ctx, st, name) {
					hold = true
					break
				}
			}
		} else if !st.nativeDone {
			st.nativeDone = true
			reply = NewReply(buf.asm.Message())
			for _, s := range d.strategies {
				if _, isText := s.(textFormat); isText {
					continue
				}
				if s.Match(reply) {
					strategy = s
					calls = d.owned(ctx, s.Extract(reply))
					break
				}
			}
		}
	}
	// Text calls: decoded incrementally from all text so far.
	var textCalls []ToolCall
	if finished {
		if !st.finishDone {
			st.finishDone = true
			textCalls = st.dec.Finish(text)
		}
	} else {
		textCalls = st.dec.Scan(text)
	}
	if nativeForming {
		textCalls = nil // a message with native calls is never parsed as text
	}
	var ownedText []ToolCall
	for _, c := range textCalls {
		if d.cachedOwns(ctx, st, c.Name) {
			ownedText = append(ownedText, c)
			buf.consume(span{c.Start, c.End})
		}
	}
	var malformed []ToolCall
	if !nativeForming {
		all := st.dec.Malformed()
		for i := st.malformed; i < len(all); i++ {
			if !d.cachedOwns(ctx, st, all[i].Name) {
				continue
			}
			if !finished {
				hold = true // released at the end of the stream
				break
			}
			malformed = append(malformed, all[i])
			buf.consume(span{all[i].Start, all[i].End})
		}
		if finished {
			st.malformed = len(all)
		}
		if !finished && !hold {
			if _, name, ok := st.dec.Pending(); ok && (name == "" || d.cachedOwns(ctx, st, name)) {
				hold = true
			}
		}
	}
	if hold {
		buf.held = true
	}
	buf.mu.Unlock()

	var resp Response
	switch {
	case len(calls) > 0:
		resp = d.run(ctx, strategy, reply, calls)
		if len(ownedText) > 0 { // text calls in a native message without native calls of ours
			extra := d.run(ctx, textFormat{ps: d.ps}, Reply{Text: text}, ownedText)
			resp = mergeResponses(resp, extra)
		}
	case len(ownedText) > 0 || len(malformed) > 0:
		all := append(ownedText, malformed...)
		sort.SliceStable(all, func(i, j int) bool { return all[i].Start < all[j].Start })
		end := all[len(all)-1].End
		for i := range all {
			if all[i].Err != nil && all[i].Arguments == nil {
				all[i].Arguments = map[string]any{}
			}
		}
		resp = d.run(ctx, textFormat{ps: d.ps}, Reply{Text: text[:min(end, len(text))]}, all)
	}
	resp.CallPending = hold
	return resp
}

func mergeResponses(a, b Response) Response {
	a.CallExecuted = a.CallExecuted || b.CallExecuted
	a.CallFailed = a.CallFailed || b.CallFailed
	if a.RetryPrompt == "" {
		a.RetryPrompt = b.RetryPrompt
	}
	a.Messages = append(a.Messages, b.Messages...)
	a.Calls = append(a.Calls, b.Calls...)
	return a
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
