package mcs

import "context"

// ToolDriver is the technical bridge to a system: it lists tools and executes them.
// It has no knowledge of LLMs. Implementations must be safe for concurrent use.
type ToolDriver interface {
	// Meta returns the static data sheet of the driver type.
	Meta() Meta
	// ListTools returns the tools the driver publishes, in a stable order.
	ListTools(ctx context.Context) ([]Tool, error)
	// ExecuteTool runs the named tool with the given arguments and returns its result.
	// args is never nil when called by BaseDriver. An error means the call failed; a
	// control signal meant for the model (a denial, an auth challenge) is a result.
	ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error)
}

// Driver is the LLM-facing side: it writes the prompt and processes the model's
// output. Implementations keep no conversation state and are safe for concurrent use.
type Driver interface {
	// Meta returns the static data sheet of the driver type.
	Meta() Meta
	// FunctionDescription returns the tool specification as text for model (which may
	// be empty for "any model").
	FunctionDescription(ctx context.Context, model string) (string, error)
	// SystemMessage returns a complete system prompt that embeds the tool
	// specification and tells the model how to call a tool.
	SystemMessage(ctx context.Context, model string) (string, error)
	// ProcessLLMResponse finds the calls in response that the driver owns, executes
	// them and returns a self-contained Response. It never panics and never returns an
	// error: failures are reported in the Response.
	ProcessLLMResponse(ctx context.Context, response any) Response
}

// SupportsHealthcheck is implemented by drivers that can report the health of the
// system behind them.
type SupportsHealthcheck interface {
	// Healthcheck reports the current health; it honours ctx's deadline.
	Healthcheck(ctx context.Context) HealthResult
}

// SupportsNativeTools is implemented by drivers that can hand tools to provider APIs
// that accept them as structured objects.
type SupportsNativeTools interface {
	// NativeToolContext returns the system message and tool objects for model.
	NativeToolContext(ctx context.Context, model string) (NativeToolContext, error)
}

// SupportsStreaming is implemented by drivers that can decide on a partial,
// streamed model response. A driver implements it with the buffer's protocol
// (StreamBuffer.View, Hold, Claim, MarkExecuted, CallNames and [StreamState]),
// as BaseDriver does, so that drivers of any kind share one buffer.
type SupportsStreaming interface {
	// NewStreamBuffer returns a buffer for one streamed model response.
	NewStreamBuffer() *StreamBuffer
	// ProcessStream decides on the buffer's current state: execute a complete call,
	// hold display while a call forms, or let text flow.
	ProcessStream(ctx context.Context, buf *StreamBuffer) Response
}

// SupportsToolMiddleware is implemented by drivers that thread their tool calls
// through a [ToolMiddleware] chain.
type SupportsToolMiddleware interface {
	// AddMiddleware appends mw innermost, after the middleware already installed. It
	// takes effect for the next call and is safe while calls are running.
	AddMiddleware(mw ...ToolMiddleware)
}

// HealthStatus is the outcome of a health check.
type HealthStatus string

// Health statuses, from best to worst: OK, UNKNOWN, WARNING, ERROR.
const (
	HealthOK      HealthStatus = "OK"
	HealthWarning HealthStatus = "WARNING"
	HealthError   HealthStatus = "ERROR"
	HealthUnknown HealthStatus = "UNKNOWN"
)

// Severity orders statuses from best (0, OK) to worst (3, ERROR); a status that is
// not one of the constants counts as UNKNOWN.
func (s HealthStatus) Severity() int {
	switch s {
	case HealthOK:
		return 0
	case HealthWarning:
		return 2
	case HealthError:
		return 3
	default:
		return 1
	}
}

// HealthResult is the outcome of [SupportsHealthcheck.Healthcheck].
type HealthResult struct {
	Status HealthStatus
	Detail string
}

// NativeToolContext is what a client needs to call a provider API with native tool
// calling: a behavioural system message without the inlined tool specification and
// the tools as OpenAI function tools.
type NativeToolContext struct {
	SystemMessage string
	// Tools are the tools to send, one [FunctionTool] each (json.Marshal gives
	// {"type":"function","function":{name, description, parameters}}); nil when
	// the model does not support native tools.
	Tools []FunctionTool
}
