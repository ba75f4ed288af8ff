package main

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/runner"
)

// echoModel answers with the last message's content and records its request.
type echoModel struct {
	got runner.Request
	err error
}

func (m *echoModel) Name() string { return "echo-1" }
func (m *echoModel) Generate(_ context.Context, req runner.Request) (runner.Reply, error) {
	m.got = req
	if m.err != nil {
		return runner.Reply{}, m.err
	}
	last := req.Messages[len(req.Messages)-1]["content"].(string)
	return runner.Reply{Message: map[string]any{"role": "assistant", "content": "you said " + last}, Usage: runner.Usage{InputTokens: 7, OutputTokens: 3}}, nil
}
func (m *echoModel) Stream(ctx context.Context, req runner.Request, _ func(any)) (runner.Reply, error) {
	return m.Generate(ctx, req)
}

func TestSampler(t *testing.T) {
	m := &echoModel{}
	got, err := sampler(m)(context.Background(), mcp.SamplingRequest{
		System:    "Be brief.",
		Messages:  []mcp.SamplingMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "hello"}, {Role: "user", Text: "tides?"}},
		MaxTokens: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mcp.SamplingReply{Text: "you said tides?", Model: "echo-1", StopReason: "endTurn", InputTokens: 7, OutputTokens: 3}, got); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
	want := runner.Request{System: "Be brief.", Messages: []map[string]any{
		{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "tides?"},
	}}
	if diff := cmp.Diff(want, m.got); diff != "" {
		t.Errorf("model request (-want +got):\n%s", diff)
	}
	m.err = errors.New("rate limited")
	if _, err := sampler(m)(context.Background(), mcp.SamplingRequest{Messages: []mcp.SamplingMessage{{Role: "user", Text: "x"}}}); !errors.Is(err, m.err) {
		t.Errorf("err = %v, want the model's", err)
	}
}
