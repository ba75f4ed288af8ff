// Package apispec generates OpenAPI documents in the shape of real, large APIs
// (GitHub's REST description, Stripe's) for tests and benchmarks: long
// operationIds, many operations, form bodies with encoding objects, deep
// objects and empty body schemas. The documents are written here; they are not
// copies of the vendors' descriptions.
package apispec

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

//go:embed github_ops.txt
var githubOps string

// Op is one operation of a generated document.
type Op struct {
	ID, Method, Path, Summary, Tag string
	// Description is what the operation's description says before the notes
	// every operation repeats; "" repeats the summary.
	Description string
}

// GitHubOps returns the hand-written operations of the GitHub-shaped document,
// in document order, followed by generated ones up to n operations in total.
func GitHubOps(n int) []Op {
	var ops []Op
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(githubOps), "\n") {
		head, summary, _ := strings.Cut(line, " | ")
		summary, description, _ := strings.Cut(summary, " | ")
		f := strings.Fields(head)
		ops = append(ops, Op{ID: f[0], Method: strings.ToLower(f[1]), Path: f[2], Summary: summary, Description: description, Tag: strings.Split(f[0], "/")[0]})
		seen[f[0]] = true
	}
	// Generated operations: the resources of GitHub's larger areas in every scope.
	type scope struct{ suffix, path, words string }
	scopes := []scope{
		{"for-org", "/orgs/{org}", "for an organization"},
		{"for-repo", "/repos/{owner}/{repo}", "for a repository"},
		{"for-enterprise", "/enterprises/{enterprise}", "for an enterprise"},
		{"for-authenticated-user", "/user", "for the authenticated user"},
	}
	areas := []struct {
		tag   string
		nouns []string
	}{
		{"actions", []string{"runner-group", "self-hosted-runner", "runner-label", "oidc-subject-claim", "allowed-actions", "workflow-permission", "environment-secret", "environment-variable", "required-workflow", "cache-policy", "artifact-retention", "fork-pr-approval", "hosted-runner", "runner-application", "registration-token"}},
		{"repos", []string{"ruleset", "rule-suite", "custom-property", "autolink", "environment", "deployment-branch-policy", "deployment-protection-rule", "tag-protection", "pages-build", "code-of-conduct", "community-profile", "vulnerability-alert", "private-vulnerability-report", "push-rule", "activity-report"}},
		{"orgs", []string{"org-role", "security-manager", "custom-repository-role", "fine-grained-permission", "personal-access-token-request", "audit-log-stream", "organization-property", "blocked-user", "failed-invitation", "issue-type", "api-insight", "member-privilege"}},
		{"enterprise-admin", []string{"scim-group", "scim-user", "audit-log", "license-usage", "announcement-banner", "enterprise-role", "ip-allow-list", "saml-authorization", "installation-grant", "code-security-configuration"}},
		{"copilot", []string{"copilot-seat", "copilot-usage-metric", "copilot-content-exclusion", "copilot-team-assignment", "copilot-policy"}},
		{"security-advisories", []string{"repository-advisory", "global-advisory", "advisory-credit", "cve-request", "temporary-private-fork"}},
		{"code-security", []string{"configuration", "default-setup", "attachment", "enablement-report"}},
		{"packages", []string{"package-version", "package-restore", "container-image", "package-access-policy"}},
		{"billing", []string{"usage-report", "spending-limit", "shared-storage", "packages-billing", "premium-request"}},
		{"campaigns", []string{"campaign", "campaign-alert", "campaign-manager"}},
		{"hosted-compute", []string{"network-configuration", "network-setting", "compute-image"}},
		{"private-registries", []string{"registry-configuration", "registry-public-key"}},
	}
	verbs := []struct{ id, method, words string }{
		{"list", "get", "List %ss"},
		{"get", "get", "Get a %s"},
		{"create", "post", "Create a %s"},
		{"update", "patch", "Update a %s"},
		{"delete", "delete", "Delete a %s"},
		{"set", "put", "Set the %ss"},
	}
	for len(ops) < n {
		added := false
		for _, a := range areas {
			for _, noun := range a.nouns {
				for _, sc := range scopes {
					for _, v := range verbs {
						if len(ops) >= n {
							return ops
						}
						id := a.tag + "/" + v.id + "-" + noun + "-" + sc.suffix
						if seen[id] {
							continue
						}
						seen[id] = true
						added = true
						words := strings.ReplaceAll(noun, "-", " ")
						p := sc.path + "/" + a.tag + "/" + noun + "s"
						if v.id != "list" && v.id != "create" && v.id != "set" {
							p += "/{" + strings.ReplaceAll(noun, "-", "_") + "_id}"
						}
						if v.id == "set" {
							p += "/bulk"
						}
						ops = append(ops, Op{ID: id, Method: v.method, Path: p + "/" + v.id,
							Summary: fmt.Sprintf(v.words, words) + " " + sc.words, Tag: a.tag})
					}
				}
			}
		}
		if !added {
			break
		}
	}
	return ops
}

// paramDoc describes the path parameters GitHub's description reuses.
var paramDoc = map[string]string{
	"owner":        "The account owner of the repository. The name is not case sensitive.",
	"repo":         "The name of the repository without the .git extension. The name is not case sensitive.",
	"org":          "The organization name. The name is not case sensitive.",
	"username":     "The handle for the GitHub user account.",
	"issue_number": "The number that identifies the issue.",
	"pull_number":  "The number that identifies the pull request.",
	"enterprise":   "The slug version of the enterprise name.",
	"team_slug":    "The slug of the team name.",
}

// GitHub returns a GitHub-shaped OpenAPI 3.0 document (JSON) with n operations:
// operationIds such as issues/list-for-repo, tags, long descriptions with the
// notes GitHub repeats on every operation, path parameters with their
// descriptions, list parameters on list operations and JSON bodies on writes.
func GitHub(n int) []byte {
	paths := map[string]map[string]any{}
	var order []string
	for _, op := range GitHubOps(n) {
		item := paths[op.Path]
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
			order = append(order, op.Path)
		}
		item[op.Method] = githubOperation(op)
	}
	_ = order
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "GitHub-shaped REST API", "version": "1.1.4"},
		"servers": []any{map[string]any{"url": "https://api.github.example"}},
		"paths":   paths,
		"components": map[string]any{"securitySchemes": map[string]any{
			"token": map[string]any{"type": "http", "scheme": "bearer"},
		}},
		"security": []any{map[string]any{"token": []any{}}},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return data
}

func githubOperation(op Op) map[string]any {
	var params []any
	for _, v := range pathVars(op.Path) {
		desc := paramDoc[v]
		if desc == "" {
			desc = "The unique identifier of the " + strings.ReplaceAll(strings.TrimSuffix(v, "_id"), "_", " ") + "."
		}
		params = append(params, map[string]any{"name": v, "in": "path", "required": true, "description": desc, "schema": map[string]any{"type": "string"}})
	}
	verb := strings.SplitN(strings.SplitN(op.ID, "/", 2)[1], "-", 2)[0]
	if op.Method == "get" && (verb == "list" || strings.HasPrefix(op.Summary, "List") || strings.HasPrefix(op.Summary, "Search")) {
		params = append(params,
			map[string]any{"name": "per_page", "in": "query", "description": "The number of results per page (max 100).", "schema": map[string]any{"type": "integer", "default": 30}},
			map[string]any{"name": "page", "in": "query", "description": "The page number of the results to fetch.", "schema": map[string]any{"type": "integer", "default": 1}})
	}
	if strings.HasPrefix(op.Summary, "Search") {
		params = append(params, map[string]any{"name": "q", "in": "query", "required": true, "description": "The query contains one or more search keywords and qualifiers.", "schema": map[string]any{"type": "string"}})
	}
	if op.ID == "issues/list-for-repo" || op.ID == "pulls/list" || op.ID == "issues/list" {
		params = append(params, map[string]any{"name": "state", "in": "query", "description": "Indicates the state of the items to return.", "schema": map[string]any{"type": "string", "enum": []any{"open", "closed", "all"}, "default": "open"}})
	}
	lead := op.Description
	if lead == "" {
		lead = op.Summary + "."
	}
	desc := lead + "\n\nOAuth app tokens and personal access tokens (classic) need the `repo` scope to use this endpoint with a private repository. " +
		"This endpoint supports the following custom media types: `application/vnd.github.raw+json` returns the raw markdown body, " +
		"`application/vnd.github.text+json` returns a text only representation and `application/vnd.github.full+json` returns raw, text and HTML representations."
	out := map[string]any{
		"operationId": op.ID,
		"summary":     op.Summary,
		"description": desc,
		"tags":        []any{op.Tag},
		"parameters":  params,
		"responses": map[string]any{
			"200": map[string]any{"description": "Response", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
			"404": map[string]any{"description": "Resource not found"},
		},
		"externalDocs": map[string]any{"description": "API method documentation", "url": "https://docs.github.example/rest/" + op.ID},
	}
	if body := githubBody(op); body != nil {
		out["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": body}}}
	}
	return out
}

func githubBody(op Op) map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	props := map[string]any{}
	switch op.ID {
	case "issues/update", "pulls/update":
		props["title"] = str("The title of the " + strings.TrimSuffix(op.Tag, "s") + ".")
		props["body"] = str("The contents of the " + strings.TrimSuffix(op.Tag, "s") + ".")
		props["state"] = map[string]any{"type": "string", "enum": []any{"open", "closed"}, "description": "The open or closed state of the issue. Set it to closed to close the issue and to open to reopen it."}
		props["state_reason"] = map[string]any{"type": "string", "enum": []any{"completed", "not_planned", "reopened"}, "description": "The reason for the state change. Ignored unless state is changed."}
		props["labels"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Labels to associate with this issue."}
		props["assignees"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Usernames to assign to this issue."}
	case "pulls/merge":
		props["commit_title"] = str("Title for the automatic commit message.")
		props["merge_method"] = map[string]any{"type": "string", "enum": []any{"merge", "squash", "rebase"}, "description": "The merge method to use."}
	case "issues/create", "pulls/create":
		props["title"] = str("The title of the new item.")
		props["body"] = str("The contents of the new item.")
		if op.ID == "pulls/create" {
			props["head"] = str("The name of the branch where your changes are implemented.")
			props["base"] = str("The name of the branch you want the changes pulled into.")
		}
	case "issues/create-comment", "pulls/create-review-comment", "repos/create-commit-comment", "issues/update-comment":
		props["body"] = str("The contents of the comment.")
	case "issues/add-labels", "issues/set-labels":
		props["labels"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "The names of the labels to add to the issue."}
	case "repos/create-or-update-file-contents":
		props["message"] = str("The commit message.")
		props["content"] = str("The new file content, using Base64 encoding.")
		props["sha"] = str("Required if you are updating a file. The blob SHA of the file being replaced.")
	default:
		if op.Method == "get" || op.Method == "delete" {
			return nil
		}
		props["name"] = str("The name.")
		props["description"] = str("A short description.")
	}
	return map[string]any{"type": "object", "properties": props}
}

// pathVars returns the {names} of a path template in order.
func pathVars(p string) []string {
	var out []string
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, p[i+1:i+j])
		p = p[i+j+1:]
	}
}

// LongIDs returns an OpenAPI 3.0 document (JSON) of n GET operations whose
// operationIds are all 60 to 80 characters long and share long prefixes, as
// the longest generated ids of real descriptions do.
func LongIDs(n int) []byte {
	paths := map[string]any{}
	for i := range n {
		want := 60 + (i*7)%21 // 60..80 characters
		id := fmt.Sprintf("enterprise-admin/list-provisioned-scim-group-memberships-%03d-for-enterprise-with-extended-attributes", i)
		id = id[:want]
		paths[fmt.Sprintf("/long/%03d", i)] = map[string]any{"get": map[string]any{
			"operationId": id,
			"summary":     fmt.Sprintf("List provisioned SCIM group memberships, variant %d", i),
			"responses":   map[string]any{"200": map[string]any{"description": "ok"}},
		}}
	}
	data, err := json.Marshal(map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "long ids", "version": "1"},
		"paths":   paths,
	})
	if err != nil {
		panic(err)
	}
	return data
}

// SortedIDs returns the operationIds of a generated document, sorted; for tests.
func SortedIDs(ops []Op) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.ID
	}
	sort.Strings(out)
	return out
}
