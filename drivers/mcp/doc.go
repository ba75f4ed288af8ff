// Package mcp is the MCS driver of MCP servers: any server of the Model Context
// Protocol, started as a child over stdio ([Config].Command), reached over
// streamable HTTP (URL) or over any transport of the official Go SDK
// (Transport), becomes a tool driver, so that MCS middleware (consent, audit,
// validation, tracing) and an orchestrator apply to its tools.
//
// # Tools
//
// Every page of tools/list is read. Each MCP tool becomes an [mcs.Tool] with
// the server's name (characters a model cannot call, outside A-Z a-z 0-9 _ -,
// become "_"), title (or the annotations' title), description, and one
// Parameter per top-level property of the input schema: the required ones first
// in the order of "required", then the others by name. The property's schema
// is kept whole, with local references ($ref into $defs, definitions or any
// JSON pointer of the input schema) inlined and a cycle cut where it closes.
// The annotations readOnlyHint, destructiveHint, idempotentHint and
// openWorldHint become Tool.Annotations, with MCP's defaults for hints that are
// not given; a tool without annotations has nil. A schema that cannot be
// represented this way (a remote reference, keywords such as oneOf at the top
// level) is logged as a warning and its parameters are kept as given; no tool
// is dropped.
//
// # Results
//
// A call returns what an MCP host shows a model: the text content joined by
// newlines, and each image, audio clip or resource summarised on one line
// (type, MIME type, size or URI), never its data; the structured content when
// there is no text; at most [MaxResultBytes]. A result with isError: true is a
// failed call, a *[ToolError] with the server's text.
//
// # Elicitation
//
// A server may ask the user for input during a call. The driver answers through
// Config.Consent, the same kind of handler the permission middleware asks, or
// through Config.Elicit; without either it declines.
package mcp
