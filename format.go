package mcs

// Reply is one model output as the extraction strategies see it: plain text, or a
// decoded native message in a provider's own shape.
type Reply struct {
	// Message is the JSON object the output was: a native message in a provider's
	// shape, or any other object. It is nil when the output was text.
	Message map[string]any
	// Text is the output when it was text, the text content of a native Message, or
	// the JSON of any other object (which the text format then decodes).
	Text string
}

// ToolCall is one call found in a model output.
type ToolCall struct {
	// ID is the provider's call id; "" for calls parsed from text.
	ID string
	// Name is the tool name as the model wrote it.
	Name string
	// Arguments are the call's arguments; never nil for a well-formed call. Numbers
	// the kernel decodes are float64, except integers float64 cannot hold exactly,
	// which stay the json.Number of their digits.
	Arguments map[string]any
	// Err is set when the call names a tool but cannot run as written (for example
	// its arguments are not a JSON object); an owned call with Err fails without
	// running, and the error reaches the retry prompt.
	Err error
	// Start and End are the byte offsets of the call in the text, fence included,
	// for calls parsed from text; both 0 for native calls.
	Start, End int
}

// CallOutcome pairs an executed call with its outcome, for shaping history.
type CallOutcome struct {
	Call   ToolCall
	Result any
	Err    error
}

// ExtractionStrategy is one wire format: it recognises a model output in that
// format, extracts its calls, shapes the history entries and reassembles streamed
// chunks. BaseDriver asks its strategies in a fixed order; the first whose Match
// returns true handles the output. Implementations must be safe for concurrent use;
// the built-in ones are. Implement it to support a new provider format.
type ExtractionStrategy interface {
	// Format returns a short, stable name of the wire format, such as "openai-chat".
	Format() string
	// Match reports whether reply is in this format.
	Match(reply Reply) bool
	// Extract returns every call in reply, in order. Calls are returned whether or not
	// the driver owns them; the driver filters.
	Extract(reply Reply) []ToolCall
	// History returns the entries a client appends to its conversation after the
	// outcomes, which are the driver's owned calls in the order they ran.
	History(reply Reply, outcomes []CallOutcome) []map[string]any
	// MatchChunk reports whether chunk, the first chunk of a stream, is in this
	// format. chunk is a string or a decoded JSON object.
	MatchChunk(chunk any) bool
	// NewAssembler returns an assembler for one stream in this format.
	NewAssembler() Assembler
}

// Assembler reassembles one streamed response in its provider's own message shape.
// It is used by one StreamBuffer and need not be safe for concurrent use.
type Assembler interface {
	// Add folds one chunk into the message and returns the text it carried.
	Add(chunk any) (text string)
	// Message returns the message reassembled so far, in the shape
	// ProcessLLMResponse accepts. The map is the caller's.
	Message() map[string]any
	// Done reports whether the provider signalled the end of the message.
	Done() bool
	// Forming returns the names of native calls that have started, in order; a name
	// not known yet is "". A name, once known, never changes, and calls are only
	// appended, so that a caller can skip the names it has already seen. The slice
	// belongs to the assembler: callers must not modify it.
	Forming() []string
}
