// Package stack reads a stack file, the declaration of what a model gets (the
// drivers, how several are orchestrated and the middleware around them), and
// builds it into one mcs.Driver. The mcs command uses it; so can any program:
//
//	s, err := stack.Load("mcs.toml")
//	if err != nil { ... }               // file, line and key of every problem
//	s.Host.Consent = permission.Prompt(os.Stdin, os.Stderr)
//	d, err := s.Build(ctx)              // one driver as is, several behind an orchestrator
//	defer s.Close()
//
// # The file
//
//	[[driver]]
//	label = "pets"
//	type = "rest"                # rest | filesystem | csv | mcp
//	spec = "https://petstore3.swagger.io/api/v3/openapi.json"
//	include_tags = ["pet"]
//	credentials = "env"          # the token from MCS_TOKEN_PETS (the label); or
//	                             # "device": the OAuth device flow of a [driver.oauth] table
//	scopes = {petstore_auth = "petstore"}     # optional: this scheme reads MCS_TOKEN_PETSTORE
//
//	[[driver]]
//	label = "files"
//	type = "filesystem"
//	root = "./data"              # relative paths resolve against the stack file
//	read_only = true
//
//	[[driver]]
//	label = "everything"
//	type = "mcp"                 # an MCP server: command = [...] (stdio) or url = "https://host/mcp"
//	command = ["npx", "-y", "@modelcontextprotocol/server-everything"]
//	env_pass = ["EVERYTHING_TOKEN"]           # variables the child gets from this environment
//	call_timeout = "60s"
//
//	[orchestrator]
//	strategy = ["namespacing"]   # layers, innermost first
//
//	[middleware]
//	order = ["tracing", "hooks", "validate", "permission", "auth"]   # outermost first
//	[middleware.tracing]
//	otlp_endpoint = "http://localhost:4318/v1/traces"  # OTLP/HTTP; none: the global providers
//	content = false                           # true records arguments and results, redacted
//	[middleware.validate]
//	coercion = true                           # "5" -> 5 where the schema wants an integer
//	unknown = "error"                         # undeclared arguments: "error" | "drop" | "allow"
//	[middleware.hooks]
//	audit_log = "mcs-audit.jsonl"             # "-": stderr
//	[middleware.permission]
//	read_only = true                          # tools annotated read-only run unasked
//	allow = ["files__read_file"]
//	deny = ["*delete*"]                       # deny rules are tried first
//	ask = true                                # ask Host.Consent for the rest
//	                                          # "queue": the rest waits for an approval
//
//	[approvals]                                # where calls that wait are kept (ask = "queue")
//	store = "sqlite:approvals.db"             # relative to the stack file; "postgres://...", "memory:"
//	ttl = "24h"                               # how long a request waits for a decision
//
// Every [[driver]] has a label (letters, digits and '-', at most 32, unique)
// and a type; the other keys belong to the type (see [DriverTypes] and the
// decode functions of the built-in types). One driver without an
// [orchestrator] table is built as is, with the middleware installed on it;
// otherwise the drivers' tool drivers are registered, in file order, with an
// orchestrator that holds the middleware, so permission patterns match the
// names the model sees (label__tool). Strategy layers: namespacing (the
// default), always_namespacing (label__tool also for a single driver),
// reject_conflicts, detail_loading (max_description), pagination (page_size),
// switching, tool_search (max_results); ["flat"] means none.
//
// # Middleware order
//
// Without an order, the middleware with a table run in the recommended order,
// outermost first: tracing (the span covers the whole chain and sees denials),
// hooks (the audit sees every call, refused ones too), validate (nobody is asked
// to consent to a call whose arguments are wrong), permission, auth (innermost:
// challenges become in-band results). validate is a Default kind: it runs in
// every stack whose file gives no order, with or without a table, so bad
// arguments never reach a tool; a file that lists an order gets exactly what it
// lists. An MCP server's elicitation requests are answered by the permission
// middleware's consent handler when its table has ask = true, and declined
// otherwise.
//
// # Approvals
//
// With ask = "queue" in [middleware.permission], a call no rule decides does not
// run and asks nobody: it waits, as a pending request, in the stack's approval
// store, and the model reads that it waits (see middleware/permission's
// WithApprovals). A person decides elsewhere (mcs approvals approve ID, or any
// program with the same store), and the same call then runs once. The store is
// the [approvals] table's: store is a URL for approvals.Open, a relative SQLite
// path resolved against the stack file's directory; ttl is how long a request
// waits for a decision and an approval for its run (default 24h). Without the
// table the store is sqlite:mcs-approvals.db ([DefaultApprovalsFile]) next to
// the stack file. [Stack.ApprovalStore] opens the store (once; the permission
// middleware uses the same) and [Stack.Close] closes it. An [approvals] table
// without ask = "queue" only names the store, for programs that decide. The
// SQLite file is an effect (EffectWrite) of the stack; a PostgreSQL store sends
// PGPASSWORD (EffectCredential).
//
// # Problems
//
// Parse reports every problem it finds, each as an [*Error] with the file, the
// line, the table and the key, and what to do; unknown keys are errors (a typo
// never silently drops a setting). A value that looks like a credential (a
// known token format, a JSON Web Token, an Authorization value, a URL with a
// password, a long random string, or any value of a key named like a secret) is
// refused: secrets come from the environment (credentials = "env") or a token
// store, never from the file.
//
// # Credentials
//
// The operator binds credentials, never the API's document: every security
// scheme of a REST driver's document asks the credential source for the scope
// named by the driver's label (with credentials = "env", the environment
// variable MCS_TOKEN_<LABEL> in upper case, '-' as '_': label "my-api" reads
// MCS_TOKEN_MY_API), unless the driver's scopes table binds the scheme to a
// scope of its own. A document that names its schemes "github" or "stripe"
// therefore never receives MCS_TOKEN_GITHUB or MCS_TOKEN_STRIPE.
//
// A document that declares no security scheme (GitHub's REST description)
// takes auth_scheme = "bearer", "basic", "header:NAME" or "query:NAME": how
// the token goes out on the operations without a security requirement.
// Credentials on such a document without auth_scheme would send nothing, and
// fail the build with an error that says to set it.
//
// # Growth
//
// There is one registry of driver types ([RegisterDriverType]), one of
// middleware kinds ([RegisterMiddlewareKind]) and one of orchestrator layers
// ([RegisterLayerKind]). Each entry decodes and validates its own table through
// a [Table] (typed getters that record positioned errors) and builds its piece
// through a [Builder]; each built-in entry is one file of this package. Adding
// a driver type or a middleware kind touches nothing else.
package stack
