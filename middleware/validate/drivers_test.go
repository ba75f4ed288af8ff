package validate_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/csv"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/middleware/validate"
)

type driverCase struct {
	name string
	tool string
	args map[string]any
	want []string // nil: the call must reach the tool and succeed
}

// run executes each case through d and checks the problems; reached counts the
// calls that got through to the backend.
func run(t *testing.T, d mcs.ToolDriver, reached func() int64, cases []driverCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before := reached()
			_, err := d.ExecuteTool(context.Background(), tt.tool, tt.args)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("valid call failed: %v", err)
				}
				if reached() == before {
					t.Error("the valid call did not reach the tool")
				}
				return
			}
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *mcs.ArgumentsError", err)
			}
			if diff := cmp.Diff(tt.want, ae.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if reached() != before {
				t.Error("an invalid call reached the tool")
			}
		})
	}
}

func TestRESTPetstore(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	spec, err := os.ReadFile("../../drivers/rest/testdata/petstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := rest.New(rest.Config{Spec: spec, BaseURL: srv.URL, HTTPClient: srv.Client()}, mcs.WithMiddleware(validate.New(validate.WithCoercion())))
	if err != nil {
		t.Fatal(err)
	}
	run(t, d, hits.Load, []driverCase{
		{name: "list", tool: "listPets", args: map[string]any{"limit": 10.0, "tags": []any{"a"}, "vaccinated": true}},
		{name: "list coerced", tool: "listPets", args: map[string]any{"limit": "10", "tags": `["a","b"]`, "vaccinated": "false"}},
		{name: "limit word", tool: "listPets", args: map[string]any{"limit": "ten"}, want: []string{`/limit: want integer, got string "ten"`}},
		{name: "limit above maximum", tool: "listPets", args: map[string]any{"limit": 200.0}, want: []string{`/limit: want a number <= 100, got number 200`}},
		{name: "tags items", tool: "listPets", args: map[string]any{"tags": []any{"a", 3.0}}, want: []string{`/tags/1: want string, got number 3`}},
		{name: "create", tool: "createPet", args: map[string]any{"name": "Rex", "tag": "dog"}},
		{name: "create problems", tool: "createPet", args: map[string]any{"tag": "bird", "age": 3.0}, want: []string{
			`/age: unknown argument; "createPet" takes name, tag`,
			`/name: required argument is missing`,
			`/tag: want one of "cat", "dog", got string "bird"`,
		}},
		{name: "delete", tool: "deletePet", args: map[string]any{"petId": "7", "X-Request-ID": "6f1c8a4e-3b2d-4c5e-9f7a-1b2c3d4e5f60"}},
		{name: "delete bad uuid", tool: "deletePet", args: map[string]any{"petId": "7", "X-Request-ID": "req-1"},
			want: []string{`/X-Request-ID: want a valid uuid, got string "req-1" (must have 5 elements)`}},
		{name: "no parameters", tool: "get_store_inventory", args: map[string]any{}},
	})
}

// openapi30 uses the OpenAPI 3.0 dialect: nullable, boolean exclusiveMinimum, a
// nested body with an array of objects.
const openapi30 = `openapi: 3.0.3
info: {title: Orders, version: "1"}
paths:
  /orders:
    post:
      operationId: createOrder
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [lines]
              properties:
                note: {type: string, nullable: true, maxLength: 20}
                discount: {type: number, minimum: 0, exclusiveMinimum: true}
                lines:
                  type: array
                  minItems: 1
                  items:
                    type: object
                    required: [sku, qty]
                    additionalProperties: false
                    properties:
                      sku: {type: string}
                      qty: {type: integer, minimum: 1}
      responses:
        "201": {description: created}
`

func TestRESTOpenAPI30Dialect(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	d, err := rest.New(rest.Config{Spec: []byte(openapi30), BaseURL: srv.URL, HTTPClient: srv.Client()}, mcs.WithMiddleware(validate.New()))
	if err != nil {
		t.Fatal(err)
	}
	line := map[string]any{"sku": "tee", "qty": 2.0}
	run(t, d, hits.Load, []driverCase{
		{name: "valid", tool: "createOrder", args: map[string]any{"lines": []any{line}, "discount": 0.5}},
		{name: "nullable", tool: "createOrder", args: map[string]any{"lines": []any{line}, "note": nil}},
		{name: "exclusive minimum", tool: "createOrder", args: map[string]any{"lines": []any{line}, "discount": 0.0},
			want: []string{`/discount: want a number > 0, got number 0`}},
		{name: "nested", tool: "createOrder", args: map[string]any{"lines": []any{map[string]any{"sku": "tee", "qty": 0.0, "colour": "red"}}},
			want: []string{`/lines/0/colour: property not allowed here`, `/lines/0/qty: want a number >= 1, got number 0`}},
		{name: "empty lines", tool: "createOrder", args: map[string]any{"lines": []any{}},
			want: []string{`/lines: want at least 1 items, got 0`}},
	})
}

func TestFilesystem(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int64
	count := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		reached.Add(1)
		return next(ctx, name, args)
	})
	d, err := filesystem.New(filesystem.Config{Root: root}, mcs.WithMiddleware(validate.New(validate.WithCoercion()), count))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	run(t, d, reached.Load, []driverCase{
		{name: "read", tool: "read_file", args: map[string]any{"path": "a.txt"}},
		{name: "read coerced offset", tool: "read_file", args: map[string]any{"path": "a.txt", "offset": "1"}},
		{name: "offset word", tool: "read_file", args: map[string]any{"path": "a.txt", "offset": "one"}, want: []string{`/offset: want integer, got string "one"`}},
		{name: "negative offset", tool: "read_file", args: map[string]any{"path": "a.txt", "offset": -1.0}, want: []string{`/offset: want a number >= 0, got number -1`}},
		{name: "encoding", tool: "read_file", args: map[string]any{"path": "a.txt", "encoding": "latin1"}, want: []string{`/encoding: want one of "utf-8", "base64", got string "latin1"`}},
		{name: "missing path", tool: "read_file", args: map[string]any{}, want: []string{`/path: required argument is missing`}},
		{name: "write", tool: "write_file", args: map[string]any{"path": "b.txt", "content": "x"}},
		{name: "write number content", tool: "write_file", args: map[string]any{"path": "b.txt", "content": 5.0}, want: []string{`/content: want string, got number 5`}},
	})
}

func TestCSV(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "p.csv"), []byte("name,price\ntea,3\ncake,5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var reached atomic.Int64
	count := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		reached.Add(1)
		return next(ctx, name, args)
	})
	d, err := csv.New(csv.Config{Root: root}, mcs.WithMiddleware(validate.New(validate.WithCoercion()), count))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	run(t, d, reached.Load, []driverCase{
		{name: "filter string value", tool: "filter_csv_rows", args: map[string]any{"path": "p.csv", "column": "price", "operator": "gt", "value": "4"}},
		{name: "filter number value", tool: "filter_csv_rows", args: map[string]any{"path": "p.csv", "column": "price", "operator": "gt", "value": 4.0}},
		{name: "filter operator", tool: "filter_csv_rows", args: map[string]any{"path": "p.csv", "column": "price", "operator": ">", "value": 4.0},
			want: []string{`/operator: want one of "eq", "ne", "contains", "gt", "lt", got string ">"`}},
		{name: "filter object value", tool: "filter_csv_rows", args: map[string]any{"path": "p.csv", "column": "price", "value": map[string]any{}},
			want: []string{`/value: want boolean or number or string, got object`}},
		{name: "head", tool: "read_csv_head", args: map[string]any{"path": "p.csv"}},
	})
}

// TestMCPShaped checks tools shaped as an MCP server publishes them: an
// inputSchema whose properties become parameters, with nested objects, $defs
// inside a property and a draft given by $schema.
func TestMCPShaped(t *testing.T) {
	tool := mcs.Tool{Name: "create_issue", Description: "Create an issue.", Parameters: []mcs.Parameter{
		{Name: "title", Required: true, Schema: obj("type", "string", "minLength", 1)},
		{Name: "labels", Schema: obj("type", "array", "items", obj("type", "string"), "uniqueItems", true)},
		{Name: "assignee", Schema: obj(
			"$schema", "http://json-schema.org/draft-07/schema#",
			"definitions", obj("login", obj("type", "string", "pattern", "^[A-Za-z0-9-]+$")),
			"type", "object", "properties", obj("login", obj("$ref", "#/definitions/login")), "required", []any{"login"})},
		{Name: "milestone", Schema: obj("type", []any{"integer", "null"})},
	}}
	v := validate.New()
	for _, tt := range []struct {
		args map[string]any
		want []string
	}{
		{args: obj("title", "Bug", "labels", []any{"a", "b"}, "assignee", obj("login", "octo-cat"), "milestone", nil)},
		{args: obj("title", "", "labels", []any{"a", "a"}, "assignee", obj("login", "octo cat"), "milestone", 1.5), want: []string{
			`/assignee/login: want a string matching the pattern "^[A-Za-z0-9-]+$", got string "octo cat"`,
			`/labels: want unique items, got equal items at 0 and 1`,
			`/milestone: want integer or null, got number 1.5`,
			`/title: want at least 1 characters, got 0`,
		}},
	} {
		_, err := v.Check(tool, tt.args)
		var got []string
		if ae := (*mcs.ArgumentsError)(nil); errors.As(err, &ae) {
			got = ae.Problems
		} else if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("problems (-want +got):\n%s", diff)
		}
	}
}

// TestRESTFixturesCompile: every tool of every REST fixture has schemas the
// validator accepts (no SchemaError), whatever the document's dialect.
func TestRESTFixturesCompile(t *testing.T) {
	files, err := filepath.Glob("../../drivers/rest/testdata/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v", err)
	}
	v := validate.New()
	total := 0
	for _, f := range files {
		spec, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		td, err := rest.NewToolDriver(rest.Config{Spec: spec, BaseURL: "http://127.0.0.1:1"})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		tools, err := td.ListTools(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tool := range tools {
			total++
			_, err := v.Check(tool, map[string]any{})
			var se *validate.SchemaError
			if errors.As(err, &se) {
				t.Errorf("%s: tool %s: %v", filepath.Base(f), tool.Name, err)
			}
		}
	}
	if total < 30 { // the fixtures hold 35 operations
		t.Errorf("only %d tools checked", total)
	}
}
