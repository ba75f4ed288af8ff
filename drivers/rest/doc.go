// Package rest turns any OpenAPI 3.0/3.1 or Swagger 2.0 API into tools and
// executes them over HTTP, with no wrapper code: point [Config] at the
// document and the model can use the API.
//
// [NewToolDriver] returns the technical half (an mcs.ToolDriver, for an
// orchestrator); [New] returns the complete driver, which adds the LLM-facing
// half of mcs.BaseDriver and a healthcheck. Construction does no I/O: the
// document is loaded on first use, and a failed load is retried on the next
// call. Parsing, $ref resolution and the conversion of Swagger 2.0 are done by
// github.com/getkin/kin-openapi.
//
// # Tools
//
// Every operation (get, put, post, delete, patch, head, options) becomes one
// tool, in document order: paths as written, then methods as written. The
// name is the operationId, else <method>_<path> with the slashes as "_" and
// the braces dropped; every character outside [A-Za-z0-9_-] becomes "_" and
// duplicates get _2, _3. A name longer than [Config.MaxNameLength] (default 64)
// keeps its start and ends in "_" and seven hex digits of a hash of the full
// name, stable across runs, and the tool's description ends with the original
// operationId. The path's leading
// and trailing slashes are dropped rather than turned into "_": get
// /pets/{petId} gives get_pets_petId, not get__pets_petId, because a double
// underscore is the separator an orchestrator puts between a driver's label
// and a tool name. The title is the summary; the description is the
// description, else the summary, else the method and path. Annotations come
// from the method: GET, HEAD and OPTIONS are read-only, PUT and DELETE
// idempotent and destructive, POST and PATCH destructive.
//
// The parameters are the operation's, then the path item's that it does not
// override, with their full schemas; a path variable the document does not
// declare is a required string. A JSON object body (also through allOf, and
// for any application/*+json type) is flattened into one parameter per
// property, read-only properties left out; any other JSON body is one "body"
// parameter; form and multipart fields are parameters too. A body whose schema
// admits only an empty object (additionalProperties false, no properties, as
// Stripe gives its GETs) adds no parameter. A name already
// taken is prefixed: a body property "id" next to a path parameter "id" is
// "body_id". [Config.IncludeTags] and [Config.IncludePaths] filter the
// operations.
//
// Schemas are expanded in place, so every tool is self-contained; a schema
// that contains itself is cut where it recurs, and very large expansions are
// cut with a note. References to other documents are never fetched (the
// document's author, not the operator, chose where they point): the objects
// they stand for load as empty ones that name the reference.
//
// # Base URL
//
// Requests go to [Config.BaseURL] when it is set, else to the document's first
// server, its variables replaced by their defaults and a relative URL resolved
// against the URL the document was fetched from; a document without servers
// uses that URL's host. A Swagger 2.0 document without host likewise uses the
// host that served it, and one with a host but no schemes the scheme it was
// fetched with. Servers declared on a path or an operation override the
// document's default for it. Config.BaseURL, when set, wins over every server
// the document names: it is the operator's choice, and the document must not be
// able to send requests, with their credentials, to another host.
//
// # Execution
//
// Arguments go where the document says: path (each value percent-encoded as
// one segment; empty, "." and ".." refused), query (lists repeated, booleans
// true/false; form, spaceDelimited, pipeDelimited and deepObject, which nests
// objects as name[key][sub]=v and lists as name[]=v), header (values with CR,
// LF or NUL refused), cookie and body: JSON; form bodies by the media type's
// encoding object with OpenAPI's defaults (style form, explode true) except
// that an object without a style is sent as deepObject (Stripe's
// address[city]=Berlin, metadata[order]=42, expand[]=tax); multipart fields
// likewise, objects without a style as JSON parts. Path values take the
// styles simple, label and matrix, for lists and objects too. Unknown argument
// names and missing required arguments fail the call with an
// *[mcs.ArgumentsError] whose last entry lists the valid names; nothing is sent. The scheme, host and port come
// from the configuration or the document, never from arguments, and redirects
// are followed only to the same host.
//
// Security schemes are honoured: apiKey (header, query, cookie), http bearer
// and basic ("user:password" is encoded), oauth2 and openIdConnect (as
// bearer). Tokens come from [Config.Credentials], asked for the scope the
// operator bound the scheme to: [Config.Scopes], else [Config.Name], else the
// orchestrator label of the driver; a document never picks the scope by naming
// its schemes, and an unbound scheme fails the call with [ErrUnboundScheme]. A
// document fetched from SpecURL cannot send credentials to another host unless
// BaseURL pins the API ([ErrCredentialHost]). [Config.Timeout] bounds obtaining
// the credential too. An *auth.Challenge from the provider is returned unchanged
// so that the auth middleware can show it. Credentials are removed from results
// and errors, in the forms servers echo them (percent-encoded, JSON-escaped, in
// upper or lower case, base64 of the token and of "Bearer <token>", also inside a
// longer base64 text), as are the user info of BaseURL and of an http(s) SpecURL
// (sent as basic authentication), the query values of BaseURL and the values of
// configured headers; the driver writes no logs. No argument may change a query
// parameter BaseURL fixes, and a document whose path templates hold dot segments
// (/../admin) is refused at load.
//
// A 2xx response returns its body as a string, cut at
// [Config.MaxResponseBytes] with a marker (a binary body is described, not
// shown); any other status fails with a [*StatusError] ("404 Not Found: <first
// 500 bytes of the body>"). An HTML page (an error page of a proxy) reaches the
// model as one line with the status and the page title; a JSON error body is
// quoted compacted and its message kept in StatusError.Message. Errors name the
// tool as the model called it (github__issues_get behind an orchestrator).
//
// All types are safe for concurrent use.
package rest
