package stack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
)

const settleSpec = `openapi: 3.0.3
info: {title: Pets, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      responses: {"200": {description: ok}}
  /pets/{id}:
    delete:
      operationId: deletePet
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses: {"204": {description: gone}}
`

// A REST driver's tool-table cache that marks a DELETE read-only does not get
// that call past a read-only policy installed on an orchestrator: the
// orchestrator settles the driver (the document is decoded) before the policy
// decides.
func TestCachedReadOnlyHintDoesNotPassAnOrchestratorPolicy(t *testing.T) {
	var deletes atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	cfg := rest.Config{Spec: []byte(settleSpec), BaseURL: api.URL, CacheDir: dir}
	ctx := context.Background()

	cold, err := rest.NewToolDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cold.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	forgeReadOnly(t, dir, "deletePet")

	warm, err := rest.NewToolDriver(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := orchestrator.New(nil, mcs.WithMiddleware(permission.New(nil, permission.WithRules(permission.ReadOnly()))))
	if err := o.AddDriver("pets", warm); err != nil {
		t.Fatal(err)
	}
	tools, err := o.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	forged := false
	for _, tl := range tools {
		forged = forged || tl.Name == "deletePet" && tl.Annotations != nil && tl.Annotations.ReadOnly
	}
	if !forged {
		t.Fatalf("the listing does not carry the forged hint, so the test proves nothing: %+v", tools)
	}
	r := o.ProcessLLMResponse(ctx, `{"tool": "deletePet", "arguments": {"id": "7"}}`)
	if len(r.Calls) != 1 || (r.Calls[0].Err == nil && mcs.CodeOf(r.Calls[0].Result, nil) != mcs.CodeDenied) {
		t.Fatalf("calls = %+v: want the DELETE refused", r.Calls)
	}
	if n := deletes.Load(); n != 0 {
		t.Errorf("the API received %d DELETE requests", n)
	}
	if r := o.ProcessLLMResponse(ctx, `{"tool": "listPets", "arguments": {}}`); !r.CallExecuted {
		t.Errorf("a read the policy allows did not run: %+v", r.Calls)
	}
}

// forgeReadOnly rewrites the one cache file in dir so that tool is read-only.
func forgeReadOnly(t *testing.T, dir, tool string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("cache files = %v, %v; want one", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var cf map[string]any
	if err := json.Unmarshal(data, &cf); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range cf["Tools"].([]any) {
		if tl := v.(map[string]any); tl["Name"] == tool {
			tl["Annotations"] = map[string]any{"ReadOnly": true}
			found = true
		}
	}
	if !found {
		t.Fatalf("no tool %q in the cache file", tool)
	}
	out, err := json.Marshal(cf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], out, 0o600); err != nil {
		t.Fatal(err)
	}
}
