package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/mcpserver"
)

func init() { addCommand(newServeMCPCommand) }

// shutdownGrace bounds how long serve-mcp --http waits for calls in flight
// after Ctrl-C or SIGTERM.
const shutdownGrace = 5 * time.Second

func newServeMCPCommand(a *app) *cobra.Command {
	var (
		addr      string
		stateless bool
		maxArgs   int
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
asked on this terminal. The MCP servers of mcp drivers that ask the user
(elicitation) are declined in stdio mode.

With --http ADDR it serves streamable HTTP on ADDR (the endpoint is every
path); --stateless keeps no session between requests, so several replicas of
the same stack can run behind a plain load balancer.

Ctrl-C or SIGTERM stops the server: calls in flight get ` + shutdownGrace.String() + ` to finish,
then the stack is closed.`,
		Example: `  mcs serve-mcp --stack mcs.toml
  mcs serve-mcp --stack mcs.toml --http 127.0.0.1:8080
  mcs serve-mcp --openapi openapi.json --http :8080 --stateless`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if maxArgs < 0 {
				return fmt.Errorf("--max-argument-bytes is %d; give a positive size, or 0 for the default", maxArgs)
			}
			stdio := addr == ""
			if stdio && stateless {
				return errors.New("--stateless applies to --http only; add --http ADDR or remove --stateless")
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
				return fmt.Errorf("%s asks for consent (ask = true in [middleware.permission]), but over stdio stdin and stdout carry the MCP protocol and nobody can answer; allow the tools with rules (read_only, allow) instead, or serve over --http ADDR", st.File)
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
			srv := mcpserver.New(td, opts...)
			defer srv.Close()
			if stdio {
				return a.serveStdio(c.Context(), srv)
			}
			return a.serveHTTP(c.Context(), srv, addr)
		},
	}
	f := c.Flags()
	f.StringVar(&addr, "http", "", "serve streamable HTTP on this address (such as 127.0.0.1:8080) instead of stdio")
	f.BoolVar(&stateless, "stateless", false, "with --http: keep no session between requests (for replicas behind a load balancer)")
	f.IntVar(&maxArgs, "max-argument-bytes", 0, "the largest arguments object a client may send (default 1 MiB)")
	return c
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

// serveHTTP serves streamable HTTP on addr until ctx is done, then closes the
// sessions and waits up to shutdownGrace for the requests in flight.
func (a *app) serveHTTP(ctx context.Context, srv *mcpserver.Server, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", addr, err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.stderr, "mcs: serving MCP on http://%s/ (Ctrl-C stops)\n", ln.Addr())
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
