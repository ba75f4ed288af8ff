package stack_test

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/stack"
)

// addResourcesPromptsSampling gives the test server a resource, a prompt, a
// tool that asks the client's model and one that lists the client's roots.
func addResourcesPromptsSampling(s *mcpsdk.Server) {
	s.AddResource(&mcpsdk.Resource{URI: "mem://readme", Name: "readme", MIMEType: "text/plain"},
		func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, Text: "read me"}}}, nil
		})
	s.AddPrompt(&mcpsdk.Prompt{Name: "hello"}, func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
		return &mcpsdk.GetPromptResult{Messages: []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: "hello"}}}}, nil
	})
	s.AddTool(&mcpsdk.Tool{Name: "sample", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcpsdk.CreateMessageParams{MaxTokens: 10, Messages: []*mcpsdk.SamplingMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: "hi"}}}})
			if err != nil {
				return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "refused"}}}, nil
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{res.Content}}, nil
		})
	s.AddTool(&mcpsdk.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: strings.Join(uris, " ")}}}, nil
		})
}

func TestMCPDriverResourcesPromptsRootsSampling(t *testing.T) {
	tests := []struct {
		name    string
		extra   string
		model   bool
		answer  bool
		tools   []string
		sample  string
		asked   []string
		roots   string // relative to the stack file's directory
		noRoots bool
	}{
		{name: "off", tools: []string{"confirm", "echo", "roots", "sample"}, sample: "refused", noRoots: true},
		{name: "resources, prompts and roots", extra: "resources = true\nprompts = true\nroots = [\"./data\"]\n", roots: "data",
			tools: []string{"confirm", "echo", "prompts__get", "resources__list", "resources__read", "roots", "sample"}, sample: "refused"},
		{name: "sampling without a model", extra: "sampling = true\n", answer: true, tools: []string{"confirm", "echo", "roots", "sample"}, sample: "refused", noRoots: true},
		{name: "sampling asks the host", extra: "sampling = true\n", model: true, answer: true, tools: []string{"confirm", "echo", "roots", "sample"},
			sample: "model says hi", asked: []string{"sampling: [user: hi]"}, noRoots: true},
		{name: "sampling declined", extra: "sampling = true\n", model: true, answer: false, tools: []string{"confirm", "echo", "roots", "sample"},
			sample: "refused", asked: []string{"sampling: [user: hi]"}, noRoots: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := strings.Replace(serverStack(t, "\n[middleware.permission]\nallow = [\"*\"]\n"), "call_timeout", tc.extra+"call_timeout", 1)
			s, err := stack.Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var asked []string
			s.Host.Consent = func(_ context.Context, name string, args map[string]any) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, name+": "+toString(args["messages"]))
				return tc.answer, nil
			}
			if tc.model {
				s.Host.Sampling = func(_ context.Context, req mcp.SamplingRequest) (mcp.SamplingReply, error) {
					return mcp.SamplingReply{Text: "model says " + req.Messages[0].Text, Model: "m"}, nil
				}
			}
			ctx := context.Background()
			d, err := s.Build(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			td := d.(mcs.ToolDriver)
			names := sortedToolNames(t, td)
			if diff := cmp.Diff(tc.tools, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if slices.Contains(names, "resources__read") {
				got, err := td.ExecuteTool(ctx, "resources__read", map[string]any{"uri": "mem://readme"})
				if err != nil || got != "read me" {
					t.Errorf("resources__read = %v, %v", got, err)
				}
				got, err = td.ExecuteTool(ctx, "prompts__get", map[string]any{"name": "hello"})
				if err != nil || got != "[user]\nhello" {
					t.Errorf("prompts__get = %v, %v", got, err)
				}
			}
			got, err := td.ExecuteTool(ctx, "sample", nil)
			if err != nil || got != tc.sample {
				t.Errorf("sample = %v, %v; want %q", got, err, tc.sample)
			}
			got, err = td.ExecuteTool(ctx, "roots", nil)
			want := ""
			if !tc.noRoots {
				want = (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, tc.roots))}).String()
			}
			if err != nil || got != want {
				t.Errorf("roots = %v, %v; want %q", got, err, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.asked, asked); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
		})
	}
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return strings.NewReplacer(`"`, "", `,`, " ").Replace(string(b))
}

func TestMCPDriverRootErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"roots = [\"\"]\n", `key "roots": holds an empty entry`},
		{"roots = [\"https://host/x\"]\n", `key "roots": "https://host/x" is not a directory or a file:// URI`},
		{"resources = \"yes\"\n", `key "resources"`},
	} {
		_, err := stack.Parse("s.toml", []byte("[[driver]]\nlabel = \"srv\"\ntype = \"mcp\"\ncommand = [\"srv\"]\n"+tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to say %s", tc.body, err, tc.want)
		}
	}
}
