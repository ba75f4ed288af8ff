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
	// ExtractionStrategies, when non-nil, replaces the default chain of wire formats.
	ExtractionStrategies []ExtractionStrategy
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
// in the given order. Nil entries are ignored. The default chain is
// ChatCompletionsFormat, ResponsesFormat, AnthropicFormat, GeminiFormat and
// TextFormat over the driver's prompt strategy.
func WithExtractionStrategies(s ...ExtractionStrategy) Option {
	return func(o *Options) {
		o.ExtractionStrategies = []ExtractionStrategy{}
		for _, e := range s {
			if e != nil {
				o.ExtractionStrategies = append(o.ExtractionStrategies, e)
			}
		}
	}
}
