// Package mcs is the kernel of the Go SDK of the Model Context Standard (MCS).
//
// An LLM only reads and writes text. MCS connects it to existing systems through
// drivers: libraries that publish tools, spot the model's tool calls in its output,
// run them against a real system and hand back results and conversation history.
//
// The package defines the two core contracts, [ToolDriver] (the technical bridge:
// list and execute tools) and [Driver] (the LLM-facing side: prompts and output
// processing), the optional contracts ([SupportsHealthcheck], [SupportsNativeTools],
// [SupportsStreaming], [SupportsToolMiddleware]), the tool middleware chain
// ([ToolMiddleware], [Chain]) and [BaseDriver], the shared implementation of the
// LLM-facing half that turns any ToolDriver into a complete hybrid driver.
//
// The kernel imports only the standard library and a TOML decoder.
//
// # Writing a tool driver
//
// A driver author implements [ToolDriver]: Meta, ListTools and ExecuteTool. Each
// listed [Tool] passes [Tool.Validate], and its name is unique. ExecuteTool
// returns [ErrUnknownTool] (wrapped) for a name it does not publish and an
// *[ArgumentsError] for arguments it cannot use; it honours ctx. A driver whose
// listing is large or changes implements the listing protocol as well:
// [ToolLookup] (one name, without listing everything), [ToolDefiner] (one
// definition), [VersionedTools] (a number that changes with the listing) and
// [ToolSettler], read through the helpers [HasTool], [ToolDefinition] and
// [ToolsVersion], which fall back to ListTools. A driver built over others says
// so with [ToolDriverWrapper]. [NewBaseDriver] turns the ToolDriver into a
// complete driver: the prompt, the native tools, output processing, streaming and
// middleware. A driver that adds optional contracts embeds *BaseDriver and derives
// its Meta with [DeriveCapabilities], so that a type assertion and Meta tell the
// same truth.
//
// # Middleware and CallInfo
//
// A [ToolMiddleware] wraps one driver's tool execution: it may observe a call,
// rewrite its arguments, refuse it in band or turn an error into a result. The
// first middleware is outermost. Middleware runs on every call the driver
// executes, the calls an orchestrator routes to it included, so a configured
// concern cannot be bypassed; it is configuration, never part of Meta. Before the
// chain runs, BaseDriver puts the call's [CallInfo] in the context (the driver,
// its orchestrator label and route, the tool's definition, the provider call id);
// [CallInfoFromContext] reads it. A middleware that always refuses some tools
// implements [ToolHider], so that they are not offered at all.
//
// # Formats and codecs
//
// Model output reaches a driver as an [Output]: text, or a native message in a
// provider's shape ([Message]). A [WireFormat] recognises one provider's shape,
// extracts its calls ([ToolCall]) and shapes the history entries that answer
// them from [CallRecord] values; the built-in ones are [ChatCompletionsFormat],
// [ResponsesFormat], [AnthropicFormat], [GeminiFormat] and [TextFormat], asked in
// that order ([DefaultFormats]; [WithFormats] replaces the chain). Text calls are
// written in the dialect of a [PromptStrategy], the prompt codec: it writes the
// system message from the tools, decodes calls from text ([TextDecoder], one
// linear pass, whole or streamed) and frames each result. The bundled one is
// configured by TOML ([DefaultPromptStrategy], [LoadPromptStrategy]). A new
// provider format or prompt dialect needs no fork: see the examples of WireFormat
// and PromptStrategy.
//
// # Streaming
//
// A [StreamBuffer] reassembles a provider's stream chunk by chunk with the
// [Assembler] of a [StreamingFormat]. After each Add, the client asks each driver
// ([SupportsStreaming].ProcessStream): a call the driver owns runs as soon as it is
// complete, text that may still become an owned call is held (Text returns nothing
// while held), and everything else flows to the user at once. Text calls run as
// they close; native calls run as one batch when the provider ends the message.
// Foreign calls are reported once the output is finished, so that no client
// answers a call that is still forming.
//
// Any driver can keep that contract: the buffer's protocol ([StreamBuffer.View],
// [StreamBuffer.Hold], [StreamBuffer.Claim], [StreamBuffer.MarkExecuted],
// [StreamBuffer.CallNames] and [StreamState], a driver's own state on the buffer)
// is all BaseDriver uses, and drivers of both kinds share one buffer. User code
// a stream runs (a format, its assembler, a text decoder) is guarded where it is
// installed: a panic is logged and gives the method's zero value, a decoder that
// panicked is off for the rest of the stream, and the native calls of the stream
// still run.
//
// # Outcomes and errors
//
// Processing an output never fails: a [Response] reports the owned calls as
// [CallRecord] values (the call as extracted, its Result and its Err, each with
// its Index among all calls of the output), the calls of tools the driver does
// not publish ([Response.Foreign]), the history to append, a retry prompt after a
// failure, and [Response.Unavailable] when the driver could not list its tools.
// A tool error, a middleware error, malformed arguments ([ErrMalformedCall]), a
// call over the per-output limit ([ErrTooManyCalls]), arguments over the size
// limit ([ErrArgumentsTooLarge]) and a panic become a failed record the model
// reads, never an error of the caller.
//
// [CodeOf] names how a call ended with a [Code] (ok, error, unknown_tool,
// invalid_arguments, malformed_call, too_many_calls, panic, canceled, timeout,
// denied, challenge, pending), decided from types only: the [Coder] in an error's
// tree, the kernel's sentinels ([ErrUnknownTool], [ErrMalformedCall],
// [ErrTooManyCalls], [ErrArgumentsTooLarge]) and the context errors. The module
// has one argument error, *[ArgumentsError], and one panic error, *[PanicError].
// A middleware that stops a call the model should hear about (a denial, an
// authentication challenge, an approval still pending) returns a [Signal] and no
// error: the tool did not run, and the model reads the signal's JSON in every
// history format. The hooks audit, tracing, the MCP server and the command line
// read outcomes with CodeOf, so they agree.
package mcs
