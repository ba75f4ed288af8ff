package mcstest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// The rules of TestWireFormat.
const (
	// RuleFormatName: Format returns the same non-empty name without white space
	// on every call.
	RuleFormatName = "format-name"
	// RuleMatch: Match recognises every sample's output.
	RuleMatch = "match"
	// RuleExtract: Extract gives the same calls on every call, each with a name
	// (or Err), arguments unless Err is set, and for text, offsets in order inside
	// the text; the calls are the sample's Calls when it names them.
	RuleExtract = "extract"
	// RuleOutputUnchanged: Match, Extract and History never modify the output.
	RuleOutputUnchanged = "output-unchanged"
	// RuleHistory: History answers calls with at least one message, leaves the
	// records as they were and gives messages that encode as JSON.
	RuleHistory = "history"
	// RuleStreamWhole: a streaming format recognises the first chunk of a stream
	// (MatchChunk), and the message its assembler builds from the sample's chunks
	// is in the format and holds the whole output's calls.
	RuleStreamWhole = "stream-whole"
	// RuleStreamResplit: every re-split of a text stream, and every encoding of a
	// provider stream's chunks (decoded objects, JSON text, JSON bytes, server-sent
	// events) through a StreamBuffer, gives the same message and calls.
	RuleStreamResplit = "stream-resplit"
	// RuleCallNames: an assembler's CallNames only grow, a name once known never
	// changes, and at the end they are the names of the message's calls.
	RuleCallNames = "call-names"
	// RuleAssembler: Done, once true, stays true, and the map Message returns is
	// the caller's: changing it does not change the next one.
	RuleAssembler = "assembler"
)

// Sample is one model output TestWireFormat checks a format against.
type Sample struct {
	// Output is the whole output, as ProcessLLMResponse accepts it: model text or
	// a decoded native message. It may be nil when Chunks is set.
	Output any
	// Chunks is the same output as the provider streams it, for a streaming
	// format: decoded chunk objects or their JSON text. For a format that takes
	// plain text (Match is true for Output, a string) leave it nil: the kit
	// streams Output's text, split every way.
	Chunks []any
	// Calls are the names of the calls in the output, in order; nil to leave
	// them unchecked.
	Calls []string
}

// TestWireFormat checks f against the rules of a wire format (the Rule constants
// of this file, RuleNoPanic and RuleConcurrent) on samples, and a streaming
// format's assembler on their streams. It returns nil, or an *Error that lists
// every rule broken.
func TestWireFormat(f mcs.WireFormat, samples ...Sample) error {
	r := newReport("WireFormat")
	if f == nil {
		r.fail(RuleFormatName, "the format is nil")
		return r.err()
	}
	var name string
	r.try("Format", func() {
		name = f.Format()
		if name == "" || strings.ContainsFunc(name, isSpace) || f.Format() != name {
			r.fail(RuleFormatName, "Format() = %q, then %q", name, f.Format())
		}
	})
	sf, streams := f.(mcs.StreamingFormat)
	for i, s := range samples {
		where := fmt.Sprintf("sample %d", i)
		var whole []call
		hasWhole := s.Output != nil
		if hasWhole {
			whole = checkWhole(r, f, where, s)
		}
		if !streams {
			continue
		}
		if text, ok := s.Output.(string); ok && s.Chunks == nil {
			if matchesText(sf, text) {
				checkTextStream(r, sf, where, text, whole)
			}
		} else if s.Chunks != nil {
			checkChunkStream(r, sf, name, where, s, whole, hasWhole)
		}
	}
	checkFormatConcurrent(r, f, samples)
	return r.err()
}

// matchesText reports whether f takes text as a whole output: a format that
// does is streamed as plain text.
func matchesText(f mcs.WireFormat, text string) (ok bool) {
	defer func() { _ = recover() }() // Match's panic is reported by checkWhole
	return f.Match(mcs.NewOutput(text))
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// call is a ToolCall as the rules compare it: Err by its presence, no Index.
type call struct {
	ID, Name   string
	Args       map[string]any
	Err        bool
	Start, End int
}

func calls(cs []mcs.ToolCall) []call {
	out := make([]call, len(cs))
	for i, c := range cs {
		out[i] = call{c.ID, c.Name, c.Arguments, c.Err != nil, c.Start, c.End}
	}
	return out
}

// sameCalls and sameStrings compare lists, nil and empty alike.
func sameCalls(a, b []call) bool { return len(a) == 0 && len(b) == 0 || equal(a, b) }

func sameStrings(a, b []string) bool { return len(a) == 0 && len(b) == 0 || equal(a, b) }

func callNames(cs []call) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// checkWhole checks Match, Extract and History on the sample's whole output and
// returns its calls.
func checkWhole(r *report, f mcs.WireFormat, where string, s Sample) (whole []call) {
	out := mcs.NewOutput(s.Output)
	before := mcs.CloneValue(map[string]any(out.Message))
	r.try("Match", func() {
		if !f.Match(out) {
			r.fail(RuleMatch, "%s: Match is false for %s", where, oneLine(fmt.Sprint(s.Output)))
		}
	})
	var extracted []mcs.ToolCall
	r.try("Extract", func() {
		extracted = f.Extract(out)
		whole = calls(extracted)
		if again := calls(f.Extract(out)); !equal(whole, again) {
			r.fail(RuleExtract, "%s: Extract gave %v, then %v", where, whole, again)
		}
	})
	prev := 0
	for _, c := range extracted {
		switch {
		case c.Name == "" && c.Err == nil:
			r.fail(RuleExtract, "%s: a call without a name or an error: %+v", where, c)
		case c.Arguments == nil && c.Err == nil:
			r.fail(RuleExtract, "%s: the call to %q has nil arguments and no error", where, c.Name)
		}
		if out.Message == nil && (c.Start < prev || c.End <= c.Start || c.End > len(out.Text)) {
			r.fail(RuleExtract, "%s: the call to %q has the offsets [%d, %d) in a text of %d bytes after a call that ended at %d", where, c.Name, c.Start, c.End, len(out.Text), prev)
		}
		prev = c.End
	}
	if s.Calls != nil && !sameStrings(callNames(whole), s.Calls) {
		r.fail(RuleExtract, "%s: calls %q, want %q", where, callNames(whole), s.Calls)
	}
	records := make([]mcs.CallRecord, len(extracted))
	for i, c := range extracted {
		records[i] = mcs.CallRecord{ToolCall: c, Result: fmt.Sprintf("result %d", i), Err: c.Err}
	}
	kept := make([]mcs.CallRecord, len(records))
	for i, rec := range records {
		rec.Arguments = mcs.CloneArgs(rec.Arguments)
		kept[i] = rec
	}
	r.try("History", func() {
		msgs := f.History(out, records)
		if len(records) > 0 && len(msgs) == 0 {
			r.fail(RuleHistory, "%s: History answered %d calls with no message", where, len(records))
		}
		if !equal(records, kept) {
			r.fail(RuleHistory, "%s: History modified the records", where)
		}
		for _, m := range msgs {
			if _, err := json.Marshal(m); err != nil {
				r.fail(RuleHistory, "%s: a history message does not encode as JSON: %v", where, err)
			}
		}
	})
	if out.Message != nil && !equal(map[string]any(out.Message), before) {
		r.fail(RuleOutputUnchanged, "%s: the output was modified", where)
	}
	return whole
}

// assembled is what an assembler built from one stream.
type assembled struct {
	msg     mcs.Message
	matched bool   // the format matches msg
	calls   []call // msg's calls when it matches
	names   []string
}

// assemble feeds chunks to a new assembler of f, checking the assembler's rules,
// and returns what it built; ok is false when it panicked.
func assemble(r *report, f mcs.StreamingFormat, where string, chunks []any) (a assembled, ok bool) {
	ok = r.try("the assembler", func() {
		asm := f.NewAssembler()
		var names []string
		done := false
		for i, c := range chunks {
			asm.Add(c)
			if done && !asm.Done() {
				r.fail(RuleAssembler, "%s: Done was true, then false after chunk %d", where, i)
			}
			done = asm.Done()
			now := asm.CallNames()
			if len(now) < len(names) {
				r.fail(RuleCallNames, "%s: CallNames shrank from %q to %q after chunk %d", where, names, now, i)
			} else {
				for j, n := range names {
					if n != "" && now[j] != n {
						r.fail(RuleCallNames, "%s: the name %q of call %d became %q after chunk %d", where, n, j, now[j], i)
					}
				}
			}
			names = append(names[:0], now...)
		}
		a.msg = asm.Message()
		if a.msg != nil {
			a.msg["mcstest"] = true
			if again := asm.Message(); again["mcstest"] != nil {
				r.fail(RuleAssembler, "%s: Message returns a map the assembler keeps: a change to it shows in the next", where)
			}
			delete(a.msg, "mcstest")
		}
		a.names = names
	})
	if !ok {
		return a, false
	}
	r.try("Extract", func() {
		out := mcs.NewOutput(a.msg)
		if a.matched = f.Match(out); a.matched {
			a.calls = calls(f.Extract(out))
		}
	})
	return a, true
}

// checkTextStream streams text split every way.
func checkTextStream(r *report, f mcs.StreamingFormat, where, text string, whole []call) {
	r.try("MatchChunk", func() {
		if !f.MatchChunk("") {
			r.fail(RuleStreamWhole, "%s: MatchChunk(\"\") is false for a plain-text stream", where)
		}
	})
	ref, ok := assemble(r, f, where+" in one chunk", []any{text})
	if !ok {
		return
	}
	if !ref.matched {
		r.fail(RuleStreamWhole, "%s: the message of a text stream is not in the format: %s", where, oneLine(fmt.Sprint(ref.msg)))
	}
	if !sameCalls(ref.calls, whole) {
		r.fail(RuleStreamWhole, "%s: streamed, the calls are %v; whole, %v", where, ref.calls, whole)
	}
	for _, split := range splits(text) {
		chunks := make([]any, len(split))
		for i, s := range split {
			chunks[i] = s
		}
		got, ok := assemble(r, f, where, chunks)
		if !ok {
			return
		}
		if !equal(got.msg, ref.msg) || !sameCalls(got.calls, ref.calls) {
			r.fail(RuleStreamResplit, "%s: split as %q, the message is %v and the calls %v; in one chunk %v and %v", where, split, got.msg, got.calls, ref.msg, ref.calls)
		}
	}
}

// splits returns the ways the kit splits a text: in two at every offset (for a
// text of at most 2 KiB, else at 64 offsets), into bytes, and into chunks of 3,
// 7 and 16 bytes.
func splits(text string) [][]string {
	var out [][]string
	step := 1
	if len(text) > 2048 {
		step = len(text)/64 + 1
	}
	for i := 1; i < len(text); i += step {
		out = append(out, []string{text[:i], text[i:]})
	}
	for _, size := range []int{1, 3, 7, 16} {
		var s []string
		for i := 0; i < len(text); i += size {
			s = append(s, text[i:min(i+size, len(text))])
		}
		out = append(out, s)
	}
	return out
}

// decodeChunk turns a chunk given as JSON text into the object the buffer hands
// an assembler; a decoded object stays as it is.
func decodeChunk(c any) (map[string]any, bool) {
	var raw []byte
	switch x := c.(type) {
	case map[string]any:
		return x, true
	case string:
		raw = []byte(x)
	case []byte:
		raw = x
	default:
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// checkChunkStream assembles a provider stream directly and through a
// StreamBuffer in every encoding.
func checkChunkStream(r *report, f mcs.StreamingFormat, name, where string, s Sample, whole []call, hasWhole bool) {
	objs := make([]any, 0, len(s.Chunks))
	for i, c := range s.Chunks {
		m, ok := decodeChunk(c)
		if !ok {
			r.fail(RuleStreamWhole, "%s: chunk %d is not a JSON object: %s", where, i, oneLine(fmt.Sprint(c)))
			return
		}
		objs = append(objs, m)
	}
	if len(objs) == 0 {
		return
	}
	r.try("MatchChunk", func() {
		if !f.MatchChunk(objs[0]) {
			r.fail(RuleStreamWhole, "%s: MatchChunk is false for the first chunk", where)
		}
	})
	ref, ok := assemble(r, f, where, objs)
	if !ok {
		return
	}
	if !ref.matched && (len(whole) > 0 || len(s.Calls) > 0) {
		r.fail(RuleStreamWhole, "%s: the assembled message is not in the format: %s", where, oneLine(fmt.Sprint(ref.msg)))
	}
	if hasWhole && !sameCalls(ref.calls, whole) {
		r.fail(RuleStreamWhole, "%s: streamed, the calls are %v; whole, %v", where, ref.calls, whole)
	}
	if s.Calls != nil && !sameStrings(callNames(ref.calls), s.Calls) {
		r.fail(RuleStreamWhole, "%s: streamed, the calls are %q; want %q", where, callNames(ref.calls), s.Calls)
	}
	if !sameStrings(ref.names, callNames(ref.calls)) {
		r.fail(RuleCallNames, "%s: at the end CallNames is %q; the message's calls are %q", where, ref.names, callNames(ref.calls))
	}
	encodings := map[string]func(m map[string]any) any{
		"decoded objects": func(m map[string]any) any { return m },
		"JSON text":       func(m map[string]any) any { return mustJSON(m) },
		"JSON bytes":      func(m map[string]any) any { return []byte(mustJSON(m)) },
		"server-sent events": func(m map[string]any) any {
			return "event: message\ndata: " + mustJSON(m) + "\n\n"
		},
	}
	for _, enc := range []string{"decoded objects", "JSON text", "JSON bytes", "server-sent events"} {
		buf := mcs.NewStreamBuffer(f)
		for _, o := range objs {
			buf.Add(encodings[enc](o.(map[string]any)))
		}
		buf.Finish()
		var got []call
		r.try("Extract", func() { got = calls(f.Extract(mcs.NewOutput(buf.Message()))) })
		if buf.Format() != name || !sameCalls(got, ref.calls) {
			r.fail(RuleStreamResplit, "%s: as %s through a StreamBuffer, the format is %q and the calls %v; want %q and %v", where, enc, buf.Format(), got, name, ref.calls)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func checkFormatConcurrent(r *report, f mcs.WireFormat, samples []Sample) {
	var want [][]call
	for _, s := range samples {
		var cs []call
		if s.Output != nil {
			r.try("Extract", func() { cs = calls(f.Extract(mcs.NewOutput(s.Output))) })
		}
		want = append(want, cs)
	}
	concurrently(goroutines, func(int) {
		for i, s := range samples {
			if s.Output == nil {
				continue
			}
			out := mcs.NewOutput(mcs.CloneValue(s.Output)) // each its own: the format's own state is on trial
			r.try("Extract", func() {
				f.Match(out)
				got := f.Extract(out)
				if cs := calls(got); !sameCalls(cs, want[i]) {
					r.fail(RuleConcurrent, "sample %d: concurrent Extract gave %v; alone %v", i, cs, want[i])
				}
				recs := make([]mcs.CallRecord, len(got))
				for j, c := range got {
					recs[j] = mcs.CallRecord{ToolCall: c, Result: "ok"}
				}
				f.History(out, recs)
			})
		}
	})
}
