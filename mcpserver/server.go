// Package mcpserver serves any MCS tool driver (a driver with its middleware, an
// orchestrator of many) to MCP clients, on the official Go SDK of the Model
// Context Protocol.
//
// Every tools/call runs through the driver's ExecuteTool, so the driver's
// middleware chain (consent, audit, validation, tracing) applies to MCP clients
// exactly as to a model. The answer follows the call's [mcs.CodeOf], in one
// table: a permission denial, an auth challenge or a call waiting for approval
// (an in-band [mcs.Signal]) is a normal result the client's model can read, as
// the same JSON a model reads; an unknown tool is a JSON-RPC error (invalid
// params); every other failure (a panic included) is a result with isError: true
// and the error's text.
//
// # Transports
//
// [Server.Run] serves one session over any SDK transport, such as
// &mcpsdk.StdioTransport{} for a server started by an MCP host. [Server.Handler]
// serves streamable HTTP, with any number of sessions.
//
// # Replicas
//
// With [WithStateless] the handler keeps no session between HTTP requests
// (the SDK's stateless mode): every request is served on its own, so several
// replicas of the same stack can serve behind a load balancer without sticky
// sessions. What a stateless server cannot do is send a client anything outside
// the answer to its request: tools/list_changed reaches only clients of protocol
// 2026-07-28 and later while their subscriptions/listen stream is open at the
// same replica; older clients see the new tools when they list again. Build each
// replica from the same stack, so that every replica lists the same tools.
//
// # Hostile clients
//
// Arguments are untrusted: arguments that are not a JSON object, arguments
// larger than the limit ([DefaultMaxArgumentBytes], see [WithMaxArgumentBytes])
// and unknown tools are answered with an MCP error (invalid params) that says
// what was wrong; the tool does not run. A stdio transport refuses frames past
// its own limit.
//
// The HTTP handler answers only requests whose Host is localhost, a loopback
// address, the address the client connected to or one of [WithAllowedHosts],
// on every interface, and whose Origin, when a browser sent one, is the
// server's own or one of [WithAllowedOrigins] (403 otherwise: DNS rebinding and
// pages of other sites, as the MCP transport specification requires). A body
// must arrive within [DefaultRequestBodyTimeout] (408), hold at most
// [DefaultMaxRequestBytes] (413) and one JSON-RPC message, not a batch (400).
// It keeps at most [DefaultMaxSessions] sessions (503 past it) and ends one
// after [DefaultSessionIdleTimeout] without a request. Each has its option.
// Connections are the http.Server's to bound: give it a ReadHeaderTimeout and
// an IdleTimeout, and its listener a cap (as mcs serve-mcp does); the body
// deadline is the handler's own, set per request.//
// # Garbage collection
//
// The SDK allocates a few hundred kilobytes per call (docs/perf.md says where
// and has a fix for it), so a server spends much of its CPU collecting. A
// program that embeds this package chooses its own setting: mcs serve-mcp runs
// with debug.SetGCPercent(400) and debug.SetMemoryLimit(256 << 20) unless the
// user sets GOGC or GOMEMLIMIT, which on two cores gave 1.21-1.32x the calls
// per second of Go's default at 0.63x the CPU per call, for 6 to 13 MB more.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the options.
const (
	// DefaultMaxArgumentBytes is the largest arguments object of a tools/call.
	DefaultMaxArgumentBytes = 1 << 20
	// DefaultPollInterval is how often a server whose driver has a listing
	// version ([mcs.ToolsVersion]) checks it while clients are connected.
	DefaultPollInterval = 250 * time.Millisecond
	// DefaultMaxRequestBytes is the largest HTTP request body the handler
	// reads, unless the argument limit plus 1 MiB is larger.
	DefaultMaxRequestBytes = 4 << 20
	// DefaultRequestBodyTimeout is how long the handler waits for the whole
	// body of a request once its headers arrived.
	DefaultRequestBodyTimeout = 30 * time.Second
	// DefaultSessionIdleTimeout is how long a session of the HTTP handler
	// lives without a request from its client.
	DefaultSessionIdleTimeout = 10 * time.Minute
	// DefaultMaxSessions is how many sessions the HTTP handler keeps open at
	// once.
	DefaultMaxSessions = 100
)

// Option configures a [Server].
type Option func(*options)

type options struct {
	name, version string
	stateless     bool
	maxArgBytes   int
	poll          time.Duration
	logger        *slog.Logger
	pageSize      int

	maxBody     int64 // 0 until New settles it
	bodyTimeout time.Duration
	idleTimeout time.Duration
	maxSessions int
	hosts       []string
	origins     []string
}

// WithImplementation sets the name and version the server reports to clients;
// the default is the driver's Meta ID and Version.
func WithImplementation(name, version string) Option {
	return func(o *options) { o.name, o.version = name, version }
}

// WithStateless makes [Server.Handler] stateless: no session is kept between
// requests, so replicas can serve behind a load balancer (see the package
// documentation).
func WithStateless() Option { return func(o *options) { o.stateless = true } }

// WithMaxArgumentBytes sets the largest arguments object a tools/call may carry
// (n <= 0 keeps DefaultMaxArgumentBytes).
func WithMaxArgumentBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxArgBytes = n
		}
	}
}

// WithPollInterval sets how often the server checks the driver's ToolsVersion
// while clients are connected (d <= 0 keeps DefaultPollInterval).
func WithPollInterval(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.poll = d
		}
	}
}

// WithLogger sets the logger of the server and the SDK; nil means slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithPageSize sets how many tools one tools/list page holds (n <= 0 keeps the
// SDK's default).
func WithPageSize(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.pageSize = n
		}
	}
}

// WithMaxRequestBytes sets the largest HTTP request body the handler reads; a
// larger one is answered 413 (n <= 0 keeps the default: DefaultMaxRequestBytes,
// or the argument limit plus 1 MiB when that is larger). A limit below the
// argument limit lowers that limit in effect.
func WithMaxRequestBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxBody = n
		}
	}
}

// WithRequestBodyTimeout sets how long the handler waits for the whole body
// of a request once its headers arrived (d <= 0 keeps
// DefaultRequestBodyTimeout). A body still incomplete then is answered 408
// and its connection closed. It covers the body only: the call it carries may
// run longer, and event streams stay open.
func WithRequestBodyTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.bodyTimeout = d
		}
	}
}

// WithSessionIdleTimeout sets how long a session of the HTTP handler lives
// without a request (a POST) from its client (d <= 0 keeps
// DefaultSessionIdleTimeout). An open event stream (GET) alone does not keep
// a session: clients that listen for a long time ping. A client whose session
// ended gets 404 and starts a new one, as the MCP transport specifies.
func WithSessionIdleTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.idleTimeout = d
		}
	}
}

// WithMaxSessions sets how many sessions the HTTP handler keeps open at once
// (n <= 0 keeps DefaultMaxSessions); a request for one more is answered 503.
// Sessions being opened count as open. Stateless handlers keep no session.
func WithMaxSessions(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSessions = n
		}
	}
}

// WithAllowedHosts adds host names the HTTP handler answers to. Every request's
// Host header must name localhost, a loopback address, the address the client
// connected to, or one of these (compared without the port, case and a final
// dot); others are answered 403, a guard against DNS rebinding. Add the names
// clients use to reach the server, such as the name of its machine or of a
// proxy that keeps the Host header.
func WithAllowedHosts(hosts ...string) Option {
	return func(o *options) { o.hosts = append(o.hosts, hosts...) }
}

// WithAllowedOrigins adds web origins ("https://app.example.com", scheme, host
// and port when not the default) whose pages may call the server. A request
// with an Origin header (sent by browsers) is answered 403 unless the origin
// is one of these or the server's own (the Host the request was sent to), as
// the MCP transport specification requires. Requests without Origin (clients
// that are not browsers) are not affected.
func WithAllowedOrigins(origins ...string) Option {
	return func(o *options) { o.origins = append(o.origins, origins...) }
}

// Server serves an MCS tool driver to MCP clients. Create it with [New]; it is
// safe for concurrent use, and one Server may serve Run and Handler at once.
//
// The tools are read from the driver's ListTools when a client first lists or
// calls them. When the driver has a listing version ([mcs.ToolsVersion]: an
// orchestrator, the MCP driver, a tool table, also when wrapped in an
// [mcs.BaseDriver]) the server checks it on every tools/list and tools/call and,
// while clients are connected, every poll interval; after a change it lists the
// driver again and connected clients get notifications/tools/list_changed.
// Call [Server.Refresh] after the tools of a driver without a version changed.
type Server struct {
	d    mcs.ToolDriver
	v    mcs.VersionedTools // nil when d has no version (mcs.ToolsVersion)
	srv  *mcpsdk.Server
	opts options
	log  *slog.Logger
	sdk  *slog.Logger // what the SDK logs to

	syncLock chan struct{}
	synced   atomic.Bool
	seen     atomic.Uint64       // the driver version of the registered tools
	tools    map[string]mcs.Tool // registered; guarded by syncLock

	watchMu    sync.Mutex
	watchUsers int
	watchStop  context.CancelFunc
	watchDone  chan struct{}

	handlerOnce sync.Once
	handler     http.Handler
	httpUser    atomic.Bool

	guards  guards
	sessMu  sync.Mutex
	opening int // requests opening a session now; guarded by sessMu
}

// New returns a Server over d. It does no I/O. It panics when d is nil, which
// is a programming error.
func New(d mcs.ToolDriver, opts ...Option) *Server {
	if d == nil {
		panic("mcpserver: New called with a nil ToolDriver")
	}
	o := options{maxArgBytes: DefaultMaxArgumentBytes, poll: DefaultPollInterval, bodyTimeout: DefaultRequestBodyTimeout,
		idleTimeout: DefaultSessionIdleTimeout, maxSessions: DefaultMaxSessions}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.maxBody == 0 {
		o.maxBody = max(DefaultMaxRequestBytes, int64(o.maxArgBytes)+1<<20)
	}
	if o.name == "" {
		m := d.Meta()
		o.name, o.version = m.ID, m.Version
		if o.name == "" {
			o.name = "mcs-go"
		}
	}
	sdkLog := o.logger
	if o.logger == nil {
		o.logger = slog.Default()
		// The SDK reports every session at level INFO; keep its warnings only.
		sdkLog = slog.New(minLevel{slog.Default().Handler(), slog.LevelWarn})
	}
	s := &Server{d: d, opts: o, log: o.logger, syncLock: make(chan struct{}, 1), tools: map[string]mcs.Tool{}}
	s.sdk = sdkLog
	s.guards = newGuards(o, s.log.Warn)
	if _, ok := mcs.ToolsVersion(d); ok {
		s.v = d.(mcs.VersionedTools)
	}
	s.srv = mcpsdk.NewServer(&mcpsdk.Implementation{Name: o.name, Version: o.version}, &mcpsdk.ServerOptions{
		Logger:       sdkLog,
		PageSize:     o.pageSize,
		Capabilities: &mcpsdk.ServerCapabilities{Tools: &mcpsdk.ToolCapabilities{ListChanged: true}},
	})
	s.srv.AddReceivingMiddleware(s.syncFirst)
	return s
}

// SDK returns the SDK server, to add prompts or resources. Its tools are the
// driver's; do not add or remove tools on it.
func (s *Server) SDK() *mcpsdk.Server { return s.srv }

// syncFirst brings the registered tools up to date before a client lists or
// calls them.
func (s *Server) syncFirst(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method == "tools/list" || method == "tools/call" {
			if err := s.sync(ctx, false); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
		}
		return next(ctx, method, req)
	}
}

// Refresh lists the driver again now and updates the tools; connected clients
// are notified of a change. Use it for drivers without a version.
func (s *Server) Refresh(ctx context.Context) error { return s.sync(ctx, true) }

func (s *Server) version() uint64 {
	if s.v == nil {
		return 0
	}
	return s.v.ToolsVersion()
}

// sync registers the driver's current tools with the SDK server when the driver
// changed (or force). A failed listing keeps the tools registered before; it is
// an error only when there are none yet.
func (s *Server) sync(ctx context.Context, force bool) error {
	if !force && s.synced.Load() && s.version() == s.seen.Load() {
		return nil
	}
	select {
	case s.syncLock <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-s.syncLock }()
	v := s.version()
	if !force && s.synced.Load() && v == s.seen.Load() {
		return nil
	}
	tools, err := s.list(ctx)
	if err != nil {
		err = fmt.Errorf("list the tools of the driver: %w", err)
		if s.synced.Load() {
			s.log.Warn("mcpserver: listing failed; the tools listed before are kept", "error", err)
			return nil
		}
		return err
	}
	next := make(map[string]mcs.Tool, len(tools))
	for _, t := range tools {
		if err := t.Validate(); err != nil {
			s.log.Warn("mcpserver: tool not served", "tool", t.Name, "error", err)
			continue
		}
		if _, dup := next[t.Name]; dup {
			continue
		}
		next[t.Name] = t
		if old, ok := s.tools[t.Name]; ok && reflect.DeepEqual(old, t) {
			continue
		}
		s.srv.AddTool(toolDef(t), s.handle(t.Name))
	}
	var gone []string
	for name := range s.tools {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
	}
	s.tools = next
	s.seen.Store(v)
	s.synced.Store(true)
	return nil
}

// list calls the driver's ListTools; a panic is an error.
func (s *Server) list(ctx context.Context) (tools []mcs.Tool, err error) {
	defer func() {
		if v := recover(); v != nil {
			tools, err = nil, fmt.Errorf("ListTools panicked: %v", v)
		}
	}()
	return s.d.ListTools(ctx)
}

// toolDef is the MCP definition of t.
func toolDef(t mcs.Tool) *mcpsdk.Tool {
	def := &mcpsdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: mcs.ToolSchema(t)}
	if def.Description == "" {
		def.Description = t.Title
	}
	if a := t.Annotations; a != nil {
		destructive, open := a.Destructive, a.OpenWorld
		def.Annotations = &mcpsdk.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    a.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  a.Idempotent,
			OpenWorldHint:   &open,
		}
	}
	return def
}

// handle is the tools/call handler of one tool.
func (s *Server) handle(name string) mcpsdk.ToolHandler {
	return func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		args, err := s.arguments(name, req.Params.Arguments)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		result, err := s.execute(ctx, name, args)
		return answer(name, result, err)
	}
}

// answers is how the server answers a call, by the call's [mcs.CodeOf]: with a
// JSON-RPC error (rpc set), or with a tool result, marked isError when the call
// failed. A code not in the table (one a Coder of another package reports) is
// answered as a failed call when there is an error, as a result otherwise.
var answers = map[mcs.Code]struct {
	rpc     int64  // the JSON-RPC error code; 0 for a tool result
	what    string // the start of the JSON-RPC error's message
	isError bool
}{
	mcs.CodeOK:        {}, // the result
	mcs.CodeDenied:    {}, // in-band: the model reads the signal's JSON
	mcs.CodeChallenge: {},
	mcs.CodePending:   {},

	mcs.CodeUnknownTool: {rpc: jsonrpc.CodeInvalidParams, what: "unknown tool"}, // no tool of the server

	mcs.CodeError:            {isError: true}, // failures the client's model reads and can act on
	mcs.CodeInvalidArguments: {isError: true},
	mcs.CodeMalformedCall:    {isError: true},
	mcs.CodeTooManyCalls:     {isError: true},
	mcs.CodePanic:            {isError: true},
	mcs.CodeCanceled:         {isError: true},
	mcs.CodeTimeout:          {isError: true},
}

// answer is the MCP answer of a call of name that returned result and err, as
// the table answers says.
func answer(name string, result any, err error) (*mcpsdk.CallToolResult, error) {
	a := answers[mcs.CodeOf(result, err)]
	switch {
	case a.rpc != 0:
		detail := mcs.ResultText(result)
		if err != nil {
			detail = err.Error()
		}
		return nil, &jsonrpc.Error{Code: a.rpc, Message: fmt.Sprintf("%s %q: %s", a.what, name, detail)}
	case err != nil:
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: err.Error()}}, IsError: true}, nil
	}
	r := toResult(result)
	r.IsError = a.isError // a result whose Coder reports a failure
	return r, nil
}

// arguments decodes the arguments of a call: absent or null is {}, anything but
// an object is refused, as is more than the limit.
func (s *Server) arguments(name string, raw json.RawMessage) (map[string]any, error) {
	if len(raw) > s.opts.maxArgBytes {
		return nil, fmt.Errorf("the arguments of tool %q are %d bytes; this server accepts at most %d bytes of arguments per call", name, len(raw), s.opts.maxArgBytes)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("the arguments of tool %q must be a JSON object of named arguments, not %s", name, jsonKind(raw[0]))
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("the arguments of tool %q are not valid JSON: %v", name, err)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

func jsonKind(b byte) string {
	switch {
	case b == '[':
		return "an array"
	case b == '"':
		return "a string"
	case b == 't' || b == 'f':
		return "a boolean"
	case b == '-' || (b >= '0' && b <= '9'):
		return "a number"
	}
	return "malformed JSON"
}

// execute runs the call through the driver; a panic is an error.
func (s *Server) execute(ctx context.Context, name string, args map[string]any) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			result, err = nil, &mcs.PanicError{Tool: name, Value: v, Stack: debug.Stack()}
		}
	}()
	return s.d.ExecuteTool(ctx, name, args)
}

// toResult is the MCP result of a successful call: a string as text; any other
// value as its JSON text, and as structured content too when it is an object.
func toResult(v any) *mcpsdk.CallToolResult {
	res := &mcpsdk.CallToolResult{Content: []mcpsdk.Content{}}
	var text string
	switch x := v.(type) {
	case nil:
		return res
	case string:
		text = x
	case []byte:
		if utf8.Valid(x) {
			text = string(x)
		} else {
			text = fmt.Sprintf("[%d bytes of binary data]", len(x))
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			text = fmt.Sprint(v)
			break
		}
		text = string(b)
		if len(b) > 0 && b[0] == '{' {
			res.StructuredContent = json.RawMessage(b)
		}
	}
	res.Content = append(res.Content, &mcpsdk.TextContent{Text: text})
	return res
}

// Run serves one session over t (for example &mcpsdk.StdioTransport{}) until the
// client ends it or ctx is done, and returns the session's error (ctx's when it
// ended the session).
func (s *Server) Run(ctx context.Context, t mcpsdk.Transport) error {
	stop := s.watch()
	defer stop()
	// Register the tools before the client connects, so that it is not told
	// they changed; when listing fails here, the first tools/list tries again.
	_ = s.sync(ctx, false)
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
		_ = ss.Close()
		<-ended
		return context.Cause(ctx)
	}
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

// Handler returns the streamable HTTP handler of the server (stateless with
// WithStateless). A client that cancels a request, or whose HTTP request ends,
// cancels the call's context. The same handler is returned on every call. While
// it serves, the server watches the driver's ToolsVersion; Close stops that.
//
// Before the SDK sees a request, in this order, the handler answers
//   - 403 when the Host header is not localhost, a loopback address, the
//     address the client connected to or a name of WithAllowedHosts, on every
//     interface (DNS rebinding);
//   - 403 when an Origin header is present and is neither the server's own
//     origin nor one of WithAllowedOrigins (pages of other sites);
//   - 503 when a POST without a session ID would open a session past
//     WithMaxSessions (stateful handlers);
//   - 408 when a POST's body does not arrive within WithRequestBodyTimeout,
//     413 when it is larger than WithMaxRequestBytes, and 400 with a
//     JSON-RPC error when it is a JSON-RPC batch (a top-level array), which
//     MCP no longer has.
//
// A session ends after WithSessionIdleTimeout without a request. The handler
// does not bound connections: the http.Server and listener it runs on do
// (ReadHeaderTimeout, IdleTimeout, a connection cap).
func (s *Server) Handler() http.Handler {
	s.handlerOnce.Do(func() {
		h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.srv }, &mcpsdk.StreamableHTTPOptions{
			Stateless:           s.opts.stateless,
			Logger:              s.sdk,
			MaxRequestBodyBytes: s.opts.maxBody,
			SessionTimeout:      s.opts.idleTimeout,
			// The SDK's own Host check, on loopback interfaces only and
			// without an allow-list, is replaced by guards.check.
			DisableLocalhostProtection:   true,
			PropagateRequestCancellation: true,
		})
		s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !s.guards.check(w, r) {
				return
			}
			if r.Method == http.MethodPost {
				if !s.opts.stateless && r.Header.Get("Mcp-Session-Id") == "" {
					release, ok := s.reserveSession(w)
					if !ok {
						return
					}
					defer release()
				}
				if !s.readBody(w, r) {
					return
				}
			}
			if s.httpUser.CompareAndSwap(false, true) {
				s.watchMu.Lock()
				s.startLocked()
				s.watchMu.Unlock()
			}
			// Before a new session exists, so that it is not told the tools
			// changed; cheap when nothing changed.
			_ = s.sync(r.Context(), false)
			h.ServeHTTP(w, r)
		})
	})
	return s.handler
}

// Close stops watching the driver for the handler and closes the sessions still
// connected. It does not close the driver. Safe to call more than once.
func (s *Server) Close() error {
	if s.httpUser.CompareAndSwap(true, false) {
		s.release()
	}
	for ss := range s.srv.Sessions() {
		_ = ss.Close()
	}
	return nil
}

// watch starts the driver watcher for one user and returns its release.
func (s *Server) watch() (release func()) {
	s.watchMu.Lock()
	s.startLocked()
	s.watchMu.Unlock()
	var once sync.Once
	return func() { once.Do(s.release) }
}

func (s *Server) startLocked() {
	s.watchUsers++
	if s.watchUsers > 1 || s.v == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.watchStop, s.watchDone = cancel, done
	go func() {
		defer close(done)
		t := time.NewTicker(s.opts.poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s.synced.Load() && s.version() != s.seen.Load() {
					if err := s.sync(ctx, false); err != nil && ctx.Err() == nil {
						s.log.Warn("mcpserver: tools not updated", "error", err)
					}
				}
			}
		}
	}()
}

func (s *Server) release() {
	s.watchMu.Lock()
	s.watchUsers--
	var stop context.CancelFunc
	var done chan struct{}
	if s.watchUsers == 0 && s.watchStop != nil {
		stop, done = s.watchStop, s.watchDone
		s.watchStop, s.watchDone = nil, nil
	}
	s.watchMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}
