//go:build unix

package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs/internal/npmpeer"
)

// server-everything's resources, templates, prompts, sampling and roots,
// through the API and the driver's own tools.
func TestServerEverythingResourcesPromptsSampling(t *testing.T) {
	dir := peers(t)
	var mu sync.Mutex
	var asked []string
	m := &model{tokens: 12}
	root := t.TempDir()
	d, err := New(testCtx(t), Config{
		Command:   []string{npmpeer.Node(t), npmpeer.Script(dir, npmpeer.ServerEverything, "dist/index.js"), "stdio"},
		Resources: true,
		Prompts:   true,
		Sampling:  m.sample,
		Roots:     []string{root},
		Consent: func(_ context.Context, name string, args map[string]any) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, fmt.Sprint(name, " ", args["messages"]))
			return true, nil
		},
		Logger: discardLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := testCtx(t)

	res, err := d.ListResources(ctx)
	if err != nil || len(res) == 0 {
		t.Fatalf("resources = %d, %v", len(res), err)
	}
	doc := ""
	for _, r := range res {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			doc = r.URI
			break
		}
	}
	if doc == "" {
		t.Fatalf("no static document among %d resources", len(res))
	}
	contents, err := d.ReadResource(ctx, doc)
	if err != nil || len(contents) != 1 || contents[0].Text == "" {
		t.Errorf("read %s = %v, %v", doc, contents, err)
	}
	tpl, err := d.ListResourceTemplates(ctx)
	var templates []string
	for _, x := range tpl {
		templates = append(templates, x.URITemplate)
	}
	if err != nil || !strings.Contains(strings.Join(templates, " "), "demo://resource/dynamic/blob/{resourceId}") {
		t.Errorf("templates = %v, %v", templates, err)
	}
	got, err := d.ExecuteTool(ctx, "resources__read", map[string]any{"uri": "demo://resource/dynamic/blob/3"})
	if err != nil || !strings.HasPrefix(got.(string), "[blob: demo://resource/dynamic/blob/3, text/plain, ") {
		t.Errorf("blob via resources__read = %v, %v", got, err)
	}
	got, err = d.ExecuteTool(ctx, "resources__read", map[string]any{"uri": "demo://resource/dynamic/text/3"})
	if err != nil || !strings.HasPrefix(got.(string), "Resource 3: This is a plaintext resource") {
		t.Errorf("text via resources__read = %v, %v", got, err)
	}
	got, err = d.ExecuteTool(ctx, "resources__list", nil)
	if err != nil || !strings.Contains(got.(string), doc) {
		t.Errorf("resources__list = %.300v, %v", got, err)
	}
	if err := d.Subscribe(ctx, doc); err != nil {
		t.Errorf("Subscribe: %v", err)
	}

	ps, err := d.ListPrompts(ctx)
	if err != nil || len(ps) == 0 {
		t.Fatalf("prompts = %v, %v", ps, err)
	}
	got, err = d.ExecuteTool(ctx, "prompts__get", map[string]any{"name": "args-prompt", "arguments": map[string]any{"city": "Oslo"}})
	if err != nil || got != "[user]\nWhat's weather in Oslo?" {
		t.Errorf("prompts__get = %q, %v", got, err)
	}
	def, _, _ := d.ToolDefinition(ctx, "prompts__get")
	if !strings.Contains(def.Description, "args-prompt") || !strings.Contains(def.Description, "city (required)") {
		t.Errorf("prompts__get description = %q", def.Description)
	}

	got, err = d.ExecuteTool(ctx, "trigger-sampling-request", map[string]any{"prompt": "tides", "maxTokens": 50})
	if err != nil || !strings.Contains(got.(string), "Two tides a day.") || !strings.Contains(got.(string), "small-1") {
		t.Errorf("trigger-sampling-request = %v, %v", got, err)
	}
	if reqs := m.requests(); len(reqs) != 1 || reqs[0].System != "You are a helpful test server." || reqs[0].MaxTokens != 50 {
		t.Errorf("model requests = %+v", reqs)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "sampling [user: Resource trigger-sampling-request context: tides]") {
		t.Errorf("consent asked %q", asked)
	}
	mu.Unlock()

	got, err = d.ExecuteTool(ctx, "get-roots-list", nil)
	if err != nil || !strings.Contains(got.(string), "file://"+root) {
		t.Errorf("get-roots-list = %v, %v; want the one root", got, err)
	}
}
