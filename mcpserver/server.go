// Package mcpserver serves any MCS tool driver (a driver with its middleware, an
// orchestrator of many) to MCP clients, on the official Go SDK of the Model
// Context Protocol.
//
// Every tools/call runs through the driver's ExecuteTool, so the driver's
// middleware chain (consent, audit, validation, tracing) applies to MCP clients
// exactly as to a model: a permission denial or an auth challenge is a normal
// text result the client's model can read, a failed call is a result with
// isError: true and the error's text, a panic is a failed call.
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
// what was wrong; the tool does not run. The HTTP handler also refuses request
// bodies larger than the limit plus 1 MiB (413), and a stdio transport its own
// frame limit.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// DefaultPollInterval is how often a server whose driver implements
	// ToolsVersion checks it while clients are connected.
	DefaultPollInterval = 250 * time.Millisecond
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

// versioned is the orchestrator's Versioned contract, matched structurally.
type versioned interface{ ToolsVersion() uint64 }

// Server serves an MCS tool driver to MCP clients. Create it with [New]; it is
// safe for concurrent use, and one Server may serve Run and Handler at once.
//
// The tools are read from the driver's ListTools when a client first lists or
// calls them. When the driver implements ToolsVersion() uint64 (an orchestrator,
// the MCP driver) the server checks it on every tools/list and tools/call and,
// while clients are connected, every poll interval; after a change it lists the
// driver again and connected clients get notifications/tools/list_changed.
// Call [Server.Refresh] after the tools of a driver without ToolsVersion
// changed.
type Server struct {
	d    mcs.ToolDriver
	v    versioned // nil when d has no ToolsVersion
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
}

// New returns a Server over d. It does no I/O. It panics when d is nil, which
// is a programming error.
func New(d mcs.ToolDriver, opts ...Option) *Server {
	if d == nil {
		panic("mcpserver: New called with a nil ToolDriver")
	}
	o := options{maxArgBytes: DefaultMaxArgumentBytes, poll: DefaultPollInterval}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
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
	s.v, _ = d.(versioned)
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
// are notified of a change. Use it for drivers without ToolsVersion.
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
		if err != nil {
			if errors.Is(err, mcs.ErrUnknownTool) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: %v", name, err)}
			}
			r := &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: err.Error()}}, IsError: true}
			return r, nil
		}
		return toResult(result), nil
	}
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
func (s *Server) Handler() http.Handler {
	s.handlerOnce.Do(func() {
		body := int64(s.opts.maxArgBytes) + 1<<20
		if body < mcpsdk.DefaultMaxRequestBodyBytes {
			body = mcpsdk.DefaultMaxRequestBodyBytes
		}
		h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.srv }, &mcpsdk.StreamableHTTPOptions{
			Stateless:                    s.opts.stateless,
			Logger:                       s.sdk,
			MaxRequestBodyBytes:          body,
			PropagateRequestCancellation: true,
		})
		s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
