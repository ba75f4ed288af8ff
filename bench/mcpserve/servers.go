package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	mark3 "github.com/mark3labs/mcp-go/mcp"
	mark3server "github.com/mark3labs/mcp-go/server"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcpserver"
	"github.com/mcs-go/mcs/tools"
)

// The servers compared. Each serves one tool, add(a, b) = a + b, over
// streamable HTTP at /mcp.
const (
	kindMCPServer = "mcpserver" // this module's server over a typed tools table
	kindGoSDK     = "gosdk"     // a plain go-sdk server: mcp.AddTool
	kindMCPGo     = "mcpgo"     // github.com/mark3labs/mcp-go
)

var kinds = []string{kindMCPServer, kindGoSDK, kindMCPGo}

type addIn struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

func add(_ context.Context, in addIn) (addOut, error) { return addOut{Sum: in.A + in.B}, nil }

// handler returns the MCP endpoint of one server kind.
func handler(kind string, stateless bool) (http.Handler, error) {
	quiet := slog.New(slog.DiscardHandler)
	switch kind {
	case kindMCPServer:
		t := tools.New(mcs.Meta{ID: "bench/add", Name: "add", Version: "1"})
		tools.Add(t, "add", "Adds two numbers", add)
		opts := []mcpserver.Option{mcpserver.WithLogger(quiet), mcpserver.WithMaxSessions(4096)}
		if stateless {
			opts = append(opts, mcpserver.WithStateless())
		}
		return mcpserver.New(t, opts...).Handler(), nil
	case kindGoSDK:
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "bench", Version: "1"}, &mcpsdk.ServerOptions{Logger: quiet})
		mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "add", Description: "Adds two numbers"},
			func(ctx context.Context, _ *mcpsdk.CallToolRequest, in addIn) (*mcpsdk.CallToolResult, addOut, error) {
				out, err := add(ctx, in)
				return nil, out, err
			})
		return mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s },
			&mcpsdk.StreamableHTTPOptions{Stateless: stateless, Logger: quiet}), nil
	case kindMCPGo:
		s := mark3server.NewMCPServer("bench", "1", mark3server.WithToolCapabilities(false))
		s.AddTool(mark3.NewTool("add", mark3.WithDescription("Adds two numbers"),
			mark3.WithNumber("a", mark3.Required(), mark3.Description("the first number")),
			mark3.WithNumber("b", mark3.Required(), mark3.Description("the second number"))),
			func(ctx context.Context, req mark3.CallToolRequest) (*mark3.CallToolResult, error) {
				a, err := req.RequireFloat("a")
				if err != nil {
					return mark3.NewToolResultError(err.Error()), nil
				}
				b, err := req.RequireFloat("b")
				if err != nil {
					return mark3.NewToolResultError(err.Error()), nil
				}
				out, _ := add(ctx, addIn{A: a, B: b})
				text, _ := json.Marshal(out)
				return mark3.NewToolResultStructured(out, string(text)), nil
			})
		return mark3server.NewStreamableHTTPServer(s, mark3server.WithStateLess(stateless)), nil
	}
	return nil, fmt.Errorf("unknown server %q; use one of %v", kind, kinds)
}

// stats is what a server process reports of itself.
type stats struct {
	CPU      time.Duration `json:"cpu_ns"`      // user and system time of the process
	Alloc    uint64        `json:"alloc_bytes"` // bytes allocated on the heap so far
	GCs      uint32        `json:"gcs"`
	WireIn   int64         `json:"wire_in"`  // bytes read from client connections
	WireOut  int64         `json:"wire_out"` // bytes written to them
	HeapPeak uint64        `json:"heap_sys"` // heap obtained from the OS
	MaxRSS   int64         `json:"maxrss"`   // peak resident set, bytes
}

// serve runs one server process: it listens on a loopback port, prints the
// address on stdout, serves the MCP endpoint at /mcp and its own figures at
// /stats, and exits when its standard input is closed.
func serve(kind string, stateless bool) error {
	h, err := handler(kind, stateless)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cl := &countingListener{Listener: l}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(stats{
			CPU:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
			Alloc:    ms.TotalAlloc,
			GCs:      ms.NumGC,
			WireIn:   cl.in.Load(),
			WireOut:  cl.out.Load(),
			HeapPeak: ms.HeapSys,
			MaxRSS:   ru.Maxrss * 1024, // getrusage reports kilobytes on Linux
		})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = srv.Close()
	}()
	fmt.Println(l.Addr().String())
	if err := srv.Serve(cl); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// countingListener counts the bytes of its connections.
type countingListener struct {
	net.Listener
	in, out atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.in.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.l.out.Add(int64(n))
	return n, err
}
