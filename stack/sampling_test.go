package stack_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/stack"
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
	got, err := stack.Sampler(m)(context.Background(), mcp.SamplingRequest{
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
	if _, err := stack.Sampler(m)(context.Background(), mcp.SamplingRequest{Messages: []mcp.SamplingMessage{{Role: "user", Text: "x"}}}); !errors.Is(err, m.err) {
		t.Errorf("err = %v, want the model's", err)
	}
}

// The model of a program answers the sampling requests of the MCP servers of
// its stack that have sampling = true.
func ExampleSampler() {
	s, err := stack.Parse("mcs.toml", []byte(`
[[driver]]
label = "research"
type = "mcp"
url = "http://127.0.0.1:8931/mcp"
sampling = true
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	var model runner.Model = &echoModel{} // such as openai.New(openai.Config{Model: "gpt-4o-mini"})
	s.Host.Sampling = stack.Sampler(model)
	reply, err := s.Host.Sampling(context.Background(), mcp.SamplingRequest{Messages: []mcp.SamplingMessage{{Role: "user", Text: "hello"}}})
	fmt.Println(reply.Text, reply.Model, err)
	// Output:
	// you said hello echo-1 <nil>
}
