package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the sampling caps of [Config].
const (
	// DefaultMaxSamplingRequests bounds the sampling requests of one session.
	DefaultMaxSamplingRequests = 20
	// DefaultMaxSamplingTokens bounds the tokens the sampling requests of one
	// session may use, input and output together.
	DefaultMaxSamplingTokens = 50000
	// maxSamplingMessages bounds the messages of one sampling request.
	maxSamplingMessages = 1000
)

// SamplingRequest is a server's sampling/createMessage request as the driver
// hands it to a [SamplingFunc]: plain text, after consent.
type SamplingRequest struct {
	// System is the server's system prompt; "" when it sent none.
	System string
	// Messages is the conversation the server wants continued, oldest first.
	Messages []SamplingMessage
	// MaxTokens is the most tokens the reply may use: what the server asked
	// for, lowered to what is left of the session's token cap.
	MaxTokens int
	// ModelHints are the model names the server prefers, best first; a hint,
	// never a requirement.
	ModelHints []string
}

// SamplingMessage is one message of a [SamplingRequest].
type SamplingMessage struct {
	Role string // "user" or "assistant"
	// Text is the message's text; an image or audio the server sent is
	// replaced by a line naming its type and size.
	Text string
}

// SamplingReply is the model's answer to a [SamplingRequest].
type SamplingReply struct {
	Text       string
	Model      string // the model that answered
	StopReason string // such as "endTurn" or "maxTokens"; may be ""
	// InputTokens and OutputTokens are what the provider reported; when both
	// are 0 the driver counts a token per 4 bytes of the request and reply.
	InputTokens, OutputTokens int
}

// SamplingFunc answers a sampling request with a model. It has the shape of a
// runner.Model's Generate; the mcs command adapts its model to it. It is
// called after consent, one request at a time, and must honour ctx.
type SamplingFunc func(ctx context.Context, req SamplingRequest) (SamplingReply, error)

// samplingState is the use of sampling by the current session.
type samplingState struct {
	lock     chan struct{} // one request at a time
	mu       sync.Mutex
	cs       *mcpsdk.ClientSession
	requests int
	tokens   int
}

// codeDeclined is the JSON-RPC error code of a sampling request the user or a
// cap declined (the specification's code for a rejection by the user).
const codeDeclined = -1

func declined(format string, args ...any) error {
	return &jsonrpc.Error{Code: codeDeclined, Message: fmt.Sprintf(format, args...)}
}

// samplingHandler returns the handler of sampling/createMessage, or nil when
// no SamplingFunc is configured: then the driver does not declare sampling and
// the SDK answers every such request as unsupported.
func (d *ToolDriver) samplingHandler() func(context.Context, *mcpsdk.CreateMessageRequest) (*mcpsdk.CreateMessageResult, error) {
	if d.cfg.Sampling == nil {
		return nil
	}
	d.sampling.lock = make(chan struct{}, 1)
	return d.sample
}

// sample answers one sampling request: bounded, shown in full to Consent,
// then given to the SamplingFunc. Requests are answered one at a time.
func (d *ToolDriver) sample(ctx context.Context, req *mcpsdk.CreateMessageRequest) (*mcpsdk.CreateMessageResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.life, cancel)
	defer stop()
	if req == nil || req.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sampling/createMessage without params"}
	}
	if d.cfg.Consent == nil {
		d.log.Warn("mcp: sampling request declined: no consent handler configured", "server", d.server)
		return nil, declined("sampling declined: the client asks a person before it samples, and nobody can be asked here")
	}
	select {
	case d.sampling.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-d.sampling.lock }()

	sr, err := samplingRequest(req.Params)
	if err != nil {
		d.log.Warn("mcp: sampling request refused", "server", d.server, "error", err)
		return nil, declined("sampling refused: %v", err)
	}
	left, err := d.takeSamplingRequest(req.Session)
	if err != nil {
		d.log.Warn("mcp: sampling request refused", "server", d.server, "error", err)
		return nil, declined("sampling refused: %v", err)
	}
	sr.MaxTokens = min(max(sr.MaxTokens, 1), left)

	msgs := make([]any, len(sr.Messages))
	for i, m := range sr.Messages {
		msgs[i] = m.Role + ": " + m.Text
	}
	args := map[string]any{"server": d.server, "messages": msgs, "max_tokens": sr.MaxTokens}
	if sr.System != "" {
		args["system"] = sr.System
	}
	if len(sr.ModelHints) > 0 {
		args["model_hints"] = strings.Join(sr.ModelHints, ", ")
	}
	ok, err := d.cfg.Consent(ctx, "sampling", args)
	switch {
	case err != nil:
		d.log.Warn("mcp: sampling request declined: no decision", "server", d.server, "error", err)
		return nil, declined("sampling declined: no decision could be had")
	case !ok:
		return nil, declined("sampling declined by the user")
	}
	reply, err := d.cfg.Sampling(ctx, sr)
	if err != nil {
		d.log.Warn("mcp: sampling failed", "server", d.server, "error", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "sampling failed: the client's model gave no answer"}
	}
	used := reply.InputTokens + reply.OutputTokens
	if used == 0 {
		n := len(sr.System) + len(reply.Text)
		for _, m := range sr.Messages {
			n += len(m.Text)
		}
		used = n/4 + 1
	}
	d.spendSamplingTokens(req.Session, used)
	return &mcpsdk.CreateMessageResult{
		Content:    &mcpsdk.TextContent{Text: cut(reply.Text)},
		Model:      reply.Model,
		Role:       "assistant",
		StopReason: reply.StopReason,
	}, nil
}

// samplingRequest converts and bounds the params of a request.
func samplingRequest(p *mcpsdk.CreateMessageParams) (SamplingRequest, error) {
	if len(p.Messages) == 0 {
		return SamplingRequest{}, fmt.Errorf("the request holds no messages")
	}
	if len(p.Messages) > maxSamplingMessages {
		return SamplingRequest{}, fmt.Errorf("the request holds %d messages, more than %d", len(p.Messages), maxSamplingMessages)
	}
	sr := SamplingRequest{System: p.SystemPrompt, MaxTokens: int(min(max(p.MaxTokens, 0), 1<<31-1))}
	size := len(sr.System)
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		role := string(m.Role)
		if role != "user" && role != "assistant" {
			return SamplingRequest{}, fmt.Errorf("a message has the role %q; only user and assistant are allowed", oneLine(role))
		}
		text := ""
		switch c := m.Content.(type) {
		case *mcpsdk.TextContent:
			text = c.Text
		default:
			text = summarize(c)
		}
		size += len(text)
		if size > MaxResultBytes {
			return SamplingRequest{}, fmt.Errorf("the messages hold more than %d bytes", MaxResultBytes)
		}
		sr.Messages = append(sr.Messages, SamplingMessage{Role: role, Text: text})
	}
	if mp := p.ModelPreferences; mp != nil {
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" && len(sr.ModelHints) < 5 {
				sr.ModelHints = append(sr.ModelHints, oneLine(h.Name))
			}
		}
	}
	return sr, nil
}

// takeSamplingRequest counts one request of cs against the caps and returns
// the tokens left; over a cap it is an error naming it.
func (d *ToolDriver) takeSamplingRequest(cs *mcpsdk.ClientSession) (int, error) {
	st := &d.sampling
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cs != cs { // a new session starts with the full caps
		st.cs, st.requests, st.tokens = cs, 0, 0
	}
	if st.requests >= d.cfg.MaxSamplingRequests {
		return 0, fmt.Errorf("the session made %d sampling requests, the most allowed (Config.MaxSamplingRequests)", st.requests)
	}
	if st.tokens >= d.cfg.MaxSamplingTokens {
		return 0, fmt.Errorf("the session's sampling used %d tokens, the most allowed being %d (Config.MaxSamplingTokens)", st.tokens, d.cfg.MaxSamplingTokens)
	}
	st.requests++
	return d.cfg.MaxSamplingTokens - st.tokens, nil
}

// spendSamplingTokens counts the tokens a request of cs used.
func (d *ToolDriver) spendSamplingTokens(cs *mcpsdk.ClientSession, n int) {
	st := &d.sampling
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cs == cs {
		st.tokens += n
	}
}
