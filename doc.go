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
// The kernel imports only the standard library and a TOML decoder.
package mcs
