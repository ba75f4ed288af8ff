package mcs_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// hostileReplies are realistic and hostile model replies streamed as text. calcDriver
// owns echo and add; web_search is foreign. shown is what the user must see in the
// end, whatever the chunk boundaries ("" means: only check that no owned call's JSON
// is shown, for replies whose foreign parts flow at a pace that depends on chunking).
var hostileReplies = []struct {
	name, reply, shown string
}{
	{"CRLF fence", "Sure.\r\n```json\r\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"crlf\"}}\r\n```\r\nDone.", "Sure.\r\n\r\nDone."},
	{"two calls back to back", `A {"tool":"echo","arguments":{"text":"1"}}{"tool":"add","arguments":{"a":1,"b":2}} B`, "A  B"},
	{"two calls in one fence", "```json\n{\"tool\":\"echo\",\"arguments\":{\"text\":\"1\"}}\n{\"tool\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}\n```\nok", "\nok"},
	{"apostrophes and braces in prose", `It's {not} a call, isn't it? {'tool': 'echo', 'arguments': {'text': 'it's'}} That's {all}.`, "It's {not} a call, isn't it?  That's {all}."},
	{"escaped quotes and unicode escapes", `x {"tool":"echo","arguments":{"text":"say \"}\" \u007b \\"}} y`, "x  y"},
	{"raw unicode", "Voilà ✓ {\"tool\":\"echo\",\"arguments\":{\"text\":\"héllo 世界 😀\"}} fin ✓", "Voilà ✓  fin ✓"},
	{"call in a fence followed by prose", "Here:\n```json\n{\"tool\":\"echo\",\"arguments\":{\"text\":\"f\"}}\n```\nThat's it, {really}.", "Here:\n\nThat's it, {really}."},
	{"two-backtick fence typo", "``json\n{\"tool\":\"echo\",\"arguments\":{\"text\":\"t\"}}\n``\nafter", "\nafter"},
	{"name alias", `go {"name": "echo", "arguments": {"text": "n"}} done`, "go  done"},
	{"python literals and comments", "{\n  // call\n  'tool': 'echo', /* x */ 'arguments': {'text': 'p', 'loud': True, 'n': None,},\n}\nend", "\nend"},
	{"typographic quotes", "a \u201c{\u201ctool\u201d: \u201cecho\u201d, \u201carguments\u201d: {\u201ctext\u201d: \u201cq\u201d}}\u201d b", "a \u201c\u201d b"},
	{"foreign then owned", `{"tool":"web_search","arguments":{"q":"x"}} and {"tool":"echo","arguments":{"text":"o"}}.`, `{"tool":"web_search","arguments":{"q":"x"}} and .`},
	{"foreign then owned in one fence", "```json\n{\"tool\":\"web_search\"}\n{\"tool\":\"echo\",\"arguments\":{\"text\":\"x\"}}\n```\nend", ""},
	{"foreign name first, owned tool field after", `A {"name": "web_search", "tool": "echo", "arguments": {"text": "x"}} B`, "A  B"},
	{"unclosed prose brace after the call", `{"tool":"echo","arguments":{"text":"u"}} then { maybe`, " then { maybe"},
	{"nested braces in strings", `{"tool":"echo","arguments":{"text":"{{}}}{"},"note":"} { ] ["} z`, " z"},
	{"backticks inside the arguments", "```json\n{\"tool\":\"echo\",\"arguments\":{\"text\":\"```x```\"}}\n```", ""},
	{"slash at a chunk edge", `{"tool":"echo","arguments":{"text":"a/b"}}/ //`, "/ //"},
}

// streamTextReply streams chunks to d and returns what the user saw and the calls.
func streamTextReply(d *mcs.BaseDriver, chunks []string) (string, []call) {
	run := feed(anys(chunks), true, d)
	return run.shown.String(), run.calls()
}

// chunkings returns the reply cut at every byte offset into two chunks, into one-byte
// chunks, and at random offsets into three to six chunks (fixed seed).
func chunkings(reply string) [][]string {
	var out [][]string
	for cut := 1; cut < len(reply); cut++ {
		out = append(out, []string{reply[:cut], reply[cut:]})
	}
	var bytes []string
	for i := range len(reply) {
		bytes = append(bytes, reply[i:i+1])
	}
	out = append(out, bytes)
	rng := rand.New(rand.NewPCG(1, uint64(len(reply))))
	for range 200 {
		cuts := []int{0}
		for range 2 + rng.IntN(4) {
			cuts = append(cuts, rng.IntN(len(reply)+1))
		}
		cuts = append(cuts, len(reply))
		var chunks []string
		prev := 0
		for _, c := range sortedInts(cuts) {
			if c > prev {
				chunks = append(chunks, reply[prev:c])
				prev = c
			}
		}
		out = append(out, chunks)
	}
	return out
}

func sortedInts(s []int) []int {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// TestStreamHostileChunkings streams each hostile reply under many chunkings: the
// calls that run are exactly those ProcessLLMResponse runs on the whole reply, in
// the same order, and the raw JSON of an owned call never reaches the display.
func TestStreamHostileChunkings(t *testing.T) {
	for _, tt := range hostileReplies {
		t.Run(tt.name, func(t *testing.T) {
			want := calls(mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(context.Background(), tt.reply))
			if len(want) == 0 {
				t.Fatalf("ProcessLLMResponse found no call in %q", tt.reply)
			}
			for _, chunks := range chunkings(tt.reply) {
				shown, got := streamTextReply(mcs.NewBaseDriver(&calcDriver{}), chunks)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("chunks %q: calls differ from ProcessLLMResponse (-want +got):\n%s", chunks, diff)
				}
				if strings.Contains(shown, "echo") || strings.Contains(shown, `"add"`) {
					t.Fatalf("chunks %q: an owned call was shown: %q", chunks, shown)
				}
				if tt.shown != "" && shown != tt.shown {
					t.Fatalf("chunks %q: shown %q, want %q", chunks, shown, tt.shown)
				}
			}
		})
	}
}

// TestStreamNothingHeldAtTheEnd: text that might have become a call but did not is
// shown in full once the stream ends.
func TestStreamNothingHeldAtTheEnd(t *testing.T) {
	for _, reply := range []string{
		`Hello {"to`,
		"a { b",
		"x ```json\n",
		"``",
		"see `code",
		`{"tool": "web_search", "arguments": {"q": "open`,
		`{"tool": "web_search", "arguments": {"q": {"tool": "echo", "arguments": {"text": "no"}}`, // truncated: nested objects are data
		`{"tool": 42, "name": "echo"}`,                                                            // the tool field is not a string: not a call
		strings.Repeat("{", 1000),
		strings.Repeat("`", 1000),
		`{"a": ` + strings.Repeat("[", 500),
	} {
		for _, chunks := range [][]string{{reply}, textChunksString(reply, 1), textChunksString(reply, 7)} {
			shown, got := streamTextReply(mcs.NewBaseDriver(&calcDriver{}), chunks)
			if len(got) != 0 {
				t.Errorf("%.40q: calls %+v", reply, got)
			}
			if shown != reply {
				t.Errorf("%.40q in %d chunks: shown %.60q, want the whole reply", reply, len(chunks), shown)
			}
		}
	}
}

// TestStreamFanOutChunkings shares one buffer between two drivers owning different
// tools under many chunkings: each runs what ProcessLLMResponse runs for it, and
// neither call's JSON is shown.
func TestStreamFanOutChunkings(t *testing.T) {
	reply := "A: {\"tool\": \"web_search\", \"arguments\": {\"q\": \"go\"}} B: ```json\n{\"tool\": \"echo\", \"arguments\": {\"text\": \"hi\"}}\n``` {\"name\":\"web_search\",\"arguments\":{\"q\":\"it's\"}} end"
	ctx := context.Background()
	wantCalc := calls(mcs.NewBaseDriver(&calcDriver{}).ProcessLLMResponse(ctx, reply))
	wantOther := calls(mcs.NewBaseDriver(&otherDriver{}).ProcessLLMResponse(ctx, reply))
	if len(wantCalc) != 1 || len(wantOther) != 2 {
		t.Fatalf("whole reply: calc %+v, other %+v", wantCalc, wantOther)
	}
	for _, chunks := range chunkings(reply) {
		run := feed(anys(chunks), true, mcs.NewBaseDriver(&calcDriver{}), mcs.NewBaseDriver(&otherDriver{}))
		gotCalc, gotOther, shown := run.byDriver[0], run.byDriver[1], &run.shown
		if diff := cmp.Diff(wantCalc, gotCalc); diff != "" {
			t.Fatalf("chunks %q: calc (-want +got):\n%s", chunks, diff)
		}
		if diff := cmp.Diff(wantOther, gotOther); diff != "" {
			t.Fatalf("chunks %q: other (-want +got):\n%s", chunks, diff)
		}
		if shown.String() != "A:  B:   end" {
			t.Fatalf("chunks %q: shown %q", chunks, shown.String())
		}
	}
}
