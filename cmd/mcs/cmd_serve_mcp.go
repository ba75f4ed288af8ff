package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/mcpserver"
)

func init() { addCommand(newServeMCPCommand) }

// shutdownGrace bounds how long serve-mcp --http waits for calls in flight
// after Ctrl-C or SIGTERM.
const shutdownGrace = 5 * time.Second

// The connections of serve-mcp --http.
const (
	// defaultMaxConnections is how many connections it serves at once; more
	// wait to be accepted.
	defaultMaxConnections = 256
	// headerTimeout bounds the reading of a request's headers; the body has
	// the handler's deadline (mcpserver.WithRequestBodyTimeout).
	headerTimeout = 10 * time.Second
	// keepAliveTimeout closes a connection idle between requests, so that idle
	// connections do not hold the places of the connection cap.
	keepAliveTimeout = 2 * time.Minute
	// maxHeaderBytes bounds a request's headers.
	maxHeaderBytes = 64 << 10
)

func newServeMCPCommand(a *app) *cobra.Command {
	var (
		addr      string
		stateless bool
		maxArgs   int
		hosts     []string
		origins   []string
		sessions  int
		idle      time.Duration
		maxConns  int
	)
	c := &cobra.Command{
		Use:   "serve-mcp",
		Short: "Serve the stack's tools to MCP clients (stdio or streamable HTTP)",
		Long: `serve-mcp serves the stack's tools to MCP clients (desktop apps, IDEs, agents).
Every tools/call runs through the stack's middleware as a model's call would:
a denial or an auth challenge is a normal result the client's model reads, a
failed call is an error result.

Without --http the protocol runs over stdin and stdout, as MCP hosts start
their servers; nothing else is written to stdout, and logs go to stderr. The
terminal then cannot ask for consent, so a stack whose [middleware.permission]
has ask = true is refused: allow the tools with rules (read_only, allow, deny;
a call no rule allows fails closed), or serve over --http, where questions are
asked on this terminal. ask = "queue" works over stdio: a call no rule decides
waits for approval (the client's model reads its id), a person decides with mcs
approvals approve ID, and the same call then runs once. The MCP servers of mcp drivers that ask the user
(elicitation) are declined in stdio mode.

With --http ADDR it serves streamable HTTP on ADDR (the endpoint is every
path); --stateless keeps no session between requests, so several replicas of
the same stack can run behind a plain load balancer. An address without a host
(:8080) listens on the loopback interface only: other machines reach the server
only on an address given in full (0.0.0.0:8080), and then it warns, for the
server has no authentication of its own.

Over HTTP it answers only requests sent to localhost, to a loopback address, to
the address the client connected to, to the host of ADDR or to a name given
with --allow-host (403 otherwise: DNS rebinding), and from a browser only the
server's own pages and the origins given with --allow-origin (403 otherwise).
It keeps at most --max-sessions sessions (503 past it) and ends one after
--session-timeout without a request; it serves at most --max-connections
connections at once. A request body must arrive within 30s and hold at most
4 MiB (or --max-argument-bytes plus 1 MiB) and one JSON-RPC message: batches
are refused.

Ctrl-C or SIGTERM stops the server: calls in flight get ` + shutdownGrace.String() + ` to finish,
then the stack is closed.`,
		Example: `  mcs serve-mcp --stack mcs.toml
  mcs serve-mcp --stack mcs.toml --http 127.0.0.1:8080
  mcs serve-mcp --openapi openapi.json --http 0.0.0.0:8080 --stateless --allow-host tools.internal`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			for name, n := range map[string]int{"max-argument-bytes": maxArgs, "max-sessions": sessions, "max-connections": maxConns} {
				if n < 0 {
					return fmt.Errorf("--%s is %d; give a positive number, or 0 for the default", name, n)
				}
			}
			if idle < 0 {
				return fmt.Errorf("--session-timeout is %v; give a positive duration such as 30m, or 0 for the default", idle)
			}
			stdio := addr == ""
			if stdio {
				for _, name := range []string{"stateless", "allow-host", "allow-origin", "max-sessions", "session-timeout", "max-connections"} {
					if c.Flags().Changed(name) {
						return fmt.Errorf("--%s applies to --http only; add --http ADDR or remove --%s", name, name)
					}
				}
			}
			if stdio {
				// stdin carries the protocol: no question may read from it.
				a.ask = func(context.Context, string, map[string]any) (bool, error) {
					return false, errors.New("no terminal to ask on while serving MCP over stdio")
				}
			}
			st, err := a.load()
			if err != nil {
				return err
			}
			if stdio && st.AsksConsent() {
				return fmt.Errorf("%s asks for consent (ask = true in [middleware.permission]), but over stdio stdin and stdout carry the MCP protocol and nobody can answer; allow the tools with rules (read_only, allow) instead, make the calls wait for approval with ask = \"queue\", or serve over --http ADDR", st.File)
			}
			td, err := a.toolDriver(c.Context())
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			opts := []mcpserver.Option{mcpserver.WithImplementation("mcs", version), mcpserver.WithLogger(logger)}
			if stateless {
				opts = append(opts, mcpserver.WithStateless())
			}
			if maxArgs > 0 {
				opts = append(opts, mcpserver.WithMaxArgumentBytes(maxArgs))
			}
			var ln net.Listener
			if !stdio {
				// Listen before serving, so that the host of the address
				// actually listened on is allowed.
				if ln, err = listenMCP(addr, maxConns); err != nil {
					return err
				}
				defer ln.Close()
				if host := listenHost(addr); host != "" {
					opts = append(opts, mcpserver.WithAllowedHosts(host))
				}
				opts = append(opts, mcpserver.WithAllowedHosts(hosts...), mcpserver.WithAllowedOrigins(origins...),
					mcpserver.WithMaxSessions(sessions), mcpserver.WithSessionIdleTimeout(idle))
			}
			srv := mcpserver.New(td, opts...)
			defer srv.Close()
			if stdio {
				return a.serveStdio(c.Context(), srv)
			}
			return a.serveHTTP(c.Context(), srv, ln)
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "http", "", "serve streamable HTTP on this address (such as 127.0.0.1:8080) instead of stdio")
	f.BoolVar(&stateless, "stateless", false, "with --http: keep no session between requests (for replicas behind a load balancer)")
	f.IntVar(&maxArgs, "max-argument-bytes", 0, "the largest arguments object a client may send (default 1 MiB)")
	f.StringArrayVar(&hosts, "allow-host", nil, "with --http: a host name clients may reach the server by, besides localhost and its addresses (repeatable)")
	f.StringArrayVar(&origins, "allow-origin", nil, "with --http: a web origin (https://app.example.com) whose pages may call the server (repeatable)")
	f.IntVar(&sessions, "max-sessions", 0, fmt.Sprintf("with --http: the most sessions kept open at once (default %d)", mcpserver.DefaultMaxSessions))
	f.DurationVar(&idle, "session-timeout", 0, fmt.Sprintf("with --http: end a session after this long without a request (default %v)", mcpserver.DefaultSessionIdleTimeout))
	f.IntVar(&maxConns, "max-connections", 0, fmt.Sprintf("with --http: the most connections served at once (default %d)", defaultMaxConnections))
	return c
}

// listenMCP listens on addr, on the loopback interface when addr has no host,
// and serves at most maxConns connections at once (0: the default).
func listenMCP(addr string, maxConns int) (net.Listener, error) {
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", addr, err)
	}
	if maxConns <= 0 {
		maxConns = defaultMaxConnections
	}
	return limitListener(ln, maxConns), nil
}

// listenHost is the host name of a listen address, to allow as a Host; ""
// when there is none or it is an address literal (those are allowed when
// clients connect to them).
func listenHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	return host
}

// exposed returns a warning when addr is not a loopback address: other
// machines can reach the server, and it authenticates nobody.
func exposed(addr net.Addr) string {
	if ap, err := netip.ParseAddrPort(addr.String()); err == nil && ap.Addr().Unmap().IsLoopback() {
		return ""
	}
	return fmt.Sprintf("mcs: warning: %s is not a loopback address: other machines can reach this server, "+
		"and it asks them for no credentials: whoever connects can call the stack's tools; "+
		"serve on 127.0.0.1 unless a proxy in front of it authenticates clients\n", addr)
}

// newMCPHTTPServer is the http.Server of serve-mcp --http: headers must
// arrive within headerTimeout and idle connections close after
// keepAliveTimeout. It has no ReadTimeout or WriteTimeout: the handler bounds
// each body itself, and event streams and calls may last.
func newMCPHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       keepAliveTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// limitListener accepts at most n connections at once: Accept waits until a
// connection accepted before is closed.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its place back once, on the first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// serveStdio serves one session over the command's stdin and stdout until the
// client ends it (end of input) or ctx is done.
func (a *app) serveStdio(ctx context.Context, srv *mcpserver.Server) error {
	// The session reads through a pipe, so that ending it ends its read at
	// once; the copy from stdin ends with stdin.
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, a.stdin)
		pw.CloseWithError(err)
	}()
	t := &mcpsdk.IOTransport{Reader: pr, Writer: nopWriteCloser{a.stdout}}
	err := srv.Run(ctx, t)
	_ = pr.Close()
	switch {
	case err == nil, errors.Is(err, io.EOF), ctx.Err() != nil && errors.Is(err, context.Canceled):
		return nil
	}
	return fmt.Errorf("serve MCP over stdio: %w", err)
}

// serveHTTP serves streamable HTTP on ln until ctx is done, then closes the
// sessions and waits up to shutdownGrace for the requests in flight.
func (a *app) serveHTTP(ctx context.Context, srv *mcpserver.Server, ln net.Listener) error {
	hs := newMCPHTTPServer(srv.Handler())
	fmt.Fprintf(a.stderr, "mcs: serving MCP on http://%s/ (Ctrl-C stops)\n", ln.Addr())
	if w := exposed(ln.Addr()); w != "" {
		fmt.Fprint(a.stderr, w)
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve MCP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	// The sessions' event streams never end by themselves: close them first.
	_ = srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-served
	fmt.Fprintln(a.stderr, "mcs: stopped serving MCP")
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
