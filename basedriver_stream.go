package mcs

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// The stream side of BaseDriver. It uses only the exported protocol of
// StreamBuffer (View, Hold, Claim, MarkExecuted, CallNames, Message and
// StreamState), as a third-party streaming driver would.

// streamState is one driver's decoding state on a buffer. Its mutex serialises the
// driver's rounds on the buffer; the buffer's own lock is not held meanwhile.
type streamState struct {
	mu         sync.Mutex
	decInit    bool           // dec was created (or the driver has no text format)
	dec        guardedDecoder // off when the driver has no text format
	nativeDone bool           // the native batch ran
	finishDone bool           // the text decoder was finished
	malformed  int            // malformed calls before this index are handled
	forming    int            // native calls before this index are known to be foreign
	ownedForms bool           // an owned native call is forming: held until the message ends
	lastName   string         // one-entry cache of ownsName
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
	var p streamPlan
	b.decide(ctx, buf, &p)
	var resp Response
	switch {
	case len(p.native) > 0:
		resp = b.run(ctx, p.nativeFormat, p.nativeReply, p.native, p.before)
		resp.Format = safeFormat(p.nativeFormat)
		buf.MarkExecuted(p.native)
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

// decide updates the driver's decoding state on buf and plans the round, using
// only the buffer's exported protocol. It runs user code (tool listings, the
// decoder) under the driver's own state lock, never under the buffer's.
func (b *BaseDriver) decide(ctx context.Context, buf *StreamBuffer, plan *streamPlan) {
	st := StreamState[streamState](buf, b)
	st.mu.Lock()
	defer st.mu.Unlock()
	v := buf.View()
	if v.Format == nil {
		return
	}
	if !st.decInit {
		st.decInit = true
		st.dec.off = true
		if b.text != nil {
			st.dec = newGuardedDecoder(b.text.ps)
		}
	}

	nativeForming := false
	if v.Native {
		nativeForming = b.planNative(ctx, buf, st, &v, plan)
	}
	var found []ToolCall
	if !st.dec.off && !nativeForming {
		found = b.planText(ctx, st, &v, plan)
	} else if !st.dec.off {
		b.scanText(st, &v, false, &decoded{}) // keep the decoder current; a native message is not parsed as text
	}
	if st.unavail != nil && !st.reported {
		st.reported = true
		plan.unavailable = st.unavail
	}
	if v.Finished && !st.foreignOut && !plan.hold {
		st.foreignOut = true
		switch {
		case st.nativeFmt != "":
			plan.foreign, plan.format = st.nativeForeign, st.nativeFmt
		case len(st.foreign) > 0 && b.text != nil:
			plan.foreign, plan.format = st.foreign, b.text.Format()
		}
		st.foreign, st.nativeForeign = nil, nil
	}

	if len(found) > 0 {
		if claimed, history := buf.Claim(found); len(claimed) > 0 {
			plan.text, plan.textReply = claimed, Output{Text: history}
		}
	}
	if plan.hold {
		buf.Hold(v.Round)
	}
	plan.before = st.ran
	st.ran += len(plan.native) + len(plan.text)
}

// planNative plans the native calls: held while an owned one forms, run as one batch
// at the end of the message. It reports whether native calls have started.
func (b *BaseDriver) planNative(ctx context.Context, buf *StreamBuffer, st *streamState, v *StreamView, plan *streamPlan) bool {
	var forming []string
	total := 0
	if !st.ownedForms {
		forming, total = buf.CallNames(st.forming)
	} else {
		total = 1
	}
	switch {
	case !v.Finished:
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
		plan.nativeReply = NewOutput(buf.Message())
		plan.nativeFormat, plan.native, st.nativeForeign = b.nativeCalls(ctx, st, plan.nativeReply)
		if len(plan.native) > 0 || len(st.nativeForeign) > 0 {
			st.nativeFmt = safeFormat(plan.nativeFormat)
		}
		if !v.Ended {
			for i := range plan.native {
				plan.native[i].Err = fmt.Errorf("%w: the stream ended before the call to %q was complete", ErrMalformedCall, plan.native[i].Name)
			}
		}
	}
	return total > 0
}

// scanText advances the decoder over the text, in one guarded step: Scan while
// the stream runs, Finish once at its end; with query set it also reports the
// malformed calls so far and, while the stream runs, the region that may still
// become a call. A decoder that panicked is off for the rest of the stream.
func (b *BaseDriver) scanText(st *streamState, v *StreamView, query bool, r *decoded) {
	switch {
	case !v.Finished:
		st.dec.step(v.Text, false, query, r)
	case !st.finishDone:
		st.finishDone = true
		st.dec.step(v.Text, true, query, r)
	case query:
		st.dec.query(true, r)
	}
}

// planText decodes the text so far and returns the owned calls found, in order;
// the buffer's Claim later drops those another driver took in an earlier round.
// It sets plan.hold while an owned call may be forming.
func (b *BaseDriver) planText(ctx context.Context, st *streamState, v *StreamView, plan *streamPlan) (owned []ToolCall) {
	var r decoded
	b.scanText(st, v, true, &r)
	for _, c := range r.calls {
		c.Index = st.textCalls
		st.textCalls++
		if b.cachedOwns(ctx, st, c.Name) {
			owned = append(owned, c)
		} else if c.Name != "" && st.lastName == c.Name {
			// The lookup succeeded (a failed one is not cached): foreign.
			st.foreign = append(st.foreign, c)
		}
	}
	if st.dec.off {
		return owned
	}
	// Calls a decoder reports only through Malformed (the ones that never closed)
	// are released at the end of the stream; until then they hold display.
	all := r.malformed
	sorted := true
	for ; st.malformed < len(all); st.malformed++ {
		c := all[st.malformed]
		if !b.cachedOwns(ctx, st, c.Name) {
			if v.Finished && c.Name != "" && st.lastName == c.Name {
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
		if !v.Finished {
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
	if !v.Finished && !plan.hold {
		if r.pending && (r.pendName == "" || b.cachedOwns(ctx, st, r.pendName)) {
			plan.hold = true
		}
	}
	return owned
}

// nativeCalls finds the native format that matches out and returns it with the
// owned and the foreign calls, each with its Index. The formats are guarded: one
// that panics in Match does not match, one that panics in Extract gives no calls.
func (b *BaseDriver) nativeCalls(ctx context.Context, st *streamState, out Output) (WireFormat, []ToolCall, []ToolCall) {
	for _, f := range b.streaming {
		g := f.(*guardedFormat)
		if g.text || !g.Match(out) {
			continue
		}
		calls := g.Extract(out)
		owned, foreign, err := b.owned(ctx, calls)
		if err != nil && st.unavail == nil {
			st.unavail = err
		}
		return f, owned, foreign
	}
	return nil, nil, nil
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
