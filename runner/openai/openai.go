// Package openai is a runner.Model on the OpenAI Chat Completions API, through
// the official SDK (github.com/openai/openai-go/v3). It speaks to any server of
// that API: OpenAI, Ollama, vLLM, the llama.cpp server, LM Studio.
//
// History entries are Chat Completions messages ({"role":..., "content":...,
// "tool_calls":[...]}, {"role":"tool", ...}) and are sent as they are; native
// tools are OpenAI function-tool objects, sent as they are, so nothing of a
// schema is lost.
package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/mcs-go/mcs/internal/textcut"
	"github.com/mcs-go/mcs/runner"
	ep "github.com/mcs-go/mcs/runner/internal/endpoint"
)

// DefaultBaseURL is the endpoint when neither Config.BaseURL nor OPENAI_BASE_URL
// is set.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Model.
type Config struct {
	// Model is the model name, such as "gpt-4o-mini" or "llama3.2"; required.
	Model string
	// BaseURL is the API's base URL, such as "http://localhost:11434/v1" for
	// Ollama; "" uses OPENAI_BASE_URL, else DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token; "" uses OPENAI_API_KEY. A key is required
	// for DefaultBaseURL only: local servers usually need none.
	APIKey string
	// HTTPClient sends the requests; nil uses a client on http.DefaultTransport.
	// The Model uses a copy whose redirects stay on the base URL's origin (the
	// same scheme, host and port): a redirect elsewhere is not followed and the
	// request fails with an error wrapping runner.ErrRedirectRefused, so the key
	// never leaves that origin. The client's own redirect policy, if any, is asked
	// after that check.
	HTTPClient *http.Client
	// MaxTokens caps the tokens of each reply (max_completion_tokens); 0 leaves it
	// to the server.
	MaxTokens int
	// MaxRetries is how often the SDK retries a failed request (connection errors,
	// 408, 409, 429, 5xx) with its exponential backoff; 0 keeps the SDK's default
	// (2), a negative value disables retries.
	MaxRetries int
}

// Model is a runner.Model on the Chat Completions API. It is safe for concurrent
// use.
type Model struct {
	cfg      Config
	endpoint string
	chat     oai.ChatService
	retries  int
}

var _ runner.Model = (*Model)(nil)

// New returns a Model for cfg. It fails when cfg.Model is empty, when the base
// URL is not an absolute http or https URL, and when no key is configured for
// the OpenAI endpoint (an error wrapping runner.ErrNoAPIKey). It sends nothing.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: no model name: set Config.Model (for example gpt-4o-mini)")
	}
	endpoint, u, err := ep.Resolve("openai", cfg.BaseURL, "OPENAI_BASE_URL", DefaultBaseURL, "http://localhost:11434/v1")
	if err != nil {
		return nil, err
	}
	key := ep.Key(cfg.APIKey, "OPENAI_API_KEY")
	if key == "" && u.Host == "api.openai.com" {
		return nil, &runner.ModelError{Provider: "openai", Endpoint: endpoint, Model: cfg.Model, Kind: runner.ErrNoAPIKey,
			Hint: "set OPENAI_API_KEY (or Config.APIKey), or point the base URL at a server that needs no key"}
	}
	if key == "" {
		key = "none" // the SDK requires a bearer token; keyless servers ignore it
	}
	// The key goes only to the configured origin: a redirect elsewhere is refused.
	opts := []option.RequestOption{option.WithBaseURL(endpoint), option.WithAPIKey(key),
		option.WithHTTPClient(ep.Client(cfg.HTTPClient, u))}
	retries := 2
	if cfg.MaxRetries != 0 {
		retries = max(cfg.MaxRetries, 0)
		opts = append(opts, option.WithMaxRetries(retries))
	}
	return &Model{cfg: cfg, endpoint: endpoint, chat: oai.NewChatService(append(oai.DefaultClientOptions(), opts...)...), retries: retries}, nil
}

// Name returns Config.Model.
func (m *Model) Name() string { return m.cfg.Model }

// Endpoint returns the base URL requests go to.
func (m *Model) Endpoint() string { return m.endpoint }

// params converts req: the system message first, then every history entry and
// every tool object as it is.
func (m *Model) params(req runner.Request) oai.ChatCompletionNewParams {
	msgs := make([]oai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, oai.SystemMessage(req.System))
	}
	for _, e := range req.Messages {
		msgs = append(msgs, param.Override[oai.ChatCompletionMessageParamUnion](e))
	}
	p := oai.ChatCompletionNewParams{Model: m.cfg.Model, Messages: msgs}
	if len(req.Tools) > 0 {
		p.Tools = make([]oai.ChatCompletionToolUnionParam, len(req.Tools))
		for i, t := range req.Tools {
			p.Tools[i] = param.Override[oai.ChatCompletionToolUnionParam](t)
		}
	}
	if m.cfg.MaxTokens > 0 {
		p.MaxCompletionTokens = oai.Int(int64(m.cfg.MaxTokens))
	}
	return p
}

// Generate sends req without streaming and returns the first choice's message as
// the server sent it.
func (m *Model) Generate(ctx context.Context, req runner.Request) (runner.Reply, error) {
	rctx, mw, cause, stop := ep.Bound(ctx, ep.BodyLimit(req.MaxReplyBytes))
	defer stop()
	comp, err := m.chat.Completions.New(rctx, m.params(req), option.WithMiddleware(mw))
	if err != nil {
		return runner.Reply{}, m.wrap(ctx, cmp.Or(cause(), err))
	}
	if len(comp.Choices) == 0 {
		return runner.Reply{}, m.fail("the server answered without a choice", nil)
	}
	var msg map[string]any
	if err := json.Unmarshal([]byte(comp.Choices[0].Message.RawJSON()), &msg); err != nil || msg == nil {
		return runner.Reply{}, m.fail("the server's message is not a JSON object", err)
	}
	if _, ok := msg["role"]; !ok {
		msg["role"] = "assistant"
	}
	return runner.Reply{Message: msg, Usage: usage(comp.Usage)}, nil
}

// Stream sends req with streaming (usage included), passes every chunk to chunk
// and returns the message the SDK's accumulator built; when the accumulator
// refused a chunk, the reply's Message is nil (the runner then uses its stream
// buffer's message).
func (m *Model) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	p := m.params(req)
	p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	rctx, mw, cause, stop := ep.Bound(ctx, 0) // the runner counts what a stream carries
	defer stop()
	stream := m.chat.Completions.NewStreaming(rctx, p, option.WithMiddleware(mw))
	defer stream.Close()
	var acc oai.ChatCompletionAccumulator
	consistent := true
	for stream.Next() {
		c := stream.Current()
		consistent = acc.AddChunk(c) && consistent
		if chunk != nil {
			chunk(chunkMap(&c))
		}
	}
	reply := runner.Reply{Usage: usage(acc.Usage)}
	if consistent {
		// A chunk the accumulator refused (a server that changes the completion id
		// mid-stream) leaves Message nil: the runner then takes the message its
		// stream buffer assembled from every chunk.
		reply.Message = accumulated(&acc)
	}
	if err := stream.Err(); err != nil {
		return reply, m.wrap(ctx, cmp.Or(cause(), err))
	}
	if ctx.Err() != nil {
		return reply, m.wrap(ctx, ctx.Err())
	}
	return reply, nil
}

// chunkMap returns the fields of a chunk the stream decisions read (first
// choice's content, tool-call fragments, finish reason), as the decoded JSON
// object the kernel's Chat Completions assembler takes. Building it from the
// chunk the SDK has decoded already costs a fraction of decoding the chunk's JSON
// a second time.
func chunkMap(c *oai.ChatCompletionChunk) map[string]any {
	out := map[string]any{"object": "chat.completion.chunk"}
	if len(c.Choices) == 0 {
		out["choices"] = []any{}
		return out
	}
	ch := &c.Choices[0]
	delta := map[string]any{}
	if ch.Delta.Role != "" {
		delta["role"] = string(ch.Delta.Role)
	}
	if ch.Delta.Content != "" {
		delta["content"] = ch.Delta.Content
	}
	if len(ch.Delta.ToolCalls) > 0 {
		tcs := make([]any, len(ch.Delta.ToolCalls))
		for i, tc := range ch.Delta.ToolCalls {
			fn := map[string]any{"arguments": tc.Function.Arguments}
			if tc.Function.Name != "" {
				fn["name"] = tc.Function.Name
			}
			m := map[string]any{"index": float64(tc.Index), "function": fn}
			if tc.ID != "" {
				m["id"] = tc.ID
			}
			tcs[i] = m
		}
		delta["tool_calls"] = tcs
	}
	choice := map[string]any{"index": float64(ch.Index), "delta": delta}
	if ch.FinishReason != "" {
		choice["finish_reason"] = string(ch.FinishReason)
	}
	out["choices"] = []any{choice}
	return out
}

func usage(u oai.CompletionUsage) runner.Usage {
	return runner.Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens)}
}

// accumulated returns the first choice of acc as a Chat Completions message.
func accumulated(acc *oai.ChatCompletionAccumulator) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if len(acc.Choices) == 0 {
		return msg
	}
	cm := acc.Choices[0].Message
	if cm.Content != "" {
		msg["content"] = cm.Content
	}
	if len(cm.ToolCalls) > 0 {
		tcs := make([]any, len(cm.ToolCalls))
		for i, tc := range cm.ToolCalls {
			tcs[i] = map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Function.Name, "arguments": tc.Function.Arguments}}
		}
		msg["tool_calls"] = tcs
	}
	return msg
}

// maxDetail bounds the provider text an error quotes.
const maxDetail = 300

func (m *Model) fail(detail string, err error) error {
	return &runner.ModelError{Provider: "openai", Endpoint: m.endpoint, Model: m.cfg.Model, Detail: detail, Err: err}
}

// wrap turns an SDK error into one clear *runner.ModelError.
func (m *Model) wrap(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: request to %s ended: %w", m.endpoint, ctx.Err())
	}
	e := &runner.ModelError{Provider: "openai", Endpoint: m.endpoint, Model: m.cfg.Model, Err: err}
	var apierr *oai.Error
	var serr *ssestream.StreamError
	if kind, detail, ok := ep.Refusal(err); ok {
		e.Kind, e.Detail = kind, detail
		e.Hint = "if the API lives there, set the base URL to it (--base-url or OPENAI_BASE_URL)"
		if kind == runner.ErrReplyTooLarge {
			e.Hint = "ask for a shorter reply (Config.MaxTokens), or raise the limit (runner.WithMaxReplyBytes) for a server you trust"
		}
		return e
	}
	switch {
	case errors.As(err, &apierr):
		e.Status = apierr.StatusCode
		msg := textcut.Prefix(strings.TrimSpace(apierr.Message), maxDetail)
		lmsg := strings.ToLower(msg)
		e.Detail = fmt.Sprintf("HTTP %d", apierr.StatusCode)
		if msg != "" {
			e.Detail += ": " + msg
		}
		switch {
		case apierr.StatusCode == http.StatusUnauthorized || apierr.StatusCode == http.StatusForbidden:
			e.Kind = runner.ErrUnauthorized
			e.Hint = "set OPENAI_API_KEY (or Config.APIKey) to a key this endpoint accepts"
		case apierr.StatusCode == http.StatusTooManyRequests:
			e.Kind = runner.ErrRateLimited
			e.Detail += fmt.Sprintf(" (after %d retries)", m.retries)
			e.Hint = "wait and try again, or use a key with a higher rate limit"
		case apierr.Code == "model_not_found" || (apierr.StatusCode == http.StatusNotFound || apierr.StatusCode == http.StatusBadRequest) &&
			strings.Contains(lmsg, "model") && (strings.Contains(lmsg, "not found") || strings.Contains(lmsg, "does not exist") || strings.Contains(lmsg, "unknown") || strings.Contains(lmsg, "not exist")):
			e.Kind = runner.ErrUnknownModel
			e.Hint = "check the model name; the server's /models endpoint lists the models it serves"
		case apierr.StatusCode == http.StatusNotFound:
			e.Hint = "the endpoint has no chat/completions: check the base URL (it usually ends in /v1)"
		}
	case errors.As(err, &serr):
		e.Detail = "the stream reported an error: " + textcut.Prefix(serr.Message, maxDetail)
		e.Hint = "try again"
	default:
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is in Endpoint already
		}
		e.Kind = runner.ErrUnreachable
		e.Detail = textcut.Prefix(err.Error(), maxDetail)
		e.Hint = "is the server running? point the client elsewhere with --base-url or OPENAI_BASE_URL"
	}
	return e
}
