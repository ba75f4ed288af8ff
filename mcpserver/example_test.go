package mcpserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/mcpserver"
	"github.com/mcs-go/mcs/middleware/permission"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const todoSpec = `openapi: 3.0.3
info: {title: Todos, version: 1.0.0}
paths:
  /todos:
    get:
      operationId: listTodos
      summary: List the todos
      responses: {"200": {description: The todos}}
  /todos/{id}:
    delete:
      operationId: deleteTodo
      summary: Delete a todo
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses: {"204": {description: Deleted}}
`

// A REST API, described by its OpenAPI spec, served to MCP clients over
// streamable HTTP, with the consent policy of the REST driver applying to them:
// listing runs against the API, deleting is denied, and the client's model reads
// the denial as a normal result.
func ExampleServer_Handler() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `[{"id":1,"title":"write the report"}]`)
	}))
	defer api.Close()

	// Lists run; the user declines the rest. (A Deny rule would leave deleteTodo out
	// of the listing.)
	decline := func(context.Context, string, map[string]any) (bool, error) { return false, nil }
	policy := permission.New(decline, permission.WithRules(permission.Allow("list*")))
	todos, err := rest.New(rest.Config{Spec: []byte(todoSpec), BaseURL: api.URL}, mcs.WithMiddleware(policy))
	if err != nil {
		fmt.Println(err)
		return
	}
	server := mcpserver.New(todos, mcpserver.WithImplementation("todos", "1.0.0"), mcpserver.WithLogger(slog.New(slog.DiscardHandler)))
	defer server.Close()
	endpoint := httptest.NewServer(server.Handler()) // or http.ListenAndServe(addr, server.Handler())
	defer endpoint.Close()

	// Any MCP client; here the SDK's own.
	ctx := context.Background()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "host", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: endpoint.URL}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(tool.Name+":", tool.Description)
	}
	for _, call := range []*mcpsdk.CallToolParams{
		{Name: "listTodos"},
		{Name: "deleteTodo", Arguments: map[string]any{"id": 1}},
	} {
		res, err := session.CallTool(ctx, call)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Content[0].(*mcpsdk.TextContent).Text, res.IsError)
	}
	// Output:
	// deleteTodo: Delete a todo
	// listTodos: List the todos
	// [{"id":1,"title":"write the report"}] false
	// {"message":"User denied execution of 'deleteTodo'.","permission_denied":true,"tool":"deleteTodo"} false
}

// A driver served over stdio, as an MCP host (a desktop app, an IDE) starts a
// server: the host runs the program and talks to it on stdin and stdout.
// Here the transport is in memory, so that the example runs by itself.
func ExampleServer_Run() {
	todos, err := rest.New(rest.Config{Spec: []byte(todoSpec), BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	server := mcpserver.New(todos, mcpserver.WithLogger(slog.New(slog.DiscardHandler)))
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	clientSide, serverSide := mcpsdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, serverSide) }() // in a program: server.Run(ctx, &mcpsdk.StdioTransport{})

	session, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := session.ListTools(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Tools), "tools")
	_ = session.Close() // the client ends the session; Run returns
	<-done
	// Output:
	// 2 tools
}

// The guards of the HTTP handler: a page of another site (an Origin not
// allowed) and a name the server does not answer to (DNS rebinding) get 403,
// a batch gets a JSON-RPC error, and the allowed origin is served.
func ExampleWithAllowedOrigins() {
	todos, err := rest.New(rest.Config{Spec: []byte(todoSpec), BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		fmt.Println(err)
		return
	}
	server := mcpserver.New(todos, mcpserver.WithLogger(slog.New(slog.DiscardHandler)),
		mcpserver.WithAllowedOrigins("https://console.example.com"),
		mcpserver.WithAllowedHosts("tools.example.com"),
		mcpserver.WithMaxSessions(20), mcpserver.WithSessionIdleTimeout(30*time.Minute))
	defer server.Close()
	endpoint := httptest.NewServer(server.Handler())
	defer endpoint.Close()

	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	send := func(what, host, origin, body string) {
		req, _ := http.NewRequest(http.MethodPost, endpoint.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		fmt.Println(resp.StatusCode, what)
	}
	send("a page of another site", "", "https://evil.example", initialize)
	send("a rebound name", "rebound.example", "", initialize)
	send("a batch", "", "", "["+initialize+"]")
	send("the allowed origin", "", "https://console.example.com", initialize)
	send("the allowed host", "tools.example.com", "", initialize)
	// Output:
	// 403 a page of another site
	// 403 a rebound name
	// 400 a batch
	// 200 the allowed origin
	// 200 the allowed host
}
