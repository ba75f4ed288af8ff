package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// genGitHubLike generates an OpenAPI 3.0 description of the shape of GitHub's
// REST API: ops operations over a third as many paths, 40 tags, path and query
// parameters shared through components, JSON bodies on the writes, and large
// response schemas (a 60-property repository, nested users and licences,
// per-resource schemas) with examples, all through $ref.
func genGitHubLike(ops int) map[string]any {
	ref := func(kind, name string) map[string]any {
		return map[string]any{"$ref": "#/components/" + kind + "/" + name}
	}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	schemas := map[string]any{}
	userProps := map[string]any{}
	for _, f := range []string{"login", "node_id", "avatar_url", "gravatar_id", "url", "html_url", "followers_url", "following_url", "gists_url", "starred_url", "subscriptions_url", "organizations_url", "repos_url", "events_url", "received_events_url", "type", "user_view_type"} {
		userProps[f] = str("The " + strings.ReplaceAll(f, "_", " ") + " of the user.")
	}
	userProps["id"] = map[string]any{"type": "integer", "format": "int64"}
	userProps["site_admin"] = map[string]any{"type": "boolean"}
	schemas["simple-user"] = map[string]any{"type": "object", "title": "Simple User", "required": []any{"login", "id", "url"}, "properties": userProps}
	schemas["license-simple"] = map[string]any{"type": "object", "properties": map[string]any{
		"key": str("The licence key."), "name": str("The licence name."), "spdx_id": str("The SPDX id."), "url": str("The URL."), "node_id": str("The node id."),
	}}
	repoProps := map[string]any{"owner": ref("schemas", "simple-user"), "license": ref("schemas", "license-simple")}
	for i := range 58 {
		repoProps[fmt.Sprintf("field_%02d_url", i)] = str(fmt.Sprintf("A URL template of the repository, number %d, as the API returns it.", i))
	}
	schemas["repository"] = map[string]any{"type": "object", "title": "Repository", "description": "A repository on GitHub.", "properties": repoProps}
	parameters := map[string]any{
		"owner":    map[string]any{"name": "owner", "in": "path", "required": true, "description": "The account owner of the repository. The name is not case sensitive.", "schema": map[string]any{"type": "string"}},
		"repo":     map[string]any{"name": "repo", "in": "path", "required": true, "description": "The name of the repository without the `.git` extension. The name is not case sensitive.", "schema": map[string]any{"type": "string"}},
		"per-page": map[string]any{"name": "per_page", "in": "query", "description": "The number of results per page (max 100).", "schema": map[string]any{"type": "integer", "default": 30}},
		"page":     map[string]any{"name": "page", "in": "query", "description": "The page number of the results to fetch.", "schema": map[string]any{"type": "integer", "default": 1}},
		"direction": map[string]any{"name": "direction", "in": "query", "description": "The direction to sort the results by.",
			"schema": map[string]any{"type": "string", "enum": []any{"asc", "desc"}}},
	}
	example := map[string]any{}
	for i := range 14 {
		example[fmt.Sprintf("field_%02d_url", i)] = fmt.Sprintf("https://api.github.com/repos/octocat/Hello-World/things/%d{/number}", i)
	}
	paths := map[string]any{}
	tags := []any{}
	for i := range 40 {
		tags = append(tags, map[string]any{"name": fmt.Sprintf("area%d", i), "description": fmt.Sprintf("Endpoints of area %d.", i)})
	}
	methods := []string{"get", "post", "patch", "delete"}
	n := 0
	for p := 0; n < ops; p++ {
		res := fmt.Sprintf("resource-%d", p)
		props := map[string]any{"id": map[string]any{"type": "integer"}, "repository": ref("schemas", "repository"), "creator": ref("schemas", "simple-user")}
		for j := range 14 {
			props[fmt.Sprintf("attr_%d", j)] = map[string]any{"type": "string", "description": fmt.Sprintf("Attribute %d of %s, as stored; may be null.", j, res), "nullable": true}
		}
		schemas[res] = map[string]any{"type": "object", "required": []any{"id"}, "properties": props}
		item := map[string]any{}
		for _, m := range methods[:2+p%3] {
			if n == ops {
				break
			}
			n++
			op := map[string]any{
				"operationId": fmt.Sprintf("area%d/%s-%s", p%40, m, res),
				"summary":     fmt.Sprintf("%s %s", strings.ToUpper(m), res),
				"description": fmt.Sprintf("Runs %s on %s of a repository. The authenticated user must have access to the repository; see the documentation of area %d for the permissions this endpoint needs and the fields it returns.", m, res, p%40),
				"tags":        []any{fmt.Sprintf("area%d", p%40)},
				"externalDocs": map[string]any{"description": "API method documentation",
					"url": fmt.Sprintf("https://docs.github.com/rest/area%d/%s#%s", p%40, res, m)},
				"parameters": []any{ref("parameters", "owner"), ref("parameters", "repo"), ref("parameters", "per-page"), ref("parameters", "page"), ref("parameters", "direction")},
				"responses": map[string]any{
					"200": map[string]any{"description": "Response", "content": map[string]any{"application/json": map[string]any{
						"schema": map[string]any{"type": "array", "items": ref("schemas", res)}, "examples": map[string]any{"default": map[string]any{"value": example}}}}},
					"404": map[string]any{"description": "Resource not found"},
				},
			}
			if m == "post" || m == "patch" {
				body := map[string]any{}
				for j := range 6 {
					body[fmt.Sprintf("attr_%d", j)] = str(fmt.Sprintf("New value of attribute %d.", j))
				}
				op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{
					"schema": map[string]any{"type": "object", "properties": body}}}}
			}
			item[m] = op
		}
		paths[fmt.Sprintf("/repos/{owner}/{repo}/area%d/%s", p%40, res)] = item
	}
	return map[string]any{
		"openapi":    "3.0.3",
		"info":       map[string]any{"title": "GitHub-like REST API", "version": "1.1.4"},
		"servers":    []any{map[string]any{"url": "https://api.github.com"}},
		"tags":       tags,
		"paths":      paths,
		"components": map[string]any{"schemas": schemas, "parameters": parameters},
	}
}

// writeGitHubLike writes the generated description as indented JSON (as
// GitHub publishes it) and returns its path and size.
func writeGitHubLike(tb testing.TB, dir string) (string, int) {
	tb.Helper()
	data, err := json.MarshalIndent(genGitHubLike(771), "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "github-like.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path, len(data)
}

// BenchmarkToolsOpenAPI runs the built binary, `mcs tools --openapi FILE`, on a
// generated description the size of GitHub's REST API (771 operations, about
// 3.6 MB), once per iteration, and reports the child's peak resident set size.
// Every run starts with an empty tool-table cache (a cold start). The goal is at
// most 1.5 s and 400 MB. cpu-s/op is the child's CPU time (user
// and system), which does not grow with the load of a shared machine.
func BenchmarkToolsOpenAPI(b *testing.B) {
	bin := buildBinary(b)
	path, size := writeGitHubLike(b, b.TempDir())
	var peak int64
	var cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, "tools", "--openapi", path)
		cmd.Env = append(os.Environ(), "MCS_CACHE_DIR="+b.TempDir()) // a cold start every time
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %s", err, errOut.String())
		}
		if got := strings.Count(out.String(), "\n"); got != 772 {
			b.Fatalf("%d lines, want 772 (771 tools and a header)", got)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss) // kilobytes on Linux
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(size)/1e6, "MB-doc")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
	// CPU time is what the run costs independent of the machine's load.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
