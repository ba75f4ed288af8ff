// Package anthropic is a runner.Model on the Anthropic Messages API, through the
// official SDK (github.com/anthropics/anthropic-sdk-go/v2).
//
// History entries are Messages turns ({"role":"user"|"assistant","content":
// string or blocks}) and are sent as they are, with one conversion: the Messages
// API has no system role inside messages, so a system-role entry (a text-protocol
// tool result of a prompt codec that uses that role) is sent as a user turn.
// Native tools (OpenAI function-tool objects) become Messages tools whose
// input_schema is the function's parameters object, unchanged, so nothing of the
// schema is lost.
package anthropic

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/textcut"
	"github.com/mcs-go/mcs/runner"
	ep "github.com/mcs-go/mcs/runner/internal/endpoint"
)

// DefaultBaseURL is the endpoint when neither Config.BaseURL nor
// ANTHROPIC_BASE_URL is set.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is the reply limit when Config.MaxTokens is 0.
const DefaultMaxTokens = 4096

// Config configures a Model.
type Config struct {
	// Model is the model name, such as "claude-sonnet-4-5"; required.
	Model string
	// BaseURL is the API's base URL (without /v1); "" uses ANTHROPIC_BASE_URL,
	// else DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key; "" uses ANTHROPIC_API_KEY. Required.
	APIKey string
	// HTTPClient sends the requests; nil uses a client on http.DefaultTransport.
	// The Model uses a copy whose redirects stay on the base URL's origin (the
	// same scheme, host and port): a redirect elsewhere is not followed and the
	// request fails with an error wrapping runner.ErrRedirectRefused, so the key
	// never leaves that origin. The client's own redirect policy, if any, is asked
	// after that check.
	HTTPClient *http.Client
	// MaxTokens caps the tokens of each reply; 0 means DefaultMaxTokens.
	MaxTokens int
	// MaxRetries is how often the SDK retries a failed request (connection errors,
	// 408, 409, 429, 5xx) with its exponential backoff; 0 keeps the SDK's default
	// (2), a negative value disables retries.
	MaxRetries int
}

// Model is a runner.Model on the Messages API. It is safe for concurrent use.
type Model struct {
	cfg      Config
	endpoint string
	client   ant.Client
	retries  int
}

var _ runner.Model = (*Model)(nil)

// New returns a Model for cfg. It fails when cfg.Model is empty, when the base
// URL is not an absolute http or https URL, and when no key is configured (an
// error wrapping runner.ErrNoAPIKey). It sends nothing.
func New(cfg Config) (*Model, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("anthropic: no model name: set Config.Model (for example claude-sonnet-4-5)")
	}
	endpoint, u, err := ep.Resolve("anthropic", cfg.BaseURL, "ANTHROPIC_BASE_URL", DefaultBaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	key := ep.Key(cfg.APIKey, "ANTHROPIC_API_KEY")
	if key == "" {
		return nil, &runner.ModelError{Provider: "anthropic", Endpoint: endpoint, Model: cfg.Model, Kind: runner.ErrNoAPIKey,
			Hint: "set ANTHROPIC_API_KEY (or Config.APIKey)"}
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	// The key goes only to the configured origin: a redirect elsewhere is refused.
	opts := []option.RequestOption{option.WithBaseURL(endpoint), option.WithAPIKey(key),
		option.WithHTTPClient(ep.Client(cfg.HTTPClient, u))}
	retries := 2
	if cfg.MaxRetries != 0 {
		retries = max(cfg.MaxRetries, 0)
		opts = append(opts, option.WithMaxRetries(retries))
	}
	return &Model{cfg: cfg, endpoint: endpoint, client: ant.NewClient(opts...), retries: retries}, nil
}

// Name returns Config.Model.
func (m *Model) Name() string { return m.cfg.Model }

// Endpoint returns the base URL requests go to.
func (m *Model) Endpoint() string { return m.endpoint }

func (m *Model) params(req runner.Request) ant.MessageNewParams {
	p := ant.MessageNewParams{Model: ant.Model(m.cfg.Model), MaxTokens: int64(m.cfg.MaxTokens)}
	if req.System != "" {
		p.System = []ant.TextBlockParam{{Text: req.System}}
	}
	p.Messages = make([]ant.MessageParam, 0, len(req.Messages))
	for _, e := range req.Messages {
		if e = turn(e); e != nil {
			p.Messages = append(p.Messages, param.Override[ant.MessageParam](e))
		}
	}
	if len(req.Tools) > 0 {
		p.Tools = make([]ant.ToolUnionParam, 0, len(req.Tools))
		for _, t := range req.Tools {
			p.Tools = append(p.Tools, param.Override[ant.ToolUnionParam](Tool(t)))
		}
	}
	return p
}

// turn returns e as the Messages API takes it: a system-role entry becomes a
// user turn; an entry without content (which the API rejects) is left out (nil);
// anything else is e itself.
func turn(e map[string]any) map[string]any {
	switch c := e["content"].(type) {
	case nil:
		return nil
	case string:
		if c == "" {
			return nil
		}
	case []any:
		if len(c) == 0 {
			return nil
		}
	}
	if e["role"] == "system" {
		out := make(map[string]any, len(e))
		for k, v := range e {
			out[k] = v
		}
		out["role"] = "user"
		return out
	}
	return e
}

// Tool converts a native tool into a Messages tool: {"name", "description",
// "input_schema"}, the parameters object used unchanged (every keyword kept:
// $defs, additionalProperties, enum, ...), not copied. An empty description is
// left out; nil parameters become {"type":"object"}.
func Tool(t mcs.FunctionTool) map[string]any {
	schema := t.Parameters
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	out := map[string]any{"name": t.Name, "input_schema": schema}
	if t.Description != "" {
		out["description"] = t.Description
	}
	return out
}

// Generate sends req without streaming and returns the assistant turn.
func (m *Model) Generate(ctx context.Context, req runner.Request) (runner.Reply, error) {
	rctx, mw, cause, stop := ep.Bound(ctx, ep.BodyLimit(req.MaxReplyBytes))
	defer stop()
	msg, err := m.client.Messages.New(rctx, m.params(req), option.WithMiddleware(mw))
	if err != nil {
		return runner.Reply{}, m.wrap(ctx, cmp.Or(cause(), err))
	}
	out, err := assistant(msg.RawJSON())
	if err != nil {
		return runner.Reply{}, m.fail("the server's message is not a JSON object", err)
	}
	return runner.Reply{Message: out, Usage: usage(msg.Usage)}, nil
}

// Stream sends req with streaming, passes every event's JSON to chunk and returns
// the turn the SDK's accumulator built.
func (m *Model) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	rctx, mw, cause, stop := ep.Bound(ctx, 0) // the runner counts what a stream carries
	defer stop()
	stream := m.client.Messages.NewStreaming(rctx, m.params(req), option.WithMiddleware(mw))
	defer stream.Close()
	var acc ant.Message
	var accErr error
	for stream.Next() {
		ev := stream.Current()
		if accErr == nil {
			accErr = acc.Accumulate(ev)
		}
		if chunk != nil {
			chunk(json.RawMessage(ev.RawJSON()))
		}
	}
	reply := runner.Reply{Usage: usage(acc.Usage)}
	if err := stream.Err(); err != nil {
		return reply, m.wrap(ctx, cmp.Or(cause(), err))
	}
	if ctx.Err() != nil {
		return reply, m.wrap(ctx, ctx.Err())
	}
	if accErr != nil {
		return reply, m.fail("the stream is not a valid message", accErr)
	}
	out, err := assistant(acc.RawJSON())
	if err != nil {
		return reply, m.fail("the stream is not a valid message", err)
	}
	reply.Message = out
	return reply, nil
}

// assistant returns the role and content of a Messages response: the turn that
// goes into the history (the response's other fields are not message fields).
func assistant(raw string) (map[string]any, error) {
	var full map[string]any
	if err := json.Unmarshal([]byte(raw), &full); err != nil {
		return nil, err
	}
	if full == nil {
		return nil, errors.New("null message")
	}
	content, _ := full["content"].([]any)
	if content == nil {
		content = []any{}
	}
	return map[string]any{"role": "assistant", "content": content}, nil
}

func usage(u ant.Usage) runner.Usage {
	return runner.Usage{
		InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		OutputTokens: int(u.OutputTokens),
	}
}

const maxDetail = 300

func (m *Model) fail(detail string, err error) error {
	return &runner.ModelError{Provider: "anthropic", Endpoint: m.endpoint, Model: m.cfg.Model, Detail: detail, Err: err}
}

// wrap turns an SDK error into one clear *runner.ModelError.
func (m *Model) wrap(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: request to %s ended: %w", m.endpoint, ctx.Err())
	}
	e := &runner.ModelError{Provider: "anthropic", Endpoint: m.endpoint, Model: m.cfg.Model, Err: err}
	var apierr *ant.Error
	if kind, detail, ok := ep.Refusal(err); ok {
		e.Kind, e.Detail = kind, detail
		e.Hint = "if the API lives there, set the base URL to it (--base-url or ANTHROPIC_BASE_URL)"
		if kind == runner.ErrReplyTooLarge {
			e.Hint = "ask for a shorter reply (Config.MaxTokens), or raise the limit (runner.WithMaxReplyBytes) for a server you trust"
		}
		return e
	}
	switch {
	case errors.As(err, &apierr) && apierr.StatusCode < 300:
		// An error event inside a stream that had started well.
		e.Detail = "the stream reported an error"
		if msg := strings.TrimSpace(apierr.Message); msg != "" {
			e.Detail += ": " + textcut.Prefix(msg, maxDetail)
		}
		e.Hint = "try again"
	case errors.As(err, &apierr):
		e.Status = apierr.StatusCode
		msg := textcut.Prefix(strings.TrimSpace(apierr.Message), maxDetail)
		e.Detail = fmt.Sprintf("HTTP %d", apierr.StatusCode)
		if msg != "" {
			e.Detail += ": " + msg
		}
		lmsg := strings.ToLower(msg)
		switch {
		case apierr.StatusCode == http.StatusUnauthorized || apierr.StatusCode == http.StatusForbidden:
			e.Kind = runner.ErrUnauthorized
			e.Hint = "set ANTHROPIC_API_KEY (or Config.APIKey) to a key this endpoint accepts"
		case apierr.StatusCode == http.StatusTooManyRequests:
			e.Kind = runner.ErrRateLimited
			e.Detail += fmt.Sprintf(" (after %d retries)", m.retries)
			e.Hint = "wait and try again, or use a key with a higher rate limit"
		case (apierr.StatusCode == http.StatusNotFound || apierr.StatusCode == http.StatusBadRequest) && strings.Contains(lmsg, "model"):
			e.Kind = runner.ErrUnknownModel
			e.Hint = "check the model name; GET /v1/models lists the models the key can use"
		case apierr.StatusCode == http.StatusNotFound:
			e.Hint = "the endpoint has no /v1/messages: check the base URL (without /v1)"
		}
	case strings.HasPrefix(err.Error(), "received error while streaming"):
		e.Detail = textcut.Prefix(err.Error(), maxDetail)
		e.Hint = "try again"
	default:
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		e.Kind = runner.ErrUnreachable
		e.Detail = textcut.Prefix(err.Error(), maxDetail)
		e.Hint = "is the server running? point the client elsewhere with --base-url or ANTHROPIC_BASE_URL"
	}
	return e
}
