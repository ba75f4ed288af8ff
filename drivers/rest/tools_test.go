package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcs-go/mcs/internal/toolname"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v4"

	"github.com/mcs-go/mcs"
)

// petstoreTools is what the petstore fixture publishes, in document order
// (delete is written before get under /pets/{petId}).
func petstoreTools() []mcs.Tool {
	return []mcs.Tool{
		{
			Name: "listPets", Title: "List all pets", Description: "List all pets", Annotations: readOnly,
			Parameters: []mcs.Parameter{
				{Name: "limit", Description: "How many items to return at one time (max 100)",
					Schema: map[string]any{"type": "integer", "format": "int32", "maximum": 100.0, "default": 20.0}},
				{Name: "tags", Description: "Tags to filter by",
					Schema: map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
				{Name: "vaccinated", Schema: map[string]any{"type": "boolean"}},
			},
		},
		{
			Name: "createPet", Title: "Create a pet", Description: "Create a pet", Annotations: writes,
			Parameters: []mcs.Parameter{
				{Name: "name", Description: "The pet's name", Required: true,
					Schema: map[string]any{"type": "string", "description": "The pet's name"}},
				{Name: "tag", Schema: map[string]any{"type": "string", "enum": []any{"cat", "dog"}}},
			},
		},
		{
			Name: "deletePet", Title: "Delete a pet", Description: "Delete a pet", Annotations: idempotentWrite,
			Parameters: []mcs.Parameter{
				{Name: "X-Request-ID", Description: "Correlation id", Required: true,
					Schema: map[string]any{"type": "string", "format": "uuid"}},
				{Name: "petId", Description: "The id of the pet", Required: true, Schema: map[string]any{"type": "string"}},
			},
		},
		{
			Name: "showPetById", Title: "Info for a specific pet", Description: "Returns one pet by its id.", Annotations: readOnly,
			Parameters: []mcs.Parameter{
				{Name: "session", Schema: map[string]any{"type": "string"}},
				{Name: "petId", Description: "The id of the pet", Required: true, Schema: map[string]any{"type": "string"}},
				{Name: "X-Request-ID", Schema: map[string]any{"type": "string"}},
			},
		},
		{Name: "get_store_inventory", Description: "GET /store/inventory", Annotations: readOnly},
	}
}

// The annotations of the methods.
var (
	readOnly        = &mcs.ToolAnnotations{ReadOnly: true}
	writes          = &mcs.ToolAnnotations{Destructive: true}
	idempotentWrite = &mcs.ToolAnnotations{Destructive: true, Idempotent: true}
)

func listTools(t *testing.T, cfg Config) []mcs.Tool {
	t.Helper()
	tools, err := mustToolDriver(t, cfg).ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if err := tool.Validate(); err != nil {
			t.Errorf("tool %q: %v", tool.Name, err)
		}
	}
	return tools
}

func TestListToolsPetstore(t *testing.T) {
	got := listTools(t, Config{Spec: fixture(t, "petstore.yaml"), BaseURL: "http://127.0.0.1:1"})
	if diff := cmp.Diff(petstoreTools(), got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// The Swagger 2.0 petstore publishes the same tools; it has no cookie
// parameters, so showPetById has no session.
func TestListToolsSwaggerMatchesOpenAPI3(t *testing.T) {
	want := petstoreTools()
	want[3].Parameters = want[3].Parameters[1:]
	got := listTools(t, Config{Spec: fixture(t, "petstore-swagger.json"), BaseURL: "http://127.0.0.1:1"})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestListToolsOpenAPI31(t *testing.T) {
	want := []mcs.Tool{
		{
			Name: "createNote", Title: "Create a note", Description: "Create a note", Annotations: writes,
			Parameters: []mcs.Parameter{
				{Name: "body", Schema: map[string]any{"type": []any{"string", "null"}}},
				{Name: "kind", Schema: map[string]any{"const": "note"}},
				{Name: "priority", Schema: map[string]any{"type": "integer", "exclusiveMaximum": 10.0}},
				{Name: "title", Required: true, Schema: map[string]any{"type": "string", "examples": []any{"Groceries"}}},
			},
		},
		{
			Name: "getNote", Description: "GET /notes/{id}", Annotations: readOnly,
			Parameters: []mcs.Parameter{
				{Name: "id", Required: true, Schema: map[string]any{"type": "integer", "exclusiveMinimum": 0.0}},
				{Name: "fields", Schema: map[string]any{"type": []any{"array", "null"}, "items": map[string]any{"type": "string"}}},
			},
		},
	}
	got := listTools(t, Config{Spec: fixture(t, "openapi31.yaml")})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestListToolsCyclesAndAllOf(t *testing.T) {
	tools := listTools(t, Config{Spec: fixture(t, "cycles.yaml"), BaseURL: "http://127.0.0.1:1"})
	type param struct {
		Name     string
		Required bool
	}
	got := map[string][]param{}
	for _, tool := range tools {
		for _, p := range tool.Parameters {
			got[tool.Name] = append(got[tool.Name], param{p.Name, p.Required})
		}
	}
	want := map[string][]param{
		"createNode": {{"children", false}, {"name", true}},
		// allOf of Person and an inline object: flattened, both required lists kept.
		"createEmployee": {{"email", false}, {"manager", false}, {"name", true}, {"salary", true}},
		// oneOf cannot be flattened: one body parameter.
		"createGroup": {{"body", false}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}

	// The self-reference is cut where Node recurs, and named.
	children := tools[0].Parameters[0].Schema
	wantChildren := map[string]any{
		"type": "array",
		"items": map[string]any{
			"type":     "object",
			"required": []any{"name"},
			"properties": map[string]any{
				"name": map[string]any{"type": "string"},
				"children": map[string]any{
					"type":  "array",
					"items": map[string]any{"type": "object", "description": "recursive: the same structure as Node"},
				},
			},
		},
	}
	if diff := cmp.Diff(wantChildren, children); diff != "" {
		t.Errorf("children schema (-want +got):\n%s", diff)
	}
	// Mutual recursion through allOf ends too.
	manager, _ := json.Marshal(tools[1].Parameters[1].Schema)
	if !strings.Contains(string(manager), "recursive: the same structure as Employee") {
		t.Errorf("manager schema has no recursion note: %s", manager)
	}
}

// External references are never fetched; the objects they stand for load
// empty, and a path variable whose parameter is external is still a parameter.
func TestExternalRefsAreNotFetched(t *testing.T) {
	external := newAPI(t, nil)
	doc := strings.ReplaceAll(string(fixture(t, "edge.yaml")), "EXTERNAL", external.URL)
	for _, tc := range []struct {
		name string
		doc  []byte
	}{
		{"yaml", []byte(doc)},
		{"json", yamlToJSON(t, []byte(doc))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The JSON conversion sorts the keys, so compare by name.
			tools := map[string]mcs.Tool{}
			for _, tool := range listTools(t, Config{Spec: tc.doc, BaseURL: "http://127.0.0.1:1"}) {
				tools[tool.Name] = tool
			}
			if diff := cmp.Diff([]string{"get_things_thingId", "post_local", "put_things_thingId"}, sortedKeys(tools)); diff != "" {
				t.Fatalf("tools (-want +got):\n%s", diff)
			}
			view := tools["get_things_thingId"].Parameters[1].Schema["description"]
			if want := "defined in another document (" + external.URL + "/schemas.yaml#/components/schemas/View), which is not loaded"; view != want {
				t.Errorf("view schema description = %q, want %q", view, want)
			}
			wantPut := []mcs.Parameter{{Name: "thingId", Required: true, Schema: map[string]any{"type": "string"}}}
			if diff := cmp.Diff(wantPut, tools["put_things_thingId"].Parameters); diff != "" {
				t.Errorf("put parameters (-want +got):\n%s", diff)
			}
		})
	}
	if n := len(external.requests()); n != 0 {
		t.Errorf("the external server received %d requests, want 0", n)
	}
}

func TestDocumentOrder(t *testing.T) {
	// Paths and methods in an order that is neither sorted nor canonical.
	paths := []struct{ path, methods string }{
		{"/zebra", "post get"},
		{"/alpha/{id}", "options delete patch head put get"},
		{"/middle", "get"},
	}
	var js strings.Builder
	var ys strings.Builder
	js.WriteString(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{`)
	ys.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n")
	for i, p := range paths {
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, "%q:{", p.path)
		fmt.Fprintf(&ys, "  %s:\n", p.path)
		for j, m := range strings.Fields(p.methods) {
			if j > 0 {
				js.WriteString(",")
			}
			fmt.Fprintf(&js, `%q:{"responses":{"200":{"description":"ok"}}}`, m)
			fmt.Fprintf(&ys, "    %s: {responses: {'200': {description: ok}}}\n", m)
		}
		js.WriteString("}")
	}
	js.WriteString("}}")
	want := []string{
		"post_zebra", "get_zebra",
		"options_alpha_id", "delete_alpha_id", "patch_alpha_id", "head_alpha_id", "put_alpha_id", "get_alpha_id",
		"get_middle",
	}
	for name, doc := range map[string]string{"json": js.String(), "yaml": ys.String()} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, tool := range listTools(t, Config{Spec: []byte(doc), BaseURL: "http://127.0.0.1:1"}) {
				got = append(got, tool.Name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		opID, method, path string
		want               string
	}{
		{"listPets", "get", "/pets", "listPets"},
		{"", "get", "/pets/{petId}", "get_pets_petId"},
		{"", "post", "/", "post"},
		{"", "delete", "/v1/users/{user-id}/keys.json", "delete_v1_users_user-id_keys_json"},
		{"get pets/all:now", "get", "/x", "get_pets_all_now"},
		{"créer", "post", "/x", "cr_er"},
		{long, "get", "/x", long},
		{"", "get", "/" + long, "get_" + long},
	}
	for _, tc := range tests {
		if got := baseToolName(tc.opID, tc.method, tc.path); got != tc.want {
			t.Errorf("baseToolName(%q, %q, %q) = %q, want %q", tc.opID, tc.method, tc.path, got, tc.want)
		}
	}

	used := newNameSet()
	var got []string
	for _, n := range []string{"a", "a", "a", "a_2", long[:64], long[:64]} {
		got = append(got, uniqueToolName(n, used, 64))
	}
	want := []string{"a", "a_2", "a_3", "a_2_2", long[:64], toolname.Shorten(long[:64]+"_2", 64)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unique names (-want +got):\n%s", diff)
	}
}

// Duplicate operationIds in a document get _2, _3.
func TestDuplicateOperationIDs(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a: {get: {operationId: fetch, responses: {"200": {description: ok}}}}
  /b: {get: {operationId: fetch, responses: {"200": {description: ok}}}}
  /c: {get: {operationId: fetch, responses: {"200": {description: ok}}}}
`
	var got []string
	for _, tool := range listTools(t, Config{Spec: []byte(doc), BaseURL: "http://127.0.0.1:1"}) {
		got = append(got, tool.Name)
	}
	if diff := cmp.Diff([]string{"fetch", "fetch_2", "fetch_3"}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestFilters(t *testing.T) {
	tests := []struct {
		name  string
		tags  []string
		paths []string
		want  []string
	}{
		{"none", nil, nil, []string{"listPets", "createPet", "deletePet", "showPetById", "get_store_inventory"}},
		{"tag, case-insensitive", []string{"PETS"}, nil, []string{"listPets", "createPet", "deletePet", "showPetById"}},
		{"two tags", []string{"store", "nothing"}, nil, []string{"get_store_inventory"}},
		{"path, exact", nil, []string{"/pets/{petId}"}, []string{"deletePet", "showPetById"}},
		{"path not matching a prefix", nil, []string{"/pets/"}, nil},
		{"both must match", []string{"pets"}, []string{"/pets", "/store/inventory"}, []string{"listPets", "createPet"}},
		{"both, disjoint", []string{"store"}, []string{"/pets"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tool := range listTools(t, Config{Spec: fixture(t, "petstore.yaml"), BaseURL: "http://127.0.0.1:1", IncludeTags: tc.tags, IncludePaths: tc.paths}) {
				got = append(got, tool.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBodyParameters(t *testing.T) {
	tools := listTools(t, Config{Spec: fixture(t, "forms.yaml"), BaseURL: "http://127.0.0.1:1"})
	got := map[string][]string{}
	for _, tool := range tools {
		for _, p := range tool.Parameters {
			name := p.Name
			if p.Required {
				name += "*"
			}
			got[tool.Name] = append(got[tool.Name], name)
		}
	}
	want := map[string][]string{
		"login":  {"password", "remember", "scopes", "username*"},
		"upload": {"description", "file*"},
		// The body property "id" clashes with the path parameter.
		"patchItem": {"id*", "dryRun", "archived", "body_id", "labels", "quantity"},
		"setTags":   {"body*"},
		"addNote":   {"body"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

// Parameters with the same name in two places, and a body property named
// like both, all stay reachable under distinct names.
func TestNameClashes(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    post:
      operationId: clash
      parameters:
        - {name: id, in: query, schema: {type: string}}
        - {name: id, in: header, schema: {type: string}}
        - {name: body, in: query, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema: {type: array, items: {type: string}}
      responses: {"200": {description: ok}}
`
	tools := listTools(t, Config{Spec: []byte(doc), BaseURL: "http://127.0.0.1:1"})
	var got []string
	for _, p := range tools[0].Parameters {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"id", "header_id", "body", "body_body"}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"empty", "  \n", "empty"},
		{"not a mapping", "- a\n- b\n", "not a mapping"},
		{"no version field", `{"info":{"title":"t"}}`, `neither an "openapi" nor a "swagger" field`},
		{"old swagger", `{"swagger":"1.2"}`, `swagger version "1.2" is not supported`},
		{"future openapi", "openapi: 4.0.0\n", `openapi version "4.0.0" is not supported`},
		{"both versions", "openapi: 3.0.0\nswagger: '2.0'\n", "both"},
		{"bad yaml", "openapi: [3\n", "neither JSON nor YAML"},
		{"broken internal ref", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"parameters":[{"$ref":"#/components/parameters/Missing"}],"responses":{}}}}}`, "Missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			td := mustToolDriver(t, Config{Spec: []byte(tc.doc)})
			_, err := td.ListTools(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "load OpenAPI document inline spec") {
				t.Errorf("ListTools error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSchemaLimits(t *testing.T) {
	// Every level refers to the next one twice: expanding it fully would
	// take 2^30 nodes.
	var sb strings.Builder
	sb.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: {$ref: '#/components/schemas/L0'}\n      responses: {}\ncomponents:\n  schemas:\n")
	for i := range 30 {
		fmt.Fprintf(&sb, "    L%d:\n      type: object\n      properties:\n        a: {$ref: '#/components/schemas/L%d'}\n        b: {$ref: '#/components/schemas/L%d'}\n", i, i+1, i+1)
	}
	sb.WriteString("    L30: {type: string}\n")
	tools := listTools(t, Config{Spec: []byte(sb.String()), BaseURL: "http://127.0.0.1:1"})
	data, _ := json.Marshal(tools)
	if len(data) > 1<<20 {
		t.Errorf("the tool listing is %d bytes; the schema expansion is not bounded", len(data))
	}
	if !strings.Contains(string(data), "not expanded: the schema is too large") {
		t.Errorf("no cut marker in the expanded schema")
	}
}

func TestListToolsReturnsCopies(t *testing.T) {
	td := mustToolDriver(t, Config{Spec: fixture(t, "petstore.yaml"), BaseURL: "http://127.0.0.1:1"})
	ctx := context.Background()
	first, err := td.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Parameters[0].Schema["type"] = "mutated"
	first[0].Parameters = nil
	first[0].Annotations.ReadOnly = false
	second, err := td.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(petstoreTools(), second); diff != "" {
		t.Errorf("a caller's change reached the driver (-want +got):\n%s", diff)
	}
}

func TestHasTool(t *testing.T) {
	td := mustToolDriver(t, Config{Spec: fixture(t, "petstore.yaml"), BaseURL: "http://127.0.0.1:1"})
	for name, want := range map[string]bool{"listPets": true, "get_store_inventory": true, "nope": false} {
		got, err := td.HasTool(context.Background(), name)
		if err != nil || got != want {
			t.Errorf("HasTool(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	_, err := td.ExecuteTool(context.Background(), "nope", nil)
	if !errors.Is(err, mcs.ErrUnknownTool) {
		t.Errorf("ExecuteTool of an unknown tool: %v, want mcs.ErrUnknownTool", err)
	}
}

// yamlToJSON converts a YAML fixture to JSON for tests of the JSON path.
func yamlToJSON(t *testing.T, doc []byte) []byte {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(jsonable(v))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// jsonable turns YAML's map[string]any with non-string keys into JSON shapes.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}
