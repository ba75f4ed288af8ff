package mcpserver_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/mcpserver"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

const petSpec = `openapi: 3.0.3
info: {title: Pets, version: 1.0.0}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List the pets
      parameters:
        - {name: limit, in: query, schema: {type: integer}}
      responses: {"200": {description: The pets}}
  /pets/{petId}:
    delete:
      operationId: deletePet
      summary: Delete a pet
      parameters:
        - {name: petId, in: path, required: true, schema: {type: string}}
      responses: {"204": {description: Deleted}}
`

// petAPI serves the pets and records the requests that reach it.
type petAPI struct {
	mu   sync.Mutex
	seen []string
}

func (a *petAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Method+" "+r.URL.RequestURI())
	a.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/pets":
		fmt.Fprintf(w, `[{"id":1,"name":"Rex"}]`)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func (a *petAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// decline is a consent handler that declines every call it is asked about.
func decline(context.Context, string, map[string]any) (bool, error) { return false, nil }

// TestRoundTrip: REST driver with a consent policy -> mcpserver over streamable
// HTTP -> drivers/mcp -> orchestrator -> ProcessLLMResponse.
func TestRoundTrip(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			api := &petAPI{}
			apiSrv := httptest.NewServer(api)
			defer apiSrv.Close()

			// Lists run; the user declines the rest. (A Deny rule would hide deletePet.)
			policy := permission.New(decline, permission.WithRules(permission.Allow("list*")))
			served, err := rest.New(rest.Config{Spec: []byte(petSpec), BaseURL: apiSrv.URL}, mcs.WithMiddleware(policy))
			if err != nil {
				t.Fatal(err)
			}
			opts := []mcpserver.Option{mcpserver.WithLogger(quiet())}
			if stateless {
				opts = append(opts, mcpserver.WithStateless())
			}
			ms := mcpserver.New(served, opts...)
			mcpSrv := httptest.NewServer(ms.Handler())
			defer mcpSrv.Close()
			defer ms.Close()

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			remote, err := mcp.NewToolDriver(ctx, mcp.Config{URL: mcpSrv.URL, HTTPClient: hc, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			defer remote.Close()

			o := orchestrator.New(orchestrator.Flat())
			if err := o.AddDriver("pets", remote); err != nil {
				t.Fatal(err)
			}
			reply := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "listPets", "arguments": `{"limit":2}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "deletePet", "arguments": `{"petId":"1"}`}},
			}}
			resp := o.ProcessLLMResponse(ctx, reply)
			if !resp.CallExecuted || resp.CallFailed || len(resp.Calls) != 2 {
				t.Fatalf("response = %+v", resp)
			}
			if got := resp.Calls[0].Result; got != `[{"id":1,"name":"Rex"}]` {
				t.Errorf("listPets = %#v", got)
			}
			denial, _ := resp.Calls[1].Result.(string)
			if !strings.Contains(denial, `"permission_denied":true`) || !strings.Contains(denial, "deletePet") {
				t.Errorf("deletePet = %#v, want the served side's denial as text", resp.Calls[1].Result)
			}
			if diff := cmp.Diff([]string{"GET /pets?limit=2"}, api.requests()); diff != "" {
				t.Errorf("requests at the API (-want +got):\n%s", diff)
			}
			if len(resp.Messages) != 3 || resp.Messages[1]["tool_call_id"] != "call_1" {
				t.Errorf("history = %v", resp.Messages)
			}
			tools, err := remote.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			// The SDK lists a server's tools by name.
			if diff := cmp.Diff([]string{"deletePet", "listPets"}, names); diff != "" {
				t.Errorf("tools over MCP (-want +got):\n%s", diff)
			}
		})
	}
}

// annotated is a driver whose tool carries a title and annotations.
type annotated struct{}

func (annotated) Meta() mcs.Meta { return mcs.Meta{ID: "annotated"} }
func (annotated) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{
		Name: "wipe", Title: "Wipe", Description: "wipes the disk",
		Parameters:  []mcs.Parameter{{Name: "disk", Description: "which", Required: true}, {Name: "passes", Schema: map[string]any{"type": "integer", "minimum": 1.0}}},
		Annotations: &mcs.ToolAnnotations{Destructive: true, OpenWorld: false},
	}}, nil
}
func (annotated) ExecuteTool(context.Context, string, map[string]any) (any, error) { return "ok", nil }

func TestToolDefinitionRoundTrip(t *testing.T) {
	ms := mcpserver.New(annotated{}, mcpserver.WithLogger(quiet()))
	ct, st := sdkmcp.NewInMemoryTransports()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ms.Run(runCtx, st) }()
	defer func() { stop(); <-done }()
	d, err := mcp.NewToolDriver(ctx, mcp.Config{Transport: ct, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := annotated{}.ListTools(ctx)
	want[0].Parameters[0].Schema = map[string]any{"type": "string", "description": "which"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool after MCS -> MCP -> MCS (-want +got):\n%s", diff)
	}
}

// TestProxy puts consent in front of an MCP server and serves it again over MCP:
// a call the policy denies never reaches the upstream server, and a tool the
// upstream server adds reaches the downstream client as list_changed.
func TestProxy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	upstream := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "upstream", Version: "1"}, nil)
	var mu sync.Mutex
	var ran []string
	tool := func(name string) {
		upstream.AddTool(&sdkmcp.Tool{Name: name, Description: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
				mu.Lock()
				ran = append(ran, name)
				mu.Unlock()
				return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: name + " ran"}}}, nil
			})
	}
	tool("read_it")
	tool("drop_it")
	ut, us := sdkmcp.NewInMemoryTransports()
	uss, err := upstream.Connect(ctx, us, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer uss.Close()
	policy := permission.New(func(_ context.Context, name string, _ map[string]any) (bool, error) {
		return !strings.HasPrefix(name, "drop_"), nil // the user declines drop_it
	})
	proxied, err := mcp.New(ctx, mcp.Config{Transport: ut, Logger: quiet()}, mcs.WithMiddleware(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer proxied.Close()

	proxy := mcpserver.New(proxied, mcpserver.WithLogger(quiet()), mcpserver.WithPollInterval(time.Millisecond))
	dt, ds := sdkmcp.NewInMemoryTransports()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- proxy.Run(runCtx, ds) }()
	defer func() { stop(); <-done }()
	changed := make(chan struct{}, 10)
	down, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "host", Version: "1"}, &sdkmcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdkmcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, dt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()

	for _, name := range []string{"read_it", "drop_it"} {
		res, err := down.CallTool(ctx, &sdkmcp.CallToolParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", name, res.Content[0].(*sdkmcp.TextContent).Text)
	}
	mu.Lock()
	if diff := cmp.Diff([]string{"read_it"}, ran); diff != "" {
		t.Errorf("calls that reached upstream (-want +got):\n%s", diff)
	}
	mu.Unlock()

	if _, err := down.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	tool("new_one")
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no list_changed downstream after upstream added a tool")
	}
	res, err := down.CallTool(ctx, &sdkmcp.CallToolParams{Name: "new_one"})
	if err != nil || res.IsError {
		t.Fatalf("new_one = %+v, %v", res, err)
	}
}
