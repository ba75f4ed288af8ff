package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcs-go/mcs/internal/chat"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/middleware/tracing"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/anthropic"
	"github.com/mcs-go/mcs/runner/openai"
	"github.com/mcs-go/mcs/stack"
)

func init() { addCommand(newChatCommand) }

// chatFlags are the flags of mcs chat.
type chatFlags struct {
	provider string
	model    string
	baseURL  string
	native   bool
	noStream bool
	maxRound int
}

func newChatCommand(a *app) *cobra.Command {
	var f chatFlags
	c := &cobra.Command{
		Use:   "chat --model M [--provider openai|anthropic] [--base-url URL] [--native] [--no-stream]",
		Short: "Chat with a model that calls the stack's tools",
		Long: `chat is a terminal chat with a model that calls the stack's tools. Every line you
type is a question; the answer streams as it comes. Each tool call is shown on one
line, then its outcome:

  → pets__findPetsByStatus {"status":"sold"}
  ← 200 bytes

A call the stack's permission middleware leaves open (ask = true) is asked on the
terminal, and answered from the same input. With ask = "queue" such a call does
not run: it waits for approval, and the model tells you its id; once a person
approves it (mcs approvals approve ID, in another terminal or on another machine
sharing the store), it runs once, before the model answers your next line. The
conversation is kept for the session. /tools lists the tools, /reset starts a new conversation, /quit, Ctrl-D
or Ctrl-C ends the chat.

--provider openai speaks the Chat Completions API (OpenAI, Ollama, vLLM, llama.cpp
server, LM Studio); its key comes from OPENAI_API_KEY (needed for api.openai.com
only) and its endpoint from --base-url, else OPENAI_BASE_URL, else
https://api.openai.com/v1. --provider anthropic speaks the Messages API; its key
comes from ANTHROPIC_API_KEY and its endpoint from --base-url, else
ANTHROPIC_BASE_URL, else https://api.anthropic.com. In this command --base-url is
the model's endpoint, not the base URL of --openapi drivers (declare that in a
stack file).

With --native the tools are sent as the provider's native tool objects, when the
stack's driver offers them for the model; otherwise they are described in the
system message. --no-stream waits for each complete answer.

Each model request is a "chat {model}" span of the OpenTelemetry tracer provider
installed in the program; the tracing middleware's tool-call spans nest under it.
Without a provider the spans cost nothing.`,
		Example: `  mcs chat --model gpt-4o-mini                      # OPENAI_API_KEY
  mcs chat --provider anthropic --model claude-sonnet-4-5 --native
  mcs chat --openapi ./petstore.yaml --model llama3.2 --base-url http://localhost:11434/v1
  mcs chat --stack mcs.toml --model qwen2.5 --base-url http://localhost:8080/v1 --no-stream
  printf 'Which pets are sold?\ny\n' | mcs chat --model gpt-4o-mini`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.chat(c.Context(), f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.provider, "provider", "openai", "the model's API: openai (Chat Completions, any compatible server) or anthropic (Messages)")
	fl.StringVar(&f.model, "model", "", "the model, such as gpt-4o-mini, claude-sonnet-4-5 or llama3.2 (required)")
	fl.StringVar(&f.baseURL, "base-url", "", "the model's endpoint (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the provider's)")
	fl.BoolVar(&f.native, "native", false, "send the tools as native tool objects when the driver offers them for the model")
	fl.BoolVar(&f.noStream, "no-stream", false, "make non-streaming requests; print each answer when it is complete")
	fl.IntVar(&f.maxRound, "max-rounds", 0, "the most model requests per question (default 10)")
	return c
}

// chat runs the chat of mcs chat.
func (a *app) chat(ctx context.Context, f chatFlags) error {
	if strings.TrimSpace(f.model) == "" {
		return errors.New("--model is required, such as --model gpt-4o-mini; see mcs chat --help")
	}
	if f.maxRound < 0 {
		return fmt.Errorf("--max-rounds %d: must be at least 1 (0 keeps the default of 10)", f.maxRound)
	}
	var model runner.Model
	var hint string
	var err error
	provider := strings.ToLower(strings.TrimSpace(f.provider))
	switch provider {
	case "openai":
		model, err = openai.New(openai.Config{Model: f.model, BaseURL: f.baseURL})
		hint = "--base-url URL or OPENAI_BASE_URL"
	case "anthropic":
		model, err = anthropic.New(anthropic.Config{Model: f.model, BaseURL: f.baseURL})
		hint = "--base-url URL or ANTHROPIC_BASE_URL"
	default:
		return fmt.Errorf("--provider %q: unknown provider; use openai (Chat Completions, also Ollama, vLLM, llama.cpp server, LM Studio) or anthropic", safeText(f.provider))
	}
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}

	// One terminal for the chat and its consent questions, so that a question
	// starts on a line of its own; both read the one shared stdin.
	term := chat.NewTerminal(a.stdout)
	if a.ask == nil {
		ask := permission.Prompt(a.stdin, term)
		a.prompt = ask
		if a.stdinTTY { // the terminal echoed the answer and its line end
			a.prompt = func(ctx context.Context, name string, args map[string]any) (bool, error) {
				ok, err := ask(ctx, name, args)
				term.LineEnded()
				return ok, err
			}
		}
	}
	if st, err := a.load(); err == nil {
		st.Host.Sampling = stack.Sampler(model) // for MCP servers with sampling = true
	}
	d, err := a.build(ctx)
	if err != nil {
		return err
	}
	var opts []runner.Option
	if ap := a.st.Approvals; ap != nil && ap.Queue {
		// The calls approved since the last question run once, their results in
		// the history before the model's next request.
		store, err := a.approvalStore(ctx)
		if err != nil {
			return err
		}
		opts = append(opts, runner.WithApprovals(store))
	}
	err = chat.Run(ctx, chat.Config{
		Driver:      d,
		Model:       model,
		In:          a.stdin,
		Out:         term,
		Native:      f.native,
		NoStream:    f.noStream,
		MaxRounds:   f.maxRound,
		BaseURLHint: hint,
		RoundHooks:  []runner.RoundHook{roundSpans(provider)},
		Options:     opts,
	})
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

// roundSpans opens a "chat {model}" client span around every model request, on
// the global tracer provider (the one the tracing middleware uses by default),
// so that the execute_tool spans of the round's calls are its children. With
// the default no-op provider it records nothing.
func roundSpans(provider string) runner.RoundHook {
	tracer := otel.Tracer("github.com/mcs-go/mcs/runner")
	return func(ctx context.Context, info runner.RoundInfo) (context.Context, func(runner.Reply, error)) {
		ctx, span := tracer.Start(ctx, "chat "+info.Model, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIRequestModel(info.Model),
				semconv.GenAIProviderNameKey.String(provider), attribute.Int("mcs.round", info.Round)))
		return ctx, func(reply runner.Reply, err error) {
			if err != nil {
				span.SetAttributes(semconv.ErrorTypeKey.String(tracing.ErrorType(err)))
				span.SetStatus(codes.Error, err.Error())
			} else {
				span.SetAttributes(semconv.GenAIUsageInputTokens(reply.Usage.InputTokens),
					semconv.GenAIUsageOutputTokens(reply.Usage.OutputTokens))
			}
			span.End()
		}
	}
}
