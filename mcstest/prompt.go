package mcstest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// The rules of TestPromptStrategy.
const (
	// RulePrompt: EncodeTools renders the kit's tools without error and mentions
	// each by name; SystemMessage embeds the description it is given; RetryPrompt
	// is not empty; ResultMessage gives a message that encodes as JSON.
	RulePrompt = "prompt"
	// RuleDecoderResplit: a decoder gives the same calls, malformed calls
	// included, however the text is split into Scan calls, as one Finish over
	// the whole text does.
	RuleDecoderResplit = "decoder-resplit"
	// RuleCallOffsets: the calls of a text come in order, each with offsets
	// inside the text that do not overlap the previous call's; every malformed
	// call has Err set.
	RuleCallOffsets = "call-offsets"
	// RulePendingName: Pending names a forming call only once its name is
	// settled: the call that completes at the reported start has that name.
	RulePendingName = "pending-name"
	// RulePendingCovers: while a call is forming (its first byte has arrived, it
	// has not been returned yet) Pending reports a region that starts at or
	// before it, so that a stream holds its text.
	RulePendingCovers = "pending-covers"
)

// kitTools are the tools TestPromptStrategy renders.
var kitTools = []mcs.Tool{
	{Name: "get_weather", Description: "Weather for a city.", Parameters: []mcs.Parameter{{Name: "city", Required: true, Schema: map[string]any{"type": "string"}}}},
	{Name: "add", Description: "Adds two numbers.", Parameters: []mcs.Parameter{
		{Name: "a", Required: true, Schema: map[string]any{"type": "number"}},
		{Name: "b", Required: true, Schema: map[string]any{"type": "number"}}}},
}

// TestPromptStrategy checks ps against the rules of a prompt codec (the Rule
// constants of this file, RuleNoPanic and RuleConcurrent), decoding each of
// texts (model outputs in the codec's dialect, with calls and without) split
// every way. It returns nil, or an *Error that lists every rule broken.
func TestPromptStrategy(ps mcs.PromptStrategy, texts ...string) error {
	r := newReport("PromptStrategy")
	if ps == nil {
		r.fail(RulePrompt, "the prompt strategy is nil")
		return r.err()
	}
	checkPrompts(r, ps)
	wants := make([][]call, len(texts))
	for i, text := range texts {
		wants[i] = checkDecoder(r, ps, fmt.Sprintf("text %d", i), text)
	}
	concurrently(goroutines, func(int) {
		for i, text := range texts {
			r.try("the decoder", func() {
				if got := decodeWhole(ps, text); !sameCalls(got, wants[i]) {
					r.fail(RuleConcurrent, "text %d: decoded concurrently, the calls are %v; alone %v", i, got, wants[i])
				}
			})
		}
	})
	return r.err()
}

func checkPrompts(r *report, ps mcs.PromptStrategy) {
	r.try("EncodeTools", func() {
		desc, err := ps.EncodeTools(kitTools)
		if err != nil {
			r.fail(RulePrompt, "EncodeTools: %v", err)
			return
		}
		for _, t := range kitTools {
			if !strings.Contains(desc, t.Name) {
				r.fail(RulePrompt, "EncodeTools does not mention the tool %q", t.Name)
			}
		}
		if msg := ps.SystemMessage(desc); !strings.Contains(msg, desc) {
			r.fail(RulePrompt, "SystemMessage does not embed the function description")
		}
	})
	r.try("RetryPrompt", func() {
		if ps.RetryPrompt("get_weather", "the city is missing") == "" {
			r.fail(RulePrompt, "RetryPrompt is empty")
		}
	})
	r.try("ResultMessage", func() {
		c := mcs.ToolCall{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}
		for _, failed := range []bool{false, true} {
			msg := ps.ResultMessage(c, "sunny", failed)
			if msg == nil {
				r.fail(RulePrompt, "ResultMessage(failed=%t) is nil", failed)
			} else if _, err := json.Marshal(msg); err != nil {
				r.fail(RulePrompt, "ResultMessage(failed=%t) does not encode as JSON: %v", failed, err)
			}
		}
	})
}

// decodeWhole decodes text with one Finish and returns its calls, then the
// malformed ones.
func decodeWhole(ps mcs.PromptStrategy, text string) []call {
	d := ps.NewDecoder()
	cs := calls(d.Finish(text))
	return append(cs, calls(d.Malformed())...)
}

// checkDecoder checks the decoder's rules on text and returns its calls.
func checkDecoder(r *report, ps mcs.PromptStrategy, where, text string) (want []call) {
	var found, malformed []mcs.ToolCall
	if !r.try("the decoder", func() {
		d := ps.NewDecoder()
		found = d.Finish(text)
		malformed = d.Malformed()
	}) {
		return nil
	}
	want = append(calls(found), calls(malformed)...)
	prev := 0
	for _, c := range found {
		if c.Start < prev || c.End <= c.Start || c.End > len(text) {
			r.fail(RuleCallOffsets, "%s: the call to %q has the offsets [%d, %d) in a text of %d bytes after a call that ended at %d", where, c.Name, c.Start, c.End, len(text), prev)
		}
		prev = c.End
	}
	for _, c := range malformed {
		if c.Err == nil {
			r.fail(RuleCallOffsets, "%s: the malformed call to %q has no Err", where, c.Name)
		}
	}
	starts := map[int]string{}
	for _, c := range append(append([]mcs.ToolCall(nil), found...), malformed...) {
		starts[c.Start] = c.Name
	}
	for _, split := range splits(text) {
		r.try("the decoder", func() {
			d := ps.NewDecoder()
			var got []mcs.ToolCall
			end := 0
			for i, piece := range split {
				end += len(piece)
				if i == len(split)-1 {
					got = append(got, d.Finish(text)...)
					break
				}
				got = append(got, d.Scan(text[:end])...)
				checkPending(r, d, where, text[:end], found, got, starts)
			}
			if all := append(calls(got), calls(d.Malformed())...); !sameCalls(all, want) {
				r.fail(RuleDecoderResplit, "%s: split into %d pieces (%q...), the calls are %v; with one Finish, %v", where, len(split), oneLine(split[0]), all, want)
			}
		})
	}
	return want
}

// checkPending checks Pending after a Scan of prefix: got are the calls returned
// so far, found those of the whole text, starts the names of the whole text's
// calls (malformed ones included) by offset.
func checkPending(r *report, d mcs.TextDecoder, where, prefix string, found, got []mcs.ToolCall, starts map[int]string) {
	start, name, ok := d.Pending()
	if ok && name != "" {
		if final, isCall := starts[start]; isCall && final != name {
			r.fail(RulePendingName, "%s: after %d bytes Pending names %q at %d; the call there is %q", where, len(prefix), name, start, final)
		}
	}
	for _, c := range found {
		if c.Start >= len(prefix) {
			break
		}
		if returned(got, c) {
			continue
		}
		if !ok || start > c.Start {
			r.fail(RulePendingCovers, "%s: after %d bytes the call to %q at %d is forming, but Pending reports %d, %t", where, len(prefix), c.Name, c.Start, start, ok)
		}
		break
	}
}

func returned(got []mcs.ToolCall, c mcs.ToolCall) bool {
	for _, g := range got {
		if g.Start == c.Start && g.End == c.End {
			return true
		}
	}
	return false
}
