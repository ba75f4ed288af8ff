package rest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// githubShape describes a generated document shaped like the GitHub REST
// description: many operations sharing parameters and responses through
// components, request bodies written inline, large response schemas that
// reference each other and large examples. The same shape always yields the
// same bytes.
type githubShape struct {
	ops     int // operations
	schemas int // component schemas
	// exampleProps is the number of properties of each component example;
	// it sets most of the document's size.
	exampleProps int
}

var (
	// githubLike resembles the GitHub REST description of 2024: 771
	// operations in about 3.6 MB of indented JSON.
	githubLike = githubShape{ops: 771, schemas: 260, exampleProps: 28}
	// githubLarge is a 13 MB description of 1,200 operations.
	githubLarge = githubShape{ops: 1200, schemas: 800, exampleProps: 118}
	// githubSmall has the same shape at a size tests can afford under the
	// race detector.
	githubSmall = githubShape{ops: 120, schemas: 60, exampleProps: 6}
)

var genCache sync.Map // githubShape -> []byte

// githubDoc returns the JSON document of shape, generated once per process.
func githubDoc(tb testing.TB, shape githubShape) []byte {
	tb.Helper()
	if v, ok := genCache.Load(shape); ok {
		return v.([]byte)
	}
	data, err := json.MarshalIndent(genGitHub(shape), "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	genCache.Store(shape, data)
	return data
}

var words = strings.Fields(`the repository owner organization pull request issue comment review
commit branch tag release asset workflow run job artifact secret variable team member
collaborator label milestone project column card deployment environment status check suite
gist key hook delivery installation token package version alert code scanning dependency
returns lists creates updates deletes gets when authenticated user with access scope
permission public private internal archived default visibility page results sorted`)

func sentence(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	return sb.String() + "."
}

// genGitHub builds the document of shape.
func genGitHub(shape githubShape) map[string]any {
	r := rand.New(rand.NewPCG(16, uint64(shape.ops)))
	resources := []string{"repos", "orgs", "users", "issues", "pulls", "actions", "teams",
		"gists", "checks", "code-scanning", "dependabot", "packages", "projects", "apps",
		"billing", "codespaces", "git", "search", "reactions", "activity"}

	// Shared parameters.
	params := map[string]any{
		"owner":    param("owner", "path", "The account owner of the repository. The name is not case sensitive.", map[string]any{"type": "string"}, true),
		"repo":     param("repo", "path", "The name of the repository without the `.git` extension. The name is not case sensitive.", map[string]any{"type": "string"}, true),
		"org":      param("org", "path", "The organization name. The name is not case sensitive.", map[string]any{"type": "string"}, true),
		"username": param("username", "path", "The handle for the GitHub user account.", map[string]any{"type": "string"}, true),
		"per-page": param("per_page", "query", "The number of results per page (max 100).", map[string]any{"type": "integer", "default": 30}, false),
		"page":     param("page", "query", "The page number of the results to fetch.", map[string]any{"type": "integer", "default": 1}, false),
		"since":    param("since", "query", "Only show results that were last updated after the given time.", map[string]any{"type": "string", "format": "date-time"}, false),
		"direction": param("direction", "query", "The direction to sort the results by.",
			map[string]any{"type": "string", "enum": []any{"asc", "desc"}}, false),
	}
	for i := range 80 {
		params[fmt.Sprintf("param-%d", i)] = param(fmt.Sprintf("param_%d", i), "query", sentence(r, 14),
			map[string]any{"type": "string", "enum": []any{"all", "open", "closed"}}, false)
	}

	// Schemas referencing earlier ones, and one example per schema.
	schemas := map[string]any{}
	examples := map[string]any{}
	names := make([]string, shape.schemas)
	for i := range shape.schemas {
		name := fmt.Sprintf("%s-%d", resources[i%len(resources)], i)
		names[i] = name
		props := map[string]any{
			"id":         map[string]any{"type": "integer", "format": "int64", "example": 42},
			"node_id":    map[string]any{"type": "string", "example": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5"},
			"url":        map[string]any{"type": "string", "format": "uri", "example": "https://api.github.com/" + name},
			"created_at": map[string]any{"type": "string", "format": "date-time", "nullable": true},
		}
		for j := range 12 + r.IntN(12) {
			props[fmt.Sprintf("%s_%d", words[r.IntN(len(words))], j)] = map[string]any{
				"type": []string{"string", "integer", "boolean"}[r.IntN(3)], "description": sentence(r, 10),
			}
		}
		if i > 0 {
			props["parent"] = map[string]any{"$ref": "#/components/schemas/" + names[r.IntN(i)]}
			props["items"] = map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/" + names[r.IntN(i)]}}
		}
		schemas[name] = map[string]any{"title": name, "description": sentence(r, 12), "type": "object",
			"properties": props, "required": []any{"id", "node_id", "url"}}
		ex := map[string]any{}
		for j := range shape.exampleProps {
			ex[fmt.Sprintf("field_%d", j)] = sentence(r, 6)
		}
		examples[name] = map[string]any{"value": ex}
	}
	responses := map[string]any{
		"not_found":         map[string]any{"description": "Resource not found", "content": specJSONContent(map[string]any{"$ref": "#/components/schemas/basic-error"})},
		"forbidden":         map[string]any{"description": "Forbidden", "content": specJSONContent(map[string]any{"$ref": "#/components/schemas/basic-error"})},
		"validation_failed": map[string]any{"description": "Validation failed", "content": specJSONContent(map[string]any{"$ref": "#/components/schemas/validation-error"})},
		"not_modified":      map[string]any{"description": "Not modified"},
	}
	schemas["basic-error"] = map[string]any{"type": "object", "properties": map[string]any{
		"message": map[string]any{"type": "string"}, "documentation_url": map[string]any{"type": "string"}}}
	schemas["validation-error"] = map[string]any{"type": "object", "required": []any{"message"}, "properties": map[string]any{
		"message": map[string]any{"type": "string"}, "errors": map[string]any{"type": "array", "items": map[string]any{
			"type": "object", "properties": map[string]any{"code": map[string]any{"type": "string"}, "field": map[string]any{"type": "string"}}}}}}

	paths := map[string]any{}
	methodsPerPath := [][]string{{"get"}, {"get", "post"}, {"get", "patch", "delete"}, {"put", "delete"}, {"get"}}
	for n, p := 0, 0; n < shape.ops; p++ {
		res := resources[p%len(resources)]
		scope, scopeParams := "/repos/{owner}/{repo}", []any{ref("parameters", "owner"), ref("parameters", "repo")}
		switch p % 3 {
		case 1:
			scope, scopeParams = "/orgs/{org}", []any{ref("parameters", "org")}
		case 2:
			scope, scopeParams = "/users/{username}", []any{ref("parameters", "username")}
		}
		path := fmt.Sprintf("%s/%s/%s-%d/{%s_id}", scope, res, words[p%len(words)], p, strings.ReplaceAll(res, "-", "_"))
		item := map[string]any{}
		for _, m := range methodsPerPath[p%len(methodsPerPath)] {
			if n == shape.ops {
				break
			}
			n++
			schema := names[r.IntN(len(names))]
			op := map[string]any{
				"summary":     fmt.Sprintf("%s %s", strings.ToUpper(m[:1])+m[1:], sentence(r, 4)),
				"description": sentence(r, 10) + "\n\n" + sentence(r, 8) + "\n\nOAuth app tokens and personal access tokens (classic) need the `repo` scope to use this endpoint.",
				"tags":        []any{res},
				"operationId": fmt.Sprintf("%s/%s-%s-%d", res, m, words[r.IntN(len(words))], p),
				"externalDocs": map[string]any{"description": "API method documentation",
					"url": fmt.Sprintf("https://docs.github.com/rest/%s/%d", res, p)},
				"x-github": map[string]any{"githubCloudOnly": false, "enabledForGitHubApps": true, "category": res, "subcategory": words[p%len(words)]},
			}
			ps := append([]any{}, scopeParams...)
			ps = append(ps, param(strings.ReplaceAll(res, "-", "_")+"_id", "path", "The unique identifier of the "+res+".", map[string]any{"type": "integer"}, true))
			if m == "get" {
				ps = append(ps, ref("parameters", "per-page"), ref("parameters", "page"), ref("parameters", fmt.Sprintf("param-%d", r.IntN(80))))
			}
			op["parameters"] = ps
			ok := map[string]any{"description": "Response", "content": map[string]any{"application/json": map[string]any{
				"schema":   map[string]any{"$ref": "#/components/schemas/" + schema},
				"examples": map[string]any{"default": map[string]any{"$ref": "#/components/examples/" + schema}},
			}}}
			op["responses"] = map[string]any{"200": ok, "404": ref("responses", "not_found"), "403": ref("responses", "forbidden")}
			if m == "post" || m == "patch" || m == "put" {
				props := map[string]any{}
				for j := range 2 + r.IntN(5) {
					props[fmt.Sprintf("%s_%d", words[r.IntN(len(words))], j)] = map[string]any{
						"type": "string", "description": sentence(r, 8)}
				}
				props["visibility"] = map[string]any{"type": "string", "enum": []any{"public", "private", "internal"}, "description": sentence(r, 8)}
				props["settings"] = map[string]any{"type": "object", "properties": map[string]any{
					"enabled": map[string]any{"type": "boolean"}, "level": map[string]any{"type": "integer", "minimum": 0, "maximum": 5}}}
				op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{
					"schema":   map[string]any{"type": "object", "properties": props},
					"examples": map[string]any{"default": map[string]any{"value": map[string]any{"visibility": "private"}}},
				}}}
				op["responses"].(map[string]any)["422"] = ref("responses", "validation_failed")
			}
			item[m] = op
		}
		paths[path] = item
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "GitHub-shaped REST API", "version": "1.1.4",
			"description": "A generated description shaped like GitHub's.", "license": map[string]any{"name": "MIT"}},
		"servers":      []any{map[string]any{"url": "https://api.github.example"}},
		"externalDocs": map[string]any{"url": "https://docs.github.example/rest"},
		"tags":         tagList(resources),
		"paths":        paths,
		"components": map[string]any{
			"parameters": params, "schemas": schemas, "examples": examples, "responses": responses,
			"headers": map[string]any{"link": map[string]any{"example": "<https://api.github.example/x?page=2>; rel=\"next\"", "schema": map[string]any{"type": "string"}}},
		},
	}
}

func param(name, in, desc string, schema map[string]any, required bool) map[string]any {
	p := map[string]any{"name": name, "in": in, "description": desc, "schema": schema}
	if required {
		p["required"] = true
	}
	return p
}

func ref(kind, name string) map[string]any {
	return map[string]any{"$ref": "#/components/" + kind + "/" + name}
}

func specJSONContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

func tagList(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"name": n, "description": "Interact with " + n + "."}
	}
	return out
}
