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
	// Formats, when not empty, replaces the default chain of wire formats; empty
	// means the default chain, in ProcessLLMResponse and in streaming alike. Only
	// the formats that are StreamingFormats take part in streaming.
	Formats []WireFormat
	// MaxCalls is the most calls one model reply may run; 0 means DefaultMaxCalls,
	// a negative value means no limit. See WithMaxCalls.
	MaxCalls int
	// MaxArgumentBytes is the largest arguments, as JSON, a call may run with; 0
	// means DefaultMaxArgumentBytes, a negative value means no limit. See
	// WithMaxArgumentBytes.
	MaxArgumentBytes int
	// MaxResultBytes is the most bytes of one call's result (or error) that enter
	// the history; 0 means DefaultMaxResultBytes, a negative value means no limit.
	// See WithMaxResultBytes.
	MaxResultBytes int
}

// The default size limits of a BaseDriver (see WithMaxArgumentBytes and
// WithMaxResultBytes).
const (
	// DefaultMaxArgumentBytes is the largest arguments, as JSON, one call runs
	// with: 1 MiB.
	DefaultMaxArgumentBytes = 1 << 20
	// DefaultMaxResultBytes is the most bytes of one result that enter the
	// history: 256 KiB, about 64,000 tokens, more than many models' whole context.
	DefaultMaxResultBytes = 256 << 10
)

// WithMaxArgumentBytes sets the largest arguments one call may run with, n bytes
// of JSON (n >= 1); n < 0 removes the limit, 0 restores DefaultMaxArgumentBytes. A
// call over the limit never runs, never reaches the middleware, and comes back as
// a failed CallRecord whose error wraps [ErrArgumentsTooLarge] and says the limit.
// Its arguments stay out of the history: a native call is sent back with {}, and
// in text the call's own text in the assistant message is replaced by a short
// note. The record keeps the arguments as extracted.
func WithMaxArgumentBytes(n int) Option {
	return func(o *Options) { o.MaxArgumentBytes = n }
}

// WithMaxResultBytes sets the most bytes of one call's result that enter the
// history, n >= 1; n < 0 removes the limit, 0 restores DefaultMaxResultBytes. A
// longer result (as the text the model reads: a string as is, any other value as
// JSON) or error message is cut in the middle: its head and its tail are kept,
// with a notice between them that says how many bytes were cut, together at most n
// bytes; the retry prompt repeats the cut error. The CallRecord keeps the value
// and the error as the tool returned them.
func WithMaxResultBytes(n int) Option {
	return func(o *Options) { o.MaxResultBytes = n }
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
// prompts and history for each). The calls over the limit are answered in the
// history by one message, the first one's, which says that it and every later call
// of the reply were not run: a native assistant message is sent back with the
// calls that ran and that one (every call it holds has its answer), and a stream's
// later rounds carry only their text.
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

// WithFormats replaces the default chain of wire formats with f, asked in the
// given order; the first whose Match accepts an output handles it. Nil entries are
// ignored; with no format left the default chain stays. The formats that implement
// [StreamingFormat] are the ones the driver's stream buffers recognise, in the same
// order; a driver with none of them streams with the default chain. The default
// chain is ChatCompletionsFormat, ResponsesFormat, AnthropicFormat, GeminiFormat
// and TextFormat over the driver's prompt strategy (see [DefaultFormats]). The
// driver decodes text calls while streaming with the first [TextFormat] of the
// chain, and runs none when the chain has none.
func WithFormats(f ...WireFormat) Option {
	return func(o *Options) {
		o.Formats = nil
		for _, e := range f {
			if e != nil {
				o.Formats = append(o.Formats, e)
			}
		}
	}
}

// WithExtractionStrategies replaces the default chain of wire formats with s, as
// [WithFormats] does.
//
// Deprecated: use WithFormats.
func WithExtractionStrategies(s ...ExtractionStrategy) Option {
	f := make([]WireFormat, 0, len(s))
	for _, e := range s {
		if e != nil {
			f = append(f, e)
		}
	}
	return WithFormats(f...)
}
