// Package mcs is the kernel of the Go SDK of the Model Context Standard (MCS).
//
// An LLM only reads and writes text. MCS connects it to existing systems through
// drivers: libraries that publish tools, spot the model's tool calls in its output,
// run them against a real system and hand back results and conversation history.
//
// The package defines the two core contracts, [ToolDriver] (the technical bridge:
// list and execute tools) and [Driver] (the LLM-facing side: prompts and response
// processing), the optional contracts ([SupportsHealthcheck], [SupportsNativeTools],
// [SupportsStreaming], [SupportsToolMiddleware]), the tool middleware chain
// ([ToolMiddleware], [Chain]) and [BaseDriver], the shared implementation of the
// LLM-facing half that turns any ToolDriver into a complete hybrid driver.
//
// The prompt wording lives in a TOML file (see [DefaultPromptStrategy] and
// [LoadPromptStrategy]); wire formats of model providers are [ExtractionStrategy]
// values, so a new provider format or prompt dialect needs no fork.
//
// # Outcomes and errors
//
// [CodeOf] names how a call ended with a [Code] (ok, error, unknown_tool,
// invalid_arguments, malformed_call, too_many_calls, panic, canceled, timeout,
// denied, challenge, pending), decided from types only: the [Coder] in an error's
// tree, the kernel's sentinels ([ErrUnknownTool], [ErrMalformedCall],
// [ErrTooManyCalls], [ErrArgumentsTooLarge]) and the context errors. The module
// has one argument error, [*ArgumentsError], and one panic error, [*PanicError].
// A middleware that stops a call the model should hear about (a denial, an
// authentication challenge, an approval still pending) returns a [Signal] and no
// error: the call is a success for the driver, and the model reads the signal's
// JSON in every history format. The hooks audit, tracing, the MCP server and the
// command line read outcomes with CodeOf, so they agree.
//
// The kernel imports only the standard library and a TOML decoder.
package mcs
