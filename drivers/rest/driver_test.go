package rest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

func TestConfigValidation(t *testing.T) {
	spec := []byte("openapi: 3.0.3\n")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"nothing", Config{}, "neither SpecURL nor Spec is set"},
		{"both", Config{Spec: spec, SpecURL: "a.yaml"}, "both SpecURL and Spec are set"},
		{"unsupported scheme", Config{SpecURL: "ftp://example.com/a.yaml"}, `SpecURL scheme "ftp" is not supported`},
		{"URL without host", Config{SpecURL: "https:///a.yaml"}, "has no host"},
		{"relative BaseURL", Config{Spec: spec, BaseURL: "/v1"}, `BaseURL "/v1" is not an absolute http or https URL`},
		{"BaseURL scheme", Config{Spec: spec, BaseURL: "file:///etc"}, "is not an absolute http or https URL"},
		{"BaseURL fragment", Config{Spec: spec, BaseURL: "https://a.example/#x"}, "has a fragment"},
		{"header name", Config{Spec: spec, Headers: map[string]string{"Bad Name": "x"}}, `header name "Bad Name" is not a valid HTTP header name`},
		{"header value", Config{Spec: spec, Headers: map[string]string{"X-A": "a\r\nX-B: b"}}, `header "X-A" has a value with a line break`},
		{"timeout", Config{Spec: spec, Timeout: -1}, "Timeout is negative"},
		{"max response", Config{Spec: spec, MaxResponseBytes: -1}, "MaxResponseBytes is negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want ErrInvalidConfig with %q", err, tc.want)
			}
		})
	}
	for _, ok := range []Config{
		{SpecURL: `C:\specs\api.yaml`},
		{SpecURL: "HTTPS://api.example.com/openapi.json"},
		{Spec: spec, BaseURL: "http://127.0.0.1:8080/v1?x=1"},
	} {
		if _, err := NewToolDriver(ok); err != nil {
			t.Errorf("NewToolDriver(%+v): %v", ok, err)
		}
	}
}

// The driver keeps its own copy of the configuration.
func TestConfigIsCopied(t *testing.T) {
	api := newAPI(t, nil)
	spec := fixture(t, "petstore.yaml")
	headers := map[string]string{"X-Client": "one"}
	tags := []string{"store"}
	td := mustToolDriver(t, Config{Spec: spec, BaseURL: api.URL, Headers: headers, IncludeTags: tags})
	headers["X-Client"] = "two"
	tags[0] = "pets"
	copy(spec, "garbage")
	tools, err := td.ListTools(context.Background())
	if err != nil || len(tools) != 1 || tools[0].Name != "get_store_inventory" {
		t.Fatalf("ListTools = %v, %v; want the store tool only", tools, err)
	}
	if _, err := td.ExecuteTool(context.Background(), "get_store_inventory", nil); err != nil {
		t.Fatal(err)
	}
	if got := api.requests()[0].Header.Get("X-Client"); got != "one" {
		t.Errorf("X-Client = %q, want the value at construction", got)
	}
}

func TestProcessLLMResponse(t *testing.T) {
	api := newAPI(t, nil)
	var seen []string
	mw := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		seen = append(seen, name)
		return next(ctx, name, args)
	})
	d, err := New(Config{Spec: fixture(t, "petstore.yaml"), BaseURL: api.URL}, mcs.WithMiddleware(mw))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	resp := d.ProcessLLMResponse(ctx, `I will look. {"tool":"listPets","arguments":{"limit":2,"tags":["cat"]}}`)
	if !resp.CallExecuted || resp.CallFailed || len(resp.Calls) != 1 || resp.Calls[0].Result != "ok" {
		t.Errorf("response = %+v, want one executed call with result ok", resp)
	}
	if diff := cmp.Diff([]recorded{{Method: "GET", URI: "/pets?limit=2&tags=cat", Header: hdr()}}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	// Another driver's tool: ignored.
	if resp := d.ProcessLLMResponse(ctx, `{"tool":"read_file","arguments":{"path":"a"}}`); resp.CallExecuted || resp.CallFailed || resp.Calls != nil {
		t.Errorf("a foreign call gave %+v, want the zero Response", resp)
	}

	// A bad argument: a failed call with a retry prompt that lists the names.
	resp = d.ProcessLLMResponse(ctx, `{"tool":"createPet","arguments":{"nam":"Rex"}}`)
	if !resp.CallFailed || !strings.Contains(resp.RetryPrompt, "valid arguments: name (required), tag") {
		t.Errorf("response = %+v, want a failed call whose retry prompt lists the arguments", resp)
	}
	if len(api.requests()) != 1 {
		t.Errorf("the bad call was sent")
	}
	if diff := cmp.Diff([]string{"listPets", "createPet"}, seen); diff != "" {
		t.Errorf("middleware saw (-want +got):\n%s", diff)
	}

	desc, err := d.FunctionDescription(ctx, "")
	if err != nil || !strings.Contains(desc, "listPets") || !strings.Contains(desc, "get_store_inventory") {
		t.Errorf("FunctionDescription = %q, %v", desc, err)
	}
}
