package chat_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs/internal/chat"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
)

// textModel streams text-protocol replies, one Chat Completions chunk per piece.
type textModel struct {
	mu      sync.Mutex
	replies [][]string
}

func (m *textModel) Name() string { return "m" }

func (m *textModel) Generate(context.Context, runner.Request) (runner.Reply, error) {
	return runner.Reply{}, errors.New("textModel streams only")
}

func (m *textModel) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	m.mu.Lock()
	if len(m.replies) == 0 {
		m.mu.Unlock()
		return runner.Reply{}, errors.New("textModel: no more replies")
	}
	r := m.replies[0]
	m.replies = m.replies[1:]
	m.mu.Unlock()
	for _, s := range r {
		chunk(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{"content": s}}}})
	}
	chunk(map[string]any{"choices": []any{map[string]any{"index": 0.0, "delta": map[string]any{}, "finish_reason": "stop"}}})
	return runner.Reply{Message: map[string]any{"role": "assistant", "content": strings.Join(r, "")}}, nil
}

// The text the model wrote before a call is on the screen before the call's
// line, and the text after it below that line.
func TestStreamChatShowsTextBeforeTheCallLine(t *testing.T) {
	m := &textModel{replies: [][]string{
		{"Let me check tha", "t.\n```json\n", `{"tool": "get_time", "arguments": {"zone": "UTC"}}`, "\n```\n", "One moment."},
		{"It is noon."},
	}}
	var out strings.Builder
	err := chat.Run(context.Background(), chat.Config{Driver: (&replay.Weather{}).Driver(), Model: m,
		In: strings.NewReader("time?\n"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	want := "> Let me check that.\n→ get_time {\"zone\":\"UTC\"}\n← 9 bytes\n\nOne moment.It is noon.\n"
	if got := out.String(); !strings.Contains(got, want) {
		t.Errorf("output\n%s\nlacks\n%s", got, want)
	}
}
