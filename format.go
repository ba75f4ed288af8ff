package mcs

// Message is one conversation entry in its provider's wire shape, such as
// {"role":"assistant","content":...,"tool_calls":[...]} or a tool result. Messages
// stay maps: they round-trip to the provider unchanged, with keys the kernel does
// not know kept as they came.
type Message = map[string]any

// Output is one model output as the wire formats see it: plain text, or a decoded
// native message in a provider's own shape. [NewOutput] builds one from any value
// ProcessLLMResponse accepts.
type Output struct {
	// Message is the JSON object the output was: a native message in a provider's
	// shape, or any other object. It is nil when the output was text.
	Message Message
	// Text is the output when it was text, the text content of a native Message, or
	// the JSON of any other object (which the text format then decodes).
	Text string
}

// Reply is the former name of [Output].
//
// Deprecated: use Output.
type Reply = Output

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
	// Index is the call's position among all calls of the output, owned or not,
	// counted from 0 in the order the format extracted them. A client that answers
	// every call of a native message (see [Response.Foreign]) merges the driver's
	// records and the foreign calls by it.
	Index int
}

// WireFormat is one provider's wire format: it recognises a model output in that
// format, extracts its calls and shapes the history entries that answer them. A
// BaseDriver asks its formats in a fixed order; the first whose Match returns true
// handles the output. Implementations must be safe for concurrent use; the built-in
// ones are. Implement it to support a new provider format, and [StreamingFormat]
// as well to stream it.
type WireFormat interface {
	// Format returns a short, stable name of the wire format, such as "openai-chat".
	Format() string
	// Match reports whether out is in this format.
	Match(out Output) bool
	// Extract returns every call in out, in order. Calls are returned whether or not
	// the driver owns them; the driver filters, and sets each call's Index.
	Extract(out Output) []ToolCall
	// History returns the entries a client appends to its conversation: the output
	// itself (as the provider expects to see it again) and one answer per record of
	// calls, in their order. The records are the caller's: History must not modify
	// them. A result that must be cut to a size limit is cut before History sees it.
	History(out Output, calls []CallRecord) []Message
}

// StreamingFormat is a [WireFormat] that can also reassemble a stream of provider
// chunks, as http.Flusher adds to http.ResponseWriter. Only streaming formats take
// part in a [StreamBuffer]; a driver's formats that do not stream are used for whole
// outputs only.
type StreamingFormat interface {
	WireFormat
	// MatchChunk reports whether chunk, the first chunk of a stream, is in this
	// format. chunk is a string or a decoded JSON object.
	MatchChunk(chunk any) bool
	// NewAssembler returns an assembler for one stream in this format.
	NewAssembler() Assembler
}

// ExtractionStrategy is the former name of [StreamingFormat].
//
// Deprecated: use StreamingFormat, or WireFormat for a format that does not stream.
type ExtractionStrategy = StreamingFormat

// Assembler reassembles one streamed response in its provider's own message shape.
// It is used by one StreamBuffer and need not be safe for concurrent use.
type Assembler interface {
	// Add folds one chunk into the message and returns the text it carried.
	Add(chunk any) (text string)
	// Message returns the message reassembled so far, in the shape
	// ProcessLLMResponse accepts. The map is the caller's.
	Message() Message
	// Done reports whether the provider signalled the end of the message.
	Done() bool
	// CallNames returns the tool names of the native calls that have started, in
	// order; a name not known yet is "". A name, once known, never changes, and
	// calls are only appended, so that a caller can skip the names it has already
	// seen. The slice belongs to the assembler: callers must not modify it.
	CallNames() []string
}
