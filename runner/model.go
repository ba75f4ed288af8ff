package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcs-go/mcs"
)

// Model is one chat model behind a provider API, as the Runner sees it. The
// runner knows nothing of any provider: an adapter (runner/openai,
// runner/anthropic, or one a user writes) turns a Request into the provider's
// request and the provider's answer into a Reply.
//
// History entries and reply messages are in the provider's own wire shape (the
// shape mcs.Driver.ProcessLLMResponse and mcs.StreamBuffer accept), so they can be
// handed to a driver as they are and sent back to the same provider unchanged. An
// adapter converts only what its provider cannot take.
//
// Implementations must be safe for concurrent use: one Model may serve several
// Runs at once.
type Model interface {
	// Name returns the model name. The runner passes it to the driver's
	// SystemMessage and NativeToolContext, so a driver's per-model choices apply.
	Name() string
	// Generate sends req as one non-streaming request and returns the complete
	// reply. It honours ctx: when ctx ends it returns promptly with an error
	// wrapping ctx's error.
	Generate(ctx context.Context, req Request) (Reply, error)
	// Stream sends req as a streaming request and calls chunk, in order, with every
	// provider chunk as it arrives, in the provider's wire shape (for example the
	// JSON bytes of one server-sent event's data), before it returns the complete
	// reply. chunk is called from the goroutine that called Stream. An error event
	// in the stream, a stream that breaks off and the end of ctx are errors; the
	// chunks delivered before stay delivered.
	Stream(ctx context.Context, req Request, chunk func(chunk any)) (Reply, error)
}

// Request is one model request.
type Request struct {
	// System is the system message; "" sends none.
	System string
	// Messages is the conversation so far, oldest first, in the provider's wire
	// shape. The adapter must not modify it.
	Messages []map[string]any
	// Tools are the native tools, as mcs.NativeToolContext returns them; nil
	// for the text protocol. The adapter converts them into its provider's
	// tool shape without losing any part of the parameter schema (their JSON is
	// the Chat Completions tool object).
	Tools []mcs.FunctionTool
	// MaxReplyBytes is the most bytes of text, reasoning and call arguments the
	// reply may hold (WithMaxReplyBytes): 0 means DefaultMaxReplyBytes, a negative
	// value no limit. The runner enforces it on every Model, on what Generate
	// returns and on what Stream hands over, and cancels a stream that passes it;
	// an adapter may also bound what it reads (the adapters of this module read at
	// most 4×MaxReplyBytes + 1 MiB of a response body that is not streamed).
	MaxReplyBytes int
}

// Reply is one complete model answer.
type Reply struct {
	// Message is the assistant message in the provider's wire shape, ready for
	// the history and for ProcessLLMResponse.
	Message map[string]any
	// Usage is what the provider reported for this request.
	Usage Usage
}

// Usage counts tokens as the provider reports them.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// Errors a Model adapter wraps (in a *ModelError) so that a caller can branch with
// errors.Is whatever the provider.
var (
	// ErrNoAPIKey: no key was configured for a provider that needs one.
	ErrNoAPIKey = errors.New("no API key")
	// ErrUnauthorized: the provider rejected the key (HTTP 401 or 403).
	ErrUnauthorized = errors.New("API key rejected")
	// ErrRateLimited: the provider still answered 429 after the SDK's retries.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnreachable: no HTTP answer came from the endpoint (connection refused,
	// DNS failure, TLS failure, a stream cut off).
	ErrUnreachable = errors.New("model endpoint unreachable")
	// ErrUnknownModel: the provider does not serve the model named.
	ErrUnknownModel = errors.New("unknown model")
	// ErrRedirectRefused: the endpoint redirected the request to another origin
	// (another scheme, host or port, https to http among them); the request was
	// not sent there, so the key stays with the configured origin.
	ErrRedirectRefused = errors.New("redirect to another origin refused")
	// ErrReplyTooLarge: one reply passed the limit of WithMaxReplyBytes; the
	// request was cancelled.
	ErrReplyTooLarge = errors.New("reply too large")
)

// ModelError is the one error type of the adapters of this module: what failed,
// against which endpoint, and what to do about it.
type ModelError struct {
	Provider string // "openai", "anthropic"
	Endpoint string // the base URL the request went to
	Model    string
	Status   int    // HTTP status; 0 when no answer arrived
	Kind     error  // one of the Err values above, or nil
	Detail   string // what happened, with the provider's message when there is one
	Hint     string // what to do
	Err      error  // the SDK's error, for errors.As
}

// Error returns "<provider> model <model> at <endpoint>: <kind>: <detail>; <hint>";
// the provider and the endpoint are left out when they are not known.
func (e *ModelError) Error() string {
	msg := fmt.Sprintf("model %q", e.Model)
	if e.Provider != "" {
		msg = e.Provider + " " + msg
	}
	if e.Endpoint != "" {
		msg += " at " + e.Endpoint
	}
	if e.Kind != nil {
		msg += ": " + e.Kind.Error()
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Unwrap returns Kind and Err, so errors.Is(err, runner.ErrUnreachable) and
// errors.As(err, &sdkError) both work.
func (e *ModelError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
