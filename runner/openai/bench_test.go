package openai_test

import (
	"context"
	"encoding/json"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
)

// BenchmarkRound compares one round of the runner (a streamed tool call, then a
// streamed answer, on a replaying server on loopback, with a trivial tool) with
// the same loop written directly on the SDK, with no MCS in it. ns/round is the
// time per model request.
func BenchmarkRound(b *testing.B) {
	replies := func() []replay.Reply { return []replay.Reply{sse(b, "one_call"), sse(b, "answer_rome")} }
	w := &replay.Weather{}
	d := w.Driver()
	ctx := context.Background()

	b.Run("runner", func(b *testing.B) {
		srv := replay.New(b, replies()...).Loop()
		r := runner.New(d, newModel(b, srv.URL), runner.WithNativeTools(true), runner.WithStream(func(string) {}))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, err := r.Run(ctx, nil, "weather in Rome?")
			if err != nil || res.Rounds != 2 {
				b.Fatalf("Run: %v, %d rounds", err, res.Rounds)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/round")
	})

	b.Run("sdk", func(b *testing.B) {
		srv := replay.New(b, replies()...).Loop()
		client := oai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
		// The same system message and tools the driver sends, prepared once.
		nc, err := d.NativeToolContext(ctx, "gpt-test")
		if err != nil {
			b.Fatal(err)
		}
		tools := make([]oai.ChatCompletionToolUnionParam, len(nc.Tools))
		for i, t := range nc.Tools {
			tools[i] = param.Override[oai.ChatCompletionToolUnionParam](t)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			p := oai.ChatCompletionNewParams{Model: "gpt-test", Tools: tools,
				Messages:      []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(nc.SystemMessage), oai.UserMessage("weather in Rome?")},
				StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}}
			rounds := 0
			for {
				rounds++
				stream := client.Chat.Completions.NewStreaming(ctx, p)
				var acc oai.ChatCompletionAccumulator
				shown := 0
				for stream.Next() {
					c := stream.Current()
					acc.AddChunk(c)
					if len(c.Choices) > 0 {
						shown += len(c.Choices[0].Delta.Content)
					}
				}
				if err := stream.Err(); err != nil {
					b.Fatal(err)
				}
				stream.Close()
				msg := acc.Choices[0].Message
				if len(msg.ToolCalls) == 0 {
					break
				}
				p.Messages = append(p.Messages, msg.ToParam())
				for _, tc := range msg.ToolCalls {
					var args map[string]any
					if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
						b.Fatal(err)
					}
					out, err := w.ExecuteTool(ctx, tc.Function.Name, args)
					if err != nil {
						b.Fatal(err)
					}
					p.Messages = append(p.Messages, oai.ToolMessage(out.(string), tc.ID))
				}
			}
			if rounds != 2 {
				b.Fatalf("%d rounds", rounds)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/round")
	})
}
