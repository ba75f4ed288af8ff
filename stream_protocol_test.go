package mcs_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// bracketDriver is a third-party streaming driver written against the exported
// protocol of StreamBuffer only. In text it owns calls written [[upper TEXT]],
// which it holds while they form and claims when they close; in a native stream
// it owns the tool "clock", whose calls it runs once the provider ends the message
// and marks executed.
type bracketDriver struct{}

var _ mcs.SupportsStreaming = bracketDriver{}

// bracketState is the driver's own state on one buffer.
type bracketState struct {
	mu      sync.Mutex
	scanned int  // text before this offset holds no call that may still form
	native  bool // the native calls were handled
}

func (bracketDriver) NewStreamBuffer() *mcs.StreamBuffer { return mcs.NewStreamBuffer() }

func (d bracketDriver) ProcessStream(ctx context.Context, buf *mcs.StreamBuffer) mcs.Response {
	st := mcs.StreamState[bracketState](buf, d)
	st.mu.Lock()
	defer st.mu.Unlock()
	v := buf.View()
	if v.Format == nil {
		return mcs.Response{}
	}
	var resp mcs.Response
	if v.Native {
		names, _ := buf.CallNames(0)
		for _, n := range names {
			if n == "" || n == "clock" {
				resp.CallPending = !v.Finished
			}
		}
		if v.Finished && !st.native {
			st.native = true
			out := mcs.NewOutput(buf.Message())
			var mine []mcs.ToolCall
			for _, c := range v.Format.Extract(out) {
				if c.Name == "clock" {
					mine = append(mine, c)
					resp.Calls = append(resp.Calls, mcs.CallRecord{ToolCall: c, Result: "noon"})
				}
			}
			buf.MarkExecuted(mine)
		}
	}
	var found []mcs.ToolCall
	for {
		start := strings.Index(v.Text[st.scanned:], "[[")
		if start < 0 {
			if strings.HasSuffix(v.Text, "[") && !v.Finished {
				resp.CallPending = true // it may start a call
			}
			st.scanned = max(st.scanned, len(v.Text)-1)
			break
		}
		start += st.scanned
		end := strings.Index(v.Text[start:], "]]")
		if end < 0 {
			if !v.Finished {
				resp.CallPending = true
			}
			st.scanned = start
			break
		}
		end += start + 2
		if text, ok := strings.CutPrefix(v.Text[start+2:end-2], "upper "); ok {
			found = append(found, mcs.ToolCall{Name: "upper", Arguments: map[string]any{"text": text}, Start: start, End: end})
		}
		st.scanned = end
	}
	if resp.CallPending {
		buf.Hold(v.Round)
	}
	claimed, history := buf.Claim(found)
	for _, c := range claimed {
		resp.Calls = append(resp.Calls, mcs.CallRecord{ToolCall: c, Result: strings.ToUpper(c.Arguments["text"].(string))})
	}
	if len(claimed) > 0 {
		resp.Messages = []mcs.Message{{"role": "assistant", "content": history}}
	}
	resp.CallExecuted = len(resp.Calls) > 0
	return resp
}

// streamingDriver is what the client loop of these tests needs of a driver.
type streamingDriver interface {
	ProcessStream(ctx context.Context, buf *mcs.StreamBuffer) mcs.Response
}

// protocolRun feeds chunks to buf, asking every driver after each Add and after
// Finish, and returns what the user saw, each driver's calls as "name=result",
// and the assistant text of every Response, in order.
func protocolRun(buf *mcs.StreamBuffer, chunks []any, drivers ...streamingDriver) (shown string, ran [][]string, history []string) {
	ctx := context.Background()
	ran = make([][]string, len(drivers))
	var out strings.Builder
	round := func() {
		for i, d := range drivers {
			r := d.ProcessStream(ctx, buf)
			for _, c := range r.Calls {
				ran[i] = append(ran[i], c.Name+"="+mcs.ResultText(c.Result))
			}
			for _, m := range r.Messages {
				if m["role"] == "assistant" {
					if s, ok := m["content"].(string); ok {
						history = append(history, s)
					}
				}
			}
		}
		out.WriteString(buf.Text())
	}
	for _, c := range chunks {
		buf.Add(c)
		round()
	}
	buf.Finish()
	round()
	return out.String(), ran, history
}

// TestStreamThirdPartyDriver: a driver that uses only the exported protocol holds
// and claims text calls on the buffer that a BaseDriver uses too; neither call's
// text is shown, each runs once, and the history texts do not overlap, for every
// chunk size.
func TestStreamThirdPartyDriver(t *testing.T) {
	reply := `Hi [[upper shout]] and {"tool":"echo","arguments":{"text":"x"}} bye`
	for size := 1; size <= len(reply); size++ {
		calc := mcs.NewBaseDriver(&calcDriver{})
		shown, ran, history := protocolRun(calc.NewStreamBuffer(), textChunks(reply, size), bracketDriver{}, calc)
		if shown != "Hi  and  bye" {
			t.Errorf("size %d: shown %q", size, shown)
		}
		if diff := cmp.Diff([][]string{{"upper=SHOUT"}, {"echo=x"}}, ran); diff != "" {
			t.Errorf("size %d: calls (-want +got):\n%s", size, diff)
		}
		if got := strings.Join(history, ""); got != `Hi [[upper shout]] and {"tool":"echo","arguments":{"text":"x"}}` {
			t.Errorf("size %d: history %q", size, history)
		}
	}
}

// TestStreamThirdPartyNativeDriver: in a native stream the third-party driver runs
// its native call at the end of the message and marks it executed; the BaseDriver
// runs its own; after the next Add the message holds neither.
func TestStreamThirdPartyNativeDriver(t *testing.T) {
	calc := mcs.NewBaseDriver(&calcDriver{})
	chunks := chatChunks([]event{textEv("Let me see."), callEv("c1", "clock", `{}`), callEv("c2", "echo", `{"text":"n"}`)})
	buf := calc.NewStreamBuffer()
	shown, ran, _ := protocolRun(buf, anys(chunks), bracketDriver{}, calc)
	if shown != "Let me see." {
		t.Errorf("shown %q", shown)
	}
	if diff := cmp.Diff([][]string{{"clock=noon"}, {"echo=n"}}, ran); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	buf.Add("ignored: the message has ended")
	if calls := buf.Message()["tool_calls"]; calls != nil {
		t.Errorf("executed calls left in the message: %v", calls)
	}
}

// TestStreamClaimRounds: a call claimed in a round is still there for the drivers
// asked after it in that round, and gone from the next round on; Hold takes only in
// the round of its view.
func TestStreamClaimRounds(t *testing.T) {
	buf := mcs.NewStreamBuffer()
	buf.Add(`x {"tool":"a"} y`)
	v := buf.View()
	call := []mcs.ToolCall{{Name: "a", Start: 2, End: 14}}
	if got, history := buf.Claim(append([]mcs.ToolCall(nil), call...)); len(got) != 1 || history != `x {"tool":"a"}` {
		t.Fatalf("first claim: %v %q", got, history)
	}
	if got, history := buf.Claim(append([]mcs.ToolCall(nil), call...)); len(got) != 1 || history != "" {
		t.Errorf("a second driver in the same round: %v %q", got, history)
	}
	if !buf.Hold(v.Round) || buf.Text() != "" {
		t.Error("a hold in the view's round did not hold")
	}
	buf.Add(" z")
	if buf.Hold(v.Round) {
		t.Error("a hold of an earlier round took")
	}
	if got, _ := buf.Claim(append([]mcs.ToolCall(nil), call...)); got != nil {
		t.Errorf("a claim in a later round: %v", got)
	}
	if got := buf.Text(); got != "x  y z" {
		t.Errorf("shown %q", got)
	}
	type other struct{ n int }
	if mcs.StreamState[other](buf, "k") != mcs.StreamState[other](buf, "k") {
		t.Error("StreamState gave two states for one key and type")
	}
	if p, q := mcs.StreamState[other](buf, "k"), mcs.StreamState[bracketState](buf, "k"); p == nil || q == nil {
		t.Error("StreamState gave no state")
	}
	// Asked in turns (the entry asked for last is remembered), each key and
	// type keeps its own state.
	k1, j1, kb := mcs.StreamState[other](buf, "k"), mcs.StreamState[other](buf, "j"), mcs.StreamState[bracketState](buf, "k")
	k1.n, j1.n = 1, 2
	if k2, j2, kb2 := mcs.StreamState[other](buf, "k"), mcs.StreamState[other](buf, "j"), mcs.StreamState[bracketState](buf, "k"); k2 != k1 || j2 != j1 || kb2 != kb || k2.n != 1 || j2.n != 2 {
		t.Error("StreamState mixed up the states of two keys or two types")
	}
}

// pendingPanicCodec is the default codec with a decoder whose Pending panics; it
// counts the calls its decoders get after the panic.
type pendingPanicCodec struct {
	mcs.PromptStrategy
	after *int
}

func (c pendingPanicCodec) NewDecoder() mcs.TextDecoder {
	return &pendingPanicDecoder{TextDecoder: c.PromptStrategy.NewDecoder(), after: c.after}
}

type pendingPanicDecoder struct {
	mcs.TextDecoder
	after    *int
	panicked bool
}

func (d *pendingPanicDecoder) count() {
	if d.panicked {
		*d.after++
	}
}
func (d *pendingPanicDecoder) Scan(s string) []mcs.ToolCall { d.count(); return d.TextDecoder.Scan(s) }
func (d *pendingPanicDecoder) Finish(s string) []mcs.ToolCall {
	d.count()
	return d.TextDecoder.Finish(s)
}
func (d *pendingPanicDecoder) Malformed() []mcs.ToolCall { d.count(); return d.TextDecoder.Malformed() }
func (d *pendingPanicDecoder) Pending() (int, string, bool) {
	d.count()
	d.panicked = true
	panic("pending bug")
}

// panicFirstFormat panics in MatchChunk: the buffer asks the next format.
type panicFirstFormat struct{ mcs.StreamingFormat }

func (panicFirstFormat) MatchChunk(any) bool { panic("match bug") }

// TestStreamGuardedUserCode: a decoder that panicked is asked nothing more for the
// rest of the stream; a format that panics in MatchChunk does not match, and the
// next one is asked.
func TestStreamGuardedUserCode(t *testing.T) {
	var logs strings.Builder
	restore := logTo(&logs)
	defer restore()
	after := 0
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithPromptStrategy(pendingPanicCodec{mcs.DefaultPromptStrategy(), &after}))
	shown, ran, _ := protocolRun(d.NewStreamBuffer(), textChunks(`a {"tool":"echo","arguments":{"text":"x"}} b`, 4), d)
	if after != 0 {
		t.Errorf("the decoder was asked %d times after it panicked", after)
	}
	if ran[0] != nil || shown != `a {"tool":"echo","arguments":{"text":"x"}} b` {
		t.Errorf("a decoder that is off: calls %v, shown %q", ran[0], shown)
	}
	buf := mcs.NewStreamBuffer(panicFirstFormat{mcs.ChatCompletionsFormat()}, mcs.ChatCompletionsFormat())
	buf.Add(chatChunks([]event{textEv("hi")})[0])
	if got := buf.Format(); got != "openai-chat" {
		t.Errorf("format %q after a panicking format, want openai-chat", got)
	}
	if !strings.Contains(logs.String(), "pending bug") || !strings.Contains(logs.String(), "match bug") {
		t.Errorf("the panics were not logged: %q", logs.String())
	}
}

// logTo sends slog.Default to w until the returned func restores it.
func logTo(w io.Writer) func() {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(w, nil)))
	return func() { slog.SetDefault(prev) }
}
