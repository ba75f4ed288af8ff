package mcs

// Options holds the configuration of a [BaseDriver]. It is exported so that a
// driver built on BaseDriver can inspect what it was given; build it with [Option]
// values.
type Options struct {
	// Middleware is the initial tool middleware chain, outermost first.
	Middleware []ToolMiddleware
	// PromptStrategy writes the prompt and decodes text calls; nil means
	// DefaultPromptStrategy().
	PromptStrategy PromptStrategy
	// ToolDescription, when set, replaces the generated function description.
	ToolDescription string
	// SystemMessage, when set, replaces the generated system message.
	SystemMessage string
	// NativeTools reports whether a model accepts native (structured) tools; nil means
	// no model does.
	NativeTools func(model string) bool
	// ExtractionStrategies, when not empty, replaces the default chain of wire
	// formats; empty (or only nil entries) means the default chain, in
	// ProcessLLMResponse and in streaming alike.
	ExtractionStrategies []ExtractionStrategy
	// MaxCalls is the most calls one model reply may run; 0 means DefaultMaxCalls,
	// a negative value means no limit. See WithMaxCalls.
	MaxCalls int
}

// DefaultMaxCalls is the most owned calls one model reply runs when no WithMaxCalls
// option says otherwise.
const DefaultMaxCalls = 32

// WithMaxCalls sets the most owned calls one model reply may run, n >= 1; n < 0
// removes the limit, 0 restores DefaultMaxCalls. The limit counts the owned calls of
// one reply in the order they appear (for a stream, every call of the stream this
// driver owns, text and native alike). A call over the limit never runs, never
// reaches the middleware, and comes back as a failed CallRecord whose error wraps
// [ErrTooManyCalls] and says how many calls one reply may make, so that a reply
// holding thousands of calls cannot run thousands of tools (with credentials, consent
// prompts and history for each).
func WithMaxCalls(n int) Option {
	return func(o *Options) { o.MaxCalls = n }
}

// Option configures a [BaseDriver].
type Option func(*Options)

// WithMiddleware appends mw to the driver's middleware chain; the first entry is
// outermost. Nil entries are ignored.
func WithMiddleware(mw ...ToolMiddleware) Option {
	return func(o *Options) {
		for _, m := range mw {
			if m != nil {
				o.Middleware = append(o.Middleware, m)
			}
		}
	}
}

// WithPromptStrategy sets the prompt codec; nil keeps the default.
func WithPromptStrategy(ps PromptStrategy) Option {
	return func(o *Options) { o.PromptStrategy = ps }
}

// WithToolDescription replaces the generated function description with s.
func WithToolDescription(s string) Option {
	return func(o *Options) { o.ToolDescription = s }
}

// WithSystemMessage replaces the generated system message with s.
func WithSystemMessage(s string) Option {
	return func(o *Options) { o.SystemMessage = s }
}

// WithNativeTools sets the predicate that says whether a model supports native tool
// calling; [BaseDriver.NativeToolContext] consults it.
func WithNativeTools(supports func(model string) bool) Option {
	return func(o *Options) { o.NativeTools = supports }
}

// WithExtractionStrategies replaces the default chain of wire formats with s, asked
// in the given order. Nil entries are ignored; with no strategy left the default
// chain stays, in ProcessLLMResponse and in the driver's stream buffers alike (as
// NewStreamBuffer with no strategies). The default chain is
// ChatCompletionsFormat, ResponsesFormat, AnthropicFormat, GeminiFormat and
// TextFormat over the driver's prompt strategy.
func WithExtractionStrategies(s ...ExtractionStrategy) Option {
	return func(o *Options) {
		o.ExtractionStrategies = nil
		for _, e := range s {
			if e != nil {
				o.ExtractionStrategies = append(o.ExtractionStrategies, e)
			}
		}
	}
}
