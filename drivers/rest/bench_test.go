package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// genDoc generates an OpenAPI 3.0 document of n operations (n/2 paths with a
// get and a post each) that resembles a real API: path, query and header
// parameters with descriptions, a JSON body per post through a component
// schema with eight documented properties, and shared responses.
func genDoc(n int) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{
		"Error": map[string]any{"type": "object", "required": []any{"code"}, "properties": map[string]any{
			"code": map[string]any{"type": "integer"}, "message": map[string]any{"type": "string"},
		}},
	}
	for i := range n / 2 {
		props := map[string]any{}
		for j := range 8 {
			props[fmt.Sprintf("field%d", j)] = map[string]any{
				"type":        "string",
				"description": fmt.Sprintf("Field %d of resource %d, stored as given.", j, i),
			}
		}
		name := fmt.Sprintf("Resource%d", i)
		schemas[name] = map[string]any{"type": "object", "required": []any{"field0"}, "properties": props}
		ref := map[string]any{"$ref": "#/components/schemas/" + name}
		responses := map[string]any{
			"200":     map[string]any{"description": "The resource.", "content": map[string]any{"application/json": map[string]any{"schema": ref}}},
			"default": map[string]any{"description": "An error.", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}},
		}
		params := []any{
			map[string]any{"name": "id", "in": "path", "required": true, "description": "The id of the resource.", "schema": map[string]any{"type": "string", "pattern": "^[a-z0-9-]+$"}},
			map[string]any{"name": "limit", "in": "query", "description": "The page size.", "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
			map[string]any{"name": "expand", "in": "query", "description": "Related resources to include.", "schema": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"owner", "history", "links"}}}},
			map[string]any{"name": "X-Request-ID", "in": "header", "description": "A correlation id echoed in the logs.", "schema": map[string]any{"type": "string", "format": "uuid"}},
		}
		item := map[string]any{}
		for _, m := range []string{"get", "post"} {
			op := map[string]any{
				"operationId": fmt.Sprintf("%s%s", m, name),
				"summary":     fmt.Sprintf("%s resource %d", m, i),
				"description": fmt.Sprintf("Runs %s on resource %d and answers with the resource as stored.", m, i),
				"tags":        []any{fmt.Sprintf("group%d", i%25)},
				"parameters":  params,
				"responses":   responses,
			}
			if m == "post" {
				op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": ref}}}
			}
			item[m] = op
		}
		paths[fmt.Sprintf("/groups/%d/resources%d/{id}", i%25, i)] = item
	}
	return map[string]any{
		"openapi":    "3.0.3",
		"info":       map[string]any{"title": "Generated", "version": "1.0.0"},
		"servers":    []any{map[string]any{"url": "https://api.example.com/v1"}},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

// BenchmarkLoad loads a generated document of 2,000 operations (about 5 MB)
// and lists its tools, once per iteration.
func BenchmarkLoad(b *testing.B) {
	doc := genDoc(2000)
	jsonDoc, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	yamlDoc, err := yaml.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{{"json", jsonDoc}, {"yaml", yamlDoc}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.data)))
			ctx := context.Background()
			for b.Loop() {
				td, err := NewToolDriver(Config{Spec: tc.data})
				if err != nil {
					b.Fatal(err)
				}
				tools, err := td.ListTools(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if len(tools) != 2000 {
					b.Fatalf("%d tools, want 2000", len(tools))
				}
			}
			b.ReportMetric(float64(len(tc.data))/1e6, "MB-doc")
		})
	}
}

// BenchmarkExecute measures one tool call against a loopback server, the
// document already loaded.
func BenchmarkExecute(b *testing.B) {
	api := newAPI(b, nil)
	td := mustToolDriver(b, Config{Spec: fixture(b, "petstore.yaml"), BaseURL: api.URL})
	ctx := context.Background()
	args := map[string]any{"limit": 5.0, "tags": []any{"a", "b"}, "vaccinated": true}
	if _, err := td.ExecuteTool(ctx, "listPets", args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := td.ExecuteTool(ctx, "listPets", args); err != nil {
			b.Fatal(err)
		}
	}
}
