package mcp_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteArgs struct {
	Text string `json:"text" jsonschema:"the note"`
}

// notesServer is an MCP server with a read-only and a destructive tool, as any
// MCP server a user already runs.
func notesServer() *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "add_note", Description: "Adds a note",
		Annotations: &mcpsdk.ToolAnnotations{IdempotentHint: false}},
		func(_ context.Context, _ *mcpsdk.CallToolRequest, in noteArgs) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "added: " + in.Text}}}, nil, nil
		})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "delete_notes", Description: "Deletes every note"},
		func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "all notes deleted"}}}, nil, nil
		})
	return s
}

// An MCP server behind the consent middleware and an orchestrator: the model's
// call to add a note runs on the server, its call to delete every note is
// denied by the policy and the model reads the denial. The server here is
// connected in memory; Config.Command or Config.URL reach a real one.
func ExampleNew() {
	ctx := context.Background()
	clientSide, serverSide := mcpsdk.NewInMemoryTransports()
	session, err := notesServer().Connect(ctx, serverSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()

	// The person who consents to tool calls also answers the server's
	// elicitation requests (here: nobody is asked, everyone declines).
	var consent permission.ConsentFunc = func(context.Context, string, map[string]any) (bool, error) { return false, nil }
	policy := permission.New(consent, permission.WithRules(
		permission.Allow("add_*"),
		permission.Deny("delete_*"),
	))
	notes, err := mcp.New(ctx, mcp.Config{Transport: clientSide, Consent: consent, Logger: slog.New(slog.DiscardHandler)}, mcs.WithMiddleware(policy))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer notes.Close()

	o := orchestrator.New(orchestrator.Flat())
	if err := o.AddDriver("notes", notes); err != nil {
		fmt.Println(err)
		return
	}
	resp := o.ProcessLLMResponse(ctx, `{"tool": "add_note", "arguments": {"text": "buy milk"}}`)
	fmt.Println(resp.Calls[0].Result)
	resp = o.ProcessLLMResponse(ctx, `{"tool": "delete_notes", "arguments": {}}`)
	fmt.Println(resp.Calls[0].Result)
	fmt.Println(notes.Healthcheck(ctx).Status)
	// Output:
	// added: buy milk
	// {"message":"Execution of 'delete_notes' was denied by policy.","permission_denied":true,"tool":"delete_notes"}
	// OK
}

// The tool half alone: the server's tools as MCS tools, with their parameters
// and annotations, and a call.
func ExampleNewToolDriver() {
	ctx := context.Background()
	clientSide, serverSide := mcpsdk.NewInMemoryTransports()
	session, err := notesServer().Connect(ctx, serverSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	td, err := mcp.NewToolDriver(ctx, mcp.Config{Transport: clientSide})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer td.Close()
	tools, err := td.ListTools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range tools {
		fmt.Printf("%s: %s %v", t.Name, t.Description, t.Annotations != nil)
		for _, p := range t.Parameters {
			fmt.Printf(" [%s required=%v: %s]", p.Name, p.Required, p.Description)
		}
		fmt.Println()
	}
	res, err := td.ExecuteTool(ctx, "add_note", map[string]any{"text": "call Ada"})
	fmt.Println(res, err)
	// Output:
	// add_note: Adds a note true [text required=true: the note]
	// delete_notes: Deletes every note false
	// added: call Ada <nil>
}
