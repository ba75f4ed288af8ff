package stack

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/runner"
)

// Sampler adapts a runner.Model to the sampling function of MCP drivers
// ([Host].Sampling, for servers whose table has sampling = true): each request
// is one non-streaming Generate holding the server's system prompt and
// messages ({"role": ..., "content": text}, a shape every adapter of this
// module accepts), and the reply's text goes back to the server with the
// model's name and the usage the provider reported. The request's MaxTokens is
// not passed on (a runner.Request bounds bytes, not tokens); the driver counts
// the tokens reported against its cap. A model error is returned as it is. The
// function is safe for concurrent use when m is.
func Sampler(m runner.Model) mcp.SamplingFunc {
	return func(ctx context.Context, req mcp.SamplingRequest) (mcp.SamplingReply, error) {
		msgs := make([]map[string]any, len(req.Messages))
		for i, msg := range req.Messages {
			msgs[i] = map[string]any{"role": msg.Role, "content": msg.Text}
		}
		reply, err := m.Generate(ctx, runner.Request{System: req.System, Messages: msgs})
		if err != nil {
			return mcp.SamplingReply{}, err
		}
		return mcp.SamplingReply{
			Text:         mcs.NewOutput(reply.Message).Text,
			Model:        m.Name(),
			StopReason:   "endTurn",
			InputTokens:  reply.Usage.InputTokens,
			OutputTokens: reply.Usage.OutputTokens,
		}, nil
	}
}
