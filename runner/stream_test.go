package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
)

// pieces is a runner.Model whose replies are text in pieces: Generate answers
// with the whole text, Stream with one Chat Completions chunk per piece.
type pieces struct {
	mu      sync.Mutex
	replies [][]string
	n       int
}

func (p *pieces) Name() string { return "m" }

func (p *pieces) next() ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n >= len(p.replies) {
		return nil, errors.New("pieces: no more replies")
	}
	p.n++
	return p.replies[p.n-1], nil
}

func (p *pieces) Generate(ctx context.Context, req runner.Request) (runner.Reply, error) {
	r, err := p.next()
	if err != nil {
		return runner.Reply{}, err
	}
	return runner.Reply{Message: map[string]any{"role": "assistant", "content": strings.Join(r, "")}}, nil
}

func (p *pieces) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	r, err := p.next()
	if err != nil {
		return runner.Reply{}, err
	}
	for _, s := range r {
		chunk(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{"content": s}}}})
	}
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	return runner.Reply{Message: map[string]any{"role": "assistant", "content": strings.Join(r, "")}}, nil
}

const utcCall = `{"tool": "get_time", "arguments": {"zone": "UTC"}}`

// streamCases are text-protocol conversations in pieces, each ending in a plain
// answer.
var streamCases = []struct {
	name    string
	replies [][]string
}{
	{"text after the call", [][]string{{"Let me check tha", "t. ", utcCall[:20], utcCall[20:], " I will tell you."}, {"It is noon."}}},
	{"fenced call", [][]string{{"Let me check tha", "t.\n```json\n", utcCall, "\n```\n", "One moment."}, {"Noon."}}},
	{"two calls", [][]string{{"First ", utcCall, " then ", `{"tool": "get_weather", "arguments": {"city": "Rome"}}`, " and done."}, {"Both done."}}},
	{"failed call", [][]string{{"Trying ", `{"tool": "get_weather", "arguments": {}}`, " now."}, {"Sorry."}}},
	{"owned and foreign", [][]string{{"First ", utcCall, " then ", `{"tool": "get_tme", "arguments": {}}`, "."}, {"done"}}},
	{"no call", [][]string{{"Just ", "text."}}},
}

// A streamed conversation leaves the history an unstreamed one leaves: the
// whole reply, text after the last call included, then the results.
func TestStreamHistoryEqualsUnstreamed(t *testing.T) {
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			run := func(opts ...runner.Option) *runner.Result {
				res, err := runner.New((&replay.Weather{}).Driver(), &pieces{replies: tc.replies}, opts...).Run(context.Background(), nil, "time?")
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			whole, streamed := run(), run(runner.WithStream(nil))
			if diff := cmp.Diff(whole.History, streamed.History); diff != "" {
				t.Errorf("history (-unstreamed +streamed):\n%s", diff)
			}
			if whole.Text != streamed.Text || len(whole.Calls) != len(streamed.Calls) {
				t.Errorf("text %q / %q, calls %d / %d", whole.Text, streamed.Text, len(whole.Calls), len(streamed.Calls))
			}
		})
	}
}

// show receives the text before a call before the call's record reaches
// WithOnCall, and the text after it afterwards; never the call itself.
func TestStreamShowsTextInOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies [][]string
		want    []string
	}{
		{"fenced call", streamCases[1].replies, []string{"Let me check that.\n", "call get_time", "\nOne moment.", "Noon."}},
		{"call and text in one piece", [][]string{{"Let me check tha", "t. " + utcCall + " Back soon."}, {"Noon."}},
			[]string{"Let me check that. ", "call get_time", " Back soon.", "Noon."}},
		{"two calls", streamCases[2].replies, []string{"First ", "call get_time", " then ", "call get_weather", " and done.", "Both done."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []string
			text := func(s string) {
				if n := len(events); n > 0 && !strings.HasPrefix(events[n-1], "call ") {
					events[n-1] += s
					return
				}
				events = append(events, s)
			}
			onCall := func(rec mcs.CallRecord) { events = append(events, "call "+rec.Name) }
			r := runner.New((&replay.Weather{}).Driver(), &pieces{replies: tc.replies}, runner.WithStream(text), runner.WithOnCall(onCall))
			if _, err := r.Run(context.Background(), nil, "time?"); err != nil {
				t.Fatal(err)
			}
			// the rounds' texts run together in one event; split the last answer off
			if n := len(events); n > 0 && strings.HasSuffix(events[n-1], tc.want[len(tc.want)-1]) && events[n-1] != tc.want[len(tc.want)-1] {
				last := tc.want[len(tc.want)-1]
				events = append(events[:n-1], strings.TrimSuffix(events[n-1], last), last)
			}
			if diff := cmp.Diff(tc.want, events); diff != "" {
				t.Errorf("show and the calls (-want +got):\n%s", diff)
			}
		})
	}
}
