package mcp_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcs-go/mcs/drivers/mcp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's resources and prompts, read through the API and, with
// Config.Resources and Config.Prompts, called by a model as tools; a sampling
// request of the server answered by the operator's model after consent.
func ExampleConfig_resourcesPromptsSampling() {
	ctx := context.Background()
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	s.AddResource(&mcpsdk.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, Text: "Read me first."}}}, nil
		})
	s.AddPrompt(&mcpsdk.Prompt{Name: "review", Arguments: []*mcpsdk.PromptArgument{{Name: "file", Required: true}}},
		func(_ context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{
				{Role: "user", Content: &mcpsdk.TextContent{Text: "Review " + req.Params.Arguments["file"] + "."}},
			}}, nil
		})
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "summarize", Description: "Summarizes with the client's model"},
		func(_ context.Context, req *mcpsdk.CallToolRequest, _ struct{}) (*mcpsdk.CallToolResult, any, error) {
			if len(req.Params.InputResponses) == 0 { // ask the client's model first
				return &mcpsdk.CallToolResult{InputRequests: mcpsdk.InputRequestMap{"s": &mcpsdk.CreateMessageParams{
					MaxTokens: 50, Messages: []*mcpsdk.SamplingMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: "Summarize the readme."}}},
				}}}, nil, nil
			}
			res := req.Params.InputResponses["s"].(*mcpsdk.CreateMessageWithToolsResult)
			return &mcpsdk.CallToolResult{Content: res.Content}, nil, nil
		})
	clientSide, serverSide := mcpsdk.NewInMemoryTransports()
	session, err := s.Connect(ctx, serverSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()

	d, err := mcp.New(ctx, mcp.Config{
		Transport: clientSide,
		Resources: true,
		Prompts:   true,
		Sampling: func(_ context.Context, req mcp.SamplingRequest) (mcp.SamplingReply, error) {
			return mcp.SamplingReply{Text: "It says: read me first.", Model: "small"}, nil
		},
		Consent: func(_ context.Context, name string, args map[string]any) (bool, error) {
			fmt.Println("asked:", name, args["messages"])
			return true, nil
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	contents, err := d.ReadResource(ctx, "docs://readme")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(contents[0].Text)
	resp := d.ProcessLLMResponse(ctx, `{"tool": "prompts__get", "arguments": {"name": "review", "arguments": {"file": "main.go"}}}`)
	fmt.Println(resp.Calls[0].Result)
	resp = d.ProcessLLMResponse(ctx, `{"tool": "summarize", "arguments": {}}`)
	fmt.Println(resp.Calls[0].Result)
	// Output:
	// Read me first.
	// [user]
	// Review main.go.
	// asked: sampling [user: Summarize the readme.]
	// It says: read me first.
}
