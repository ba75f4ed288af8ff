package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the version of the MCP driver reported in its Meta and to servers.
const Version = "0.1.0"

// pingTimeout bounds a healthcheck's ping when its context has no deadline.
const pingTimeout = 5 * time.Second

// ToolDriver is an MCP server as an MCS tool driver: the server's tools are its
// tools, and every call is a tools/call on the server. It is the technical half
// of the MCP driver; [New] adds the LLM-facing half.
//
// The driver keeps one session. When the server announces that its tools
// changed (notifications/tools/list_changed), the next ListTools reads the new
// listing and ToolsVersion increases, so an orchestrator holding the driver
// lists it again. When the session ends (the child exits, the HTTP endpoint goes
// away, a call or a ping finds the connection broken), Healthcheck reports
// ERROR with the reason, and the next call or listing connects again, once,
// before it fails. A call whose request could not be sent because the session
// had already ended is sent again on the new session; a call that was in flight
// when the server died fails, since it may have run.
//
// A ToolDriver is safe for concurrent use. Close ends it.
type ToolDriver struct {
	cfg    Config
	server string // names the server in messages
	log    *slog.Logger
	client *mcpsdk.Client

	life context.Context // cancelled by Close: ends calls in flight
	stop context.CancelFunc
	bg   sync.WaitGroup // sessions being closed in the background

	mu      sync.Mutex
	sess    *session // nil after a failed reconnect
	lastErr error    // why sess is nil
	closed  bool

	relock   chan struct{} // one reconnect at a time
	listLock chan struct{} // one listing at a time
	tools    atomic.Pointer[toolSet]
	changes  atomic.Uint64 // list changes announced (and reconnects)
	version  atomic.Uint64

	onChange func() // tests: called after a change was recorded

	sampling   samplingState
	promptsOff atomic.Bool // the prompt listing broke a limit: no prompts__get
}

// Driver is the complete MCP driver: the [ToolDriver] with the LLM-facing half
// of [mcs.BaseDriver] (prompts, response processing, middleware) and a
// healthcheck. The BaseDriver forwards the listing protocol (HasTool,
// ToolDefinition, ToolsVersion) to the ToolDriver. It is safe for concurrent
// use.
type Driver struct {
	*mcs.BaseDriver
	td *ToolDriver
}

var (
	_ mcs.ToolDriver          = (*ToolDriver)(nil)
	_ mcs.ToolLookup          = (*ToolDriver)(nil)
	_ mcs.ToolDefiner         = (*ToolDriver)(nil)
	_ mcs.SupportsHealthcheck = (*ToolDriver)(nil)
	_ mcs.VersionedTools      = (*ToolDriver)(nil)

	_ mcs.Driver                 = (*Driver)(nil)
	_ mcs.ToolDriver             = (*Driver)(nil)
	_ mcs.SupportsHealthcheck    = (*Driver)(nil)
	_ mcs.SupportsToolMiddleware = (*Driver)(nil)
	_ mcs.VersionedTools         = (*Driver)(nil)
)

// NewToolDriver connects to the server the Config selects and lists its tools
// once. A server that cannot be started, does not complete the handshake within
// ctx's deadline (DefaultConnectTimeout when ctx has none) or cannot list its
// tools gives a *[ConnectError] naming the command or URL, with the end of a
// stdio server's stderr; a Config that selects no server wraps
// [ErrInvalidConfig]. Nothing is left running after an error.
func NewToolDriver(ctx context.Context, cfg Config) (*ToolDriver, error) {
	c, server, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	d := &ToolDriver{
		cfg:      c,
		server:   server,
		log:      c.Logger,
		relock:   make(chan struct{}, 1),
		listLock: make(chan struct{}, 1),
	}
	d.life, d.stop = context.WithCancel(context.Background())
	d.client = mcpsdk.NewClient(&mcpsdk.Implementation{Name: "mcs-go", Version: Version}, &mcpsdk.ClientOptions{
		Logger:                 c.Logger,
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) { d.markChanged() },
		ElicitationHandler:     d.elicit,
		// Resources and prompts: the driver's version moves so that a holder
		// lists it again.
		PromptListChangedHandler:   func(context.Context, *mcpsdk.PromptListChangedRequest) { d.markChanged() },
		ResourceListChangedHandler: func(context.Context, *mcpsdk.ResourceListChangedRequest) { d.markChanged() },
		ResourceUpdatedHandler:     d.resourceUpdated,
		CreateMessageHandler:       d.samplingHandler(),
	})
	d.client.AddRoots(rootList(c.Roots)...)
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultConnectTimeout)
		defer cancel()
	}
	s, err := d.connect(ctx)
	if err != nil {
		d.stop()
		return nil, err
	}
	d.sess = s
	list, err := d.fetch(ctx, s)
	if err != nil {
		d.stop()
		s.close()
		return nil, d.connectError(ctx, s, fmt.Errorf("list tools: %w", err))
	}
	ts := buildToolSet(list, 0, d.server, d.log)
	d.addLocal(ctx, s, ts)
	d.tools.Store(ts)
	return d, nil
}

// New connects like [NewToolDriver] and returns the complete driver, with opts
// (middleware, prompt strategy, ...) applied to its BaseDriver.
func New(ctx context.Context, cfg Config, opts ...mcs.Option) (*Driver, error) {
	td, err := NewToolDriver(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{BaseDriver: mcs.NewBaseDriver(td, opts...), td: td}, nil
}

// Meta returns the driver's data sheet: the BaseDriver's capabilities plus
// healthcheck.
func (d *Driver) Meta() mcs.Meta { return mcs.DeriveCapabilities(d.BaseDriver.Meta(), d) }

// Healthcheck reports the server's health; see [ToolDriver.Healthcheck].
func (d *Driver) Healthcheck(ctx context.Context) mcs.HealthResult { return d.td.Healthcheck(ctx) }

// Close ends the session and the server process; see [ToolDriver.Close].
func (d *Driver) Close() error { return d.td.Close() }

// driverID is the Meta ID of the MCP driver.
const driverID = "mcs-go/mcp"

// Meta returns the data sheet of the MCP tool driver: ID mcs-go/mcp, binding
// mcp/stdio or mcp/streamable-http (or mcp/transport), capabilities
// orchestratable and healthcheck.
func (d *ToolDriver) Meta() mcs.Meta {
	adapter := "transport"
	switch {
	case d.cfg.Transport != nil:
	case len(d.cfg.Command) > 0:
		adapter = "stdio"
	default:
		adapter = "streamable-http"
	}
	return mcs.DeriveCapabilities(mcs.Meta{
		ID:       driverID,
		Name:     "MCP server",
		Version:  Version,
		Bindings: []mcs.Binding{{Capability: "mcp", Adapter: adapter, SpecFormat: "MCP"}},
	}, d)
}

// ToolsVersion returns a number that increases after every
// notifications/tools/list_changed of the server, every
// prompts/list_changed, resources/list_changed and resources/updated, and after
// every reconnect: [mcs.VersionedTools]. It never blocks.
func (d *ToolDriver) ToolsVersion() uint64 { return d.version.Load() }

// markChanged records a change of the listing: state first, then version.
func (d *ToolDriver) markChanged() {
	d.changes.Add(1)
	d.version.Add(1)
	if d.onChange != nil {
		d.onChange()
	}
}

// ListTools returns the server's tools, in the server's order. After a
// list_changed notification it reads every page of tools/list again; when that
// fails and an earlier listing exists, the earlier one is returned (and
// Healthcheck says why), otherwise the error.
func (d *ToolDriver) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	ts, err := d.toolSet(ctx)
	if err != nil {
		return nil, err
	}
	return append([]mcs.Tool(nil), ts.tools...), nil
}

// HasTool reports whether the server lists name.
func (d *ToolDriver) HasTool(ctx context.Context, name string) (bool, error) {
	ts, err := d.toolSet(ctx)
	if err != nil {
		return false, err
	}
	_, ok := ts.byName[name]
	return ok, nil
}

// ToolDefinition returns the definition of one tool.
func (d *ToolDriver) ToolDefinition(ctx context.Context, name string) (mcs.Tool, bool, error) {
	ts, err := d.toolSet(ctx)
	if err != nil {
		return mcs.Tool{}, false, err
	}
	t, _, ok := ts.lookup(name)
	return t, ok, nil
}

// toolSet returns the current listing, reading it again when the server
// announced a change.
func (d *ToolDriver) toolSet(ctx context.Context) (*toolSet, error) {
	old := d.tools.Load()
	if old != nil && old.gen == d.changes.Load() {
		return old, nil
	}
	select {
	case d.listLock <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-d.listLock }()
	old = d.tools.Load()
	if old != nil && old.gen == d.changes.Load() {
		return old, nil
	}
	ctx, cancel := d.scoped(ctx, d.cfg.CallTimeout)
	defer cancel()
	s, _, err := d.current(ctx)
	gen := d.changes.Load() // after a reconnect, which counts as a change
	var list []*mcpsdk.Tool
	if err == nil {
		list, err = d.fetch(ctx, s)
		if err != nil {
			s.markBroken(err)
		}
	}
	if err != nil {
		err = fmt.Errorf("list tools of MCP server %s: %w", d.server, err)
		if old != nil {
			d.log.Warn("mcp: listing failed; the previous listing is kept", "server", d.server, "error", err)
			return old, nil
		}
		return nil, err
	}
	ts := buildToolSet(list, gen, d.server, d.log)
	d.addLocal(ctx, s, ts)
	d.tools.Store(ts)
	return ts, nil
}

// fetch reads every page of tools/list.
func (d *ToolDriver) fetch(ctx context.Context, s *session) ([]*mcpsdk.Tool, error) {
	var all []*mcpsdk.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("the server returned more than %d pages of tools", maxPages)
		}
		res, err := s.cs.ListTools(ctx, &mcpsdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			if f := s.g.fault(); f != nil {
				return nil, f
			}
			return nil, err
		}
		all = append(all, res.Tools...)
		if len(all) > d.cfg.MaxTools {
			return nil, fmt.Errorf("%w: the server lists more than %d tools over %d pages (Config.MaxTools); raise the limit only for a server trusted to list that many", ErrServerLimit, d.cfg.MaxTools, page+1)
		}
		if res.NextCursor == "" {
			return all, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("the server repeated the page cursor %q", oneLine(res.NextCursor))
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ExecuteTool calls the tool on the server (tools/call) with ctx and
// CallTimeout, and returns what an MCP host would show the model: see the
// package documentation. isError: true is an error *[ToolError] carrying the
// server's text; an unknown tool wraps [mcs.ErrUnknownTool]; a protocol error,
// a timeout or a lost connection is an error naming the server.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	ts, err := d.toolSet(ctx)
	if err != nil {
		return nil, err
	}
	_, remote, ok := ts.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a tool of MCP server %s", mcs.ErrUnknownTool, name, d.server)
	}
	if remote == "" { // resources__list, resources__read, prompts__get
		return d.executeLocal(ctx, name, args)
	}
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := d.scoped(ctx, d.cfg.CallTimeout)
	defer cancel()
	s, reconnected, err := d.current(ctx)
	if err != nil {
		return nil, fmt.Errorf("call %q: %w", name, err)
	}
	params := &mcpsdk.CallToolParams{Name: remote, Arguments: args}
	res, err := s.cs.CallTool(ctx, params)
	if err != nil && errors.Is(err, mcpsdk.ErrConnectionClosed) && !reconnected && ctx.Err() == nil {
		// Not sent: the session had ended. Connect again and send it.
		s.markBroken(err)
		if s, err = d.reconnect(ctx, s); err != nil {
			return nil, fmt.Errorf("call %q: %w", name, err)
		}
		res, err = s.cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: remote, Arguments: args})
	}
	if err != nil {
		return nil, d.callError(ctx, s, name, err)
	}
	if res.IsError {
		text, _, _ := contentText(res.Content)
		return nil, &ToolError{Tool: name, Text: cut(text)}
	}
	return resultValue(res), nil
}

// callError describes a failed tools/call.
func (d *ToolDriver) callError(ctx context.Context, s *session, name string, err error) error {
	if f := s.g.fault(); f != nil {
		s.markBroken(f)
		return fmt.Errorf("call %q to MCP server %s: %w", name, d.server, f)
	}
	if ctx.Err() != nil {
		if d.life.Err() != nil {
			return fmt.Errorf("call %q to MCP server %s: %w", name, d.server, ErrClosed)
		}
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return fmt.Errorf("call %q to MCP server %s: no answer in time: %w", name, d.server, context.Cause(ctx))
		}
		return fmt.Errorf("call %q to MCP server %s: %w", name, d.server, context.Cause(ctx))
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		if rpc.Code == jsonrpc.CodeInvalidParams {
			// The server refused the arguments (JSON-RPC "invalid params"): the
			// model can correct them, as for any other *mcs.ArgumentsError.
			return fmt.Errorf("MCP server %s rejected the arguments of %q: %w", d.server, name,
				&mcs.ArgumentsError{Tool: name, Problems: []string{oneLine(rpc.Message)}})
		}
		return fmt.Errorf("MCP server %s rejected the call to %q: %s (code %d)", d.server, name, oneLine(rpc.Message), rpc.Code)
	}
	s.markBroken(err)
	s.waitExit(exitGrace)
	return fmt.Errorf("call %q to MCP server %s: %w", name, d.server, s.deadErr())
}

// scoped bounds ctx by timeout and by the driver's life.
func (d *ToolDriver) scoped(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	stop := context.AfterFunc(d.life, cancel)
	return ctx, func() { stop(); cancel() }
}

// current returns a usable session, connecting again (once) when the current
// one ended. reconnected reports that it did.
func (d *ToolDriver) current(ctx context.Context) (s *session, reconnected bool, err error) {
	d.mu.Lock()
	s, closed := d.sess, d.closed
	d.mu.Unlock()
	if closed {
		return nil, false, ErrClosed
	}
	if s != nil && s.deadReason() == "" {
		return s, false, nil
	}
	s, err = d.reconnect(ctx, s)
	return s, true, err
}

// reconnect replaces the session old with a new one, unless another caller did.
func (d *ToolDriver) reconnect(ctx context.Context, old *session) (*session, error) {
	select {
	case d.relock <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { <-d.relock }()
	d.mu.Lock()
	cur, closed := d.sess, d.closed
	d.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if cur != nil && cur != old && cur.deadReason() == "" {
		return cur, nil
	}
	if cur != nil {
		reason := cur.deadReason()
		d.log.Warn("mcp: session lost; connecting again", "server", d.server, "reason", reason)
		d.bg.Add(1)
		go func() {
			defer d.bg.Done()
			cur.close()
		}()
	}
	s, err := d.connect(ctx)
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		if err == nil {
			s.close()
		}
		return nil, ErrClosed
	}
	if err != nil {
		d.sess, d.lastErr = nil, err
		d.mu.Unlock()
		return nil, err
	}
	d.sess, d.lastErr = s, nil
	d.mu.Unlock()
	d.markChanged() // the server may list other tools now
	return s, nil
}

// connect starts a session: the child for a stdio server, the transport, the
// handshake.
func (d *ToolDriver) connect(ctx context.Context) (*session, error) {
	s := &session{g: &guard{}}
	var t mcpsdk.Transport
	switch {
	case d.cfg.Transport != nil:
		t = d.cfg.Transport
	case len(d.cfg.Command) > 0:
		var err error
		if t, err = s.start(newCommand(d.cfg), d.cfg.MaxMessageBytes, d.cfg.MaxTools); err != nil {
			return nil, &ConnectError{Server: d.server, Err: fmt.Errorf("start: %w", err)}
		}
	default:
		st := &mcpsdk.StreamableClientTransport{Endpoint: d.cfg.URL, HTTPClient: httpClient(d.cfg, s.g), MaxEventSize: d.cfg.MaxMessageBytes}
		if d.cfg.OAuth != nil {
			st.OAuthHandler = d.cfg.OAuth
		}
		t = st
	}
	cs, err := d.client.Connect(ctx, t, nil)
	if err != nil {
		s.stopProcess()
		return nil, d.connectError(ctx, s, err)
	}
	s.cs = cs
	s.watch()
	return s, nil
}

// connectError wraps a failed start, handshake or first listing; a fault the
// transport found is the reason.
func (d *ToolDriver) connectError(ctx context.Context, s *session, err error) error {
	switch f := s.g.fault(); {
	case f != nil:
		if !errors.Is(err, f) {
			err = f
		}
	case malformed(err) != nil:
		err = malformed(err)
	case ctx.Err() != nil:
		err = fmt.Errorf("no answer to the handshake in time: %w", err)
	}
	if s.waitExit(0) {
		return &ConnectError{Server: d.server, Err: fmt.Errorf("%w; %s", err, s.exitText())}
	}
	return &ConnectError{Server: d.server, Err: err, Stderr: s.stderr.String()}
}

// Healthcheck reports ERROR with the reason when the session ended (the child
// exited, with the end of its stderr; the connection broke) or the server does
// not answer a ping within ctx's deadline (5 s when ctx has none), and OK with
// the number of tools otherwise. It does not reconnect; the next call does.
func (d *ToolDriver) Healthcheck(ctx context.Context) mcs.HealthResult {
	d.mu.Lock()
	s, closed, lastErr := d.sess, d.closed, d.lastErr
	d.mu.Unlock()
	switch {
	case closed:
		return mcs.HealthResult{Status: mcs.HealthError, Detail: "MCP server " + d.server + ": driver closed"}
	case s == nil:
		return mcs.HealthResult{Status: mcs.HealthError, Detail: fmt.Sprintf("MCP server %s: not connected: %v", d.server, lastErr)}
	}
	if reason := s.deadReason(); reason != "" {
		return mcs.HealthResult{Status: mcs.HealthError, Detail: "MCP server " + d.server + ": " + reason}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pingTimeout)
		defer cancel()
	}
	if err := s.cs.Ping(ctx, nil); err != nil {
		if ctx.Err() == nil {
			s.markBroken(err)
		}
		s.waitExit(exitGrace)
		reason := s.deadReason()
		if reason == "" {
			reason = fmt.Sprintf("no answer to ping: %v", err)
		}
		return mcs.HealthResult{Status: mcs.HealthError, Detail: "MCP server " + d.server + ": " + reason}
	}
	n := 0
	if ts := d.tools.Load(); ts != nil {
		n = len(ts.tools)
	}
	return mcs.HealthResult{Status: mcs.HealthOK, Detail: fmt.Sprintf("MCP server %s: connected, %d tools", d.server, n)}
}

// Close ends the session and, for a stdio server, the child and its process
// group: its input is closed, then it gets SIGTERM and finally SIGKILL if it
// does not exit, and it is reaped. Calls in flight fail with [ErrClosed]. Close
// waits for everything the driver started to end; it is idempotent and safe for
// concurrent use.
func (d *ToolDriver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.bg.Wait()
		return nil
	}
	d.closed = true
	s := d.sess
	d.sess = nil
	d.mu.Unlock()
	d.stop()
	if s != nil {
		s.close()
	}
	d.bg.Wait()
	return nil
}
