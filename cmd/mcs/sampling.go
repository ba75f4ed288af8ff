package main

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/runner"
)

// sampler answers the sampling requests of MCP servers (stack: sampling =
// true) with the chat's model: one non-streaming request holding the server's
// system prompt and messages, whose reply text goes back to the server. The
// request's MaxTokens is not passed on (a runner.Request bounds bytes, not
// tokens); the driver counts the tokens the provider reports against its cap.
func sampler(m runner.Model) mcp.SamplingFunc {
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
