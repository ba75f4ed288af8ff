// Package mcp is the MCS driver of MCP servers: any server of the Model Context
// Protocol, started as a child over stdio ([Config].Command), reached over
// streamable HTTP (URL) or over any transport of the official Go SDK
// (Transport), becomes a tool driver, so that MCS middleware (consent, audit,
// validation, tracing) and an orchestrator apply to its tools.
//
// # Tools
//
// Every page of tools/list is read, at most [DefaultMaxTools] tools in all
// (Config.MaxTools). Each MCP tool becomes an [mcs.Tool] with the server's name
// made safe: characters a model cannot call (outside A-Z a-z 0-9 _ -) become
// "_", every run of "_" becomes one, so that the name cannot hold the "__" an
// orchestrator puts between a driver's label and a tool name and cannot pass
// for another driver's tool, and a name longer than 64 bytes is cut with a hash
// of the whole name, as the orchestrator shortens long names. A renamed tool
// whose new name is taken gets a hash of its own name appended; its title shows
// the server's name, every rename is logged, and calls use the server's name.
// The tool gets the server's title (or the annotations' title), description, and one
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
// # A hostile server
//
// Over HTTP, Config.Headers go only to the origin (scheme, host and port) of
// Config.URL, and a redirect to another origin (another host or port, https to
// http) is refused with [ErrRedirect] before anything is sent there; a redirect
// within the origin is followed. One message of the server (an SSE event, a
// JSON body, a line of a stdio server) is at most [DefaultMaxMessageBytes]
// (Config.MaxMessageBytes), and the tools of a listing page are counted while
// it is read, so an oversized answer or listing is refused with
// [ErrServerLimit] before it is held or decoded. An answer that is not a
// well-formed stream of JSON-RPC messages is reported with [ErrMalformedStream].
// After any of these the session ends, and the next call connects again.
//
// # Results
//
// A call returns what an MCP host shows a model: the text content joined by
// newlines, and each image, audio clip or resource summarised on one line
// (type, MIME type, size or URI), never its data; the structured content when
// there is no text; at most [MaxResultBytes]. A result with isError: true is a
// failed call, a *[ToolError] with the server's text.
//
// # Resources, prompts, sampling and roots
//
// [ToolDriver.ListResources], [ToolDriver.ListResourceTemplates],
// [ToolDriver.ReadResource], [ToolDriver.Subscribe], [ToolDriver.ListPrompts]
// and [ToolDriver.GetPrompt] read what the server offers beside its tools,
// under the same limits (every page, at most Config.MaxResources items, at most
// MaxMessageBytes of contents). With Config.Resources and Config.Prompts the
// model can call them too, as resources__list, resources__read and
// prompts__get, whose results are text like every result. Every
// resources/updated and list_changed notification raises ToolsVersion.
// Config.Sampling answers the server's sampling requests with the operator's
// model, after Config.Consent saw each request in full, under per-session caps
// of requests and tokens; without it sampling is refused. Config.Roots is all
// that roots/list reveals.
//
// # Elicitation
//
// A server may ask the user for input during a call. The driver answers through
// Config.Consent, the same kind of handler the permission middleware asks, or
// through Config.Elicit; without either it declines.
package mcp
