package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs/budget"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/internal/apispec"
	"github.com/mcs-go/mcs/orchestrator"
)

// Example runs the command: the budget with and without ToolSearch, a search,
// the call of a found tool, and a Stripe form body.
func Example() {
	if err := run(context.Background(), stdout{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// every tool listed: 1103 tools, system message more than 500 KB, 3 warnings
	// behind ToolSearch: 1 tools, system message at most 8 KB, 0 warnings
	// search "close an issue" found:
	//   github__issues_update: [github] Issue owners and users with push access or Triage role can edit an issue.
	//   github__pulls_update: [github] Update a pull request.
	//   github__issues_set-labels: [github] Set labels for an issue.
	//   github__issues_update-comment: [github] Update an issue comment.
	//   github__issues_update-label: [github] Update a label.
	// call github__issues_update: {"received":"PATCH /repos/octo/hello/issues/7 {\"state\":\"closed\",\"state_reason\":\"completed\"}"}
	// search "create a customer": first stripe__PostCustomers
	// call stripe__PostCustomers: {"received":"POST /stripe/v1/customers address%5Bcity%5D=Berlin\u0026email=ada%40example.com\u0026expand%5B%5D=tax\u0026metadata%5Border%5D=42"}
}

type stdout struct{}

func (stdout) Write(p []byte) (int, error) { fmt.Print(string(p)); return len(p), nil }

// fullSize holds the REST drivers of the GitHub-shaped document at full size
// (1,223 operations) and the Stripe-shaped one, loaded once for all tests.
var fullSize = sync.OnceValues(func() (apis, error) { return newAPIs(1223, "http://127.0.0.1:1") })

// gitHubBehindSearch is a new orchestrator over the full-size APIs behind
// Namespacing and ToolSearch.
func gitHubBehindSearch(t testing.TB, layers ...orchestrator.Layer) *orchestrator.Orchestrator {
	t.Helper()
	a, err := fullSize()
	if err != nil {
		t.Fatal(err)
	}
	if layers == nil {
		layers = []orchestrator.Layer{orchestrator.Namespacing(), orchestrator.ToolSearch(5)}
	}
	o, err := newStack(a, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// The system message of the GitHub-shaped document behind ToolSearch fits 8 KB,
// in text and in native mode; listed in full it is hundreds of kilobytes.
func TestGitHubSystemMessage(t *testing.T) {
	ctx := context.Background()
	o := gitHubBehindSearch(t)
	b, err := budget.Measure(ctx, o, "")
	if err != nil {
		t.Fatal(err)
	}
	if b.SystemMessageBytes > 8<<10 {
		t.Errorf("system message %d bytes, want at most 8 KB", b.SystemMessageBytes)
	}
	if b.NativeToolsBytes > 8<<10 {
		t.Errorf("native tools %d bytes, want at most 8 KB", b.NativeToolsBytes)
	}
	full := gitHubBehindSearch(t, orchestrator.Namespacing())
	fb, err := budget.Measure(ctx, full, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("GitHub-shaped (1,223 operations) + Stripe-shaped (103): behind ToolSearch %d bytes (about %d tokens), native tools %d bytes; listed in full %d bytes (about %d tokens), %d tools, warnings %q",
		b.SystemMessageBytes, b.TextTokens, b.NativeToolsBytes, fb.SystemMessageBytes, fb.TextTokens, fb.Tools, fb.Warnings)
	if len(fb.Warnings) == 0 {
		t.Error("no warning for the full listing")
	}
}

// recallCases are task phrasings a user would write, with the operation meant.
var recallCases = []struct{ query, op string }{
	{"close an issue", "issues/update"},
	{"list issues of a repository", "issues/list-for-repo"},
	{"open a new issue", "issues/create"},
	{"comment on an issue", "issues/create-comment"},
	{"add a label to an issue", "issues/add-labels"},
	{"remove a label from an issue", "issues/remove-label"},
	{"lock an issue conversation", "issues/lock"},
	{"assign someone to an issue", "issues/add-assignees"},
	{"create a milestone", "issues/create-milestone"},
	{"get details of an issue", "issues/get"},
	{"merge a pull request", "pulls/merge"},
	{"open a pull request", "pulls/create"},
	{"list pull requests of a repository", "pulls/list"},
	{"request a review on a pull request", "pulls/request-reviewers"},
	{"approve a pull request with a review", "pulls/create-review"},
	{"list files changed in a pull request", "pulls/list-files"},
	{"check whether a pull request was merged", "pulls/check-if-merged"},
	{"list my repositories", "repos/list-for-authenticated-user"},
	{"create a new repository for me", "repos/create-for-authenticated-user"},
	{"delete a repository", "repos/delete"},
	{"fork a repository", "repos/create-fork"},
	{"list branches", "repos/list-branches"},
	{"protect a branch", "repos/update-branch-protection"},
	{"list commits of a repository", "repos/list-commits"},
	{"compare two commits", "repos/compare-commits"},
	{"read a file from a repository", "repos/get-content"},
	{"create or update a file", "repos/create-or-update-file-contents"},
	{"get the README", "repos/get-readme"},
	{"add a collaborator to a repository", "repos/add-collaborator"},
	{"publish a release", "repos/create-release"},
	{"get the latest release", "repos/get-latest-release"},
	{"create a webhook for a repository", "repos/create-webhook"},
	{"delete a repository webhook", "repos/delete-webhook"},
	{"list workflow runs of a repository", "actions/list-workflow-runs-for-repo"},
	{"trigger a workflow", "actions/create-workflow-dispatch"},
	{"cancel a workflow run", "actions/cancel-workflow-run"},
	{"re-run a failed workflow", "actions/re-run-workflow"},
	{"download the logs of a job", "actions/download-job-logs-for-workflow-run"},
	{"set a repository secret", "actions/create-or-update-repo-secret"},
	{"star a repository", "activity/star-repo-for-authenticated-user"},
	{"who starred this repository", "activity/list-stargazers-for-repo"},
	{"list my notifications", "activity/list-notifications-for-authenticated-user"},
	{"search code for a function name", "search/code"},
	{"search for repositories about machine learning", "search/repos"},
	{"get my user profile", "users/get-authenticated"},
	{"follow a user", "users/follow"},
	{"list members of an organization", "orgs/list-members"},
	{"create a team in an organization", "teams/create"},
	{"create a gist", "gists/create"},
	{"check the API rate limit", "rate-limit/get"},
}

// TestRecall searches the GitHub-shaped document for 50 task phrasings; the
// operation meant must be in the top 5 for at least 45.
func TestRecall(t *testing.T) {
	ctx := context.Background()
	if len(recallCases) != 50 {
		t.Fatalf("%d phrasings, want 50", len(recallCases))
	}
	var hits, first int
	o := gitHubBehindSearch(t)
	for _, c := range recallCases {
		res, err := o.ExecuteTool(ctx, orchestrator.SearchTool, map[string]any{"query": c.query})
		if err != nil {
			t.Fatal(err)
		}
		want := "github__" + strings.ReplaceAll(c.op, "/", "_")
		var got []string
		rank := 0
		for i, ft := range res.(*orchestrator.SearchResult).Tools {
			got = append(got, ft.Name)
			if ft.Name == want {
				rank = i + 1
			}
		}
		switch {
		case rank == 1:
			first++
			hits++
		case rank > 0:
			hits++
		default:
			t.Logf("miss: %q -> %s not in %q", c.query, want, got)
		}
	}
	t.Logf("recall: %d/50 in the top 5, %d/50 first", hits, first)
	if hits < 45 {
		t.Errorf("recall %d/50, want at least 45", hits)
	}
}

// Operation ids of 60 to 80 characters under two levels of nested namespacing:
// every exposed name fits 64 characters, is unique and stable across builds,
// and every call reaches its own operation.
func TestLongNamesNested(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	defer api.Close()
	build := func() *orchestrator.Orchestrator {
		long, err := rest.NewToolDriver(rest.Config{Spec: apispec.LongIDs(40), BaseURL: api.URL})
		if err != nil {
			t.Fatal(err)
		}
		other, _ := rest.NewToolDriver(rest.Config{Spec: apispec.LongIDs(3), BaseURL: api.URL + "/other"})
		inner := orchestrator.New(nil)
		if err := inner.AddDriver("enterprise", long); err != nil {
			t.Fatal(err)
		}
		if err := inner.AddDriver("other", other); err != nil {
			t.Fatal(err)
		}
		outer := orchestrator.New(nil)
		if err := outer.AddDriver("github-cloud", inner); err != nil {
			t.Fatal(err)
		}
		if err := outer.AddDriver("notes", other); err != nil {
			t.Fatal(err)
		}
		return outer
	}
	ctx := context.Background()
	o := build()
	tools, err := o.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 46 {
		t.Fatalf("%d tools, want 46", len(tools))
	}
	seen := map[string]bool{}
	for _, tool := range tools {
		if len(tool.Name) > 64 || seen[tool.Name] {
			t.Errorf("name %q: %d characters or duplicate", tool.Name, len(tool.Name))
		}
		seen[tool.Name] = true
		if strings.HasPrefix(tool.Name, "github-cloud__enterprise__") && !strings.HasPrefix(tool.Name, "github-cloud__enterprise__enterprise-admin_list") {
			t.Errorf("name %q does not keep its start", tool.Name)
		}
	}
	again, _ := build().ListTools(ctx)
	for i := range tools {
		if again[i].Name != tools[i].Name {
			t.Fatalf("names differ between builds: %q, %q", tools[i].Name, again[i].Name)
		}
	}
	// Every tool is callable by its exposed name and reaches its own operation.
	for i, tool := range tools[:40] {
		resp := o.ProcessLLMResponse(ctx, fmt.Sprintf(`{"tool": %q, "arguments": {}}`, tool.Name))
		if !resp.CallExecuted {
			t.Fatalf("call %s: %+v", tool.Name, resp)
		}
		if want := fmt.Sprintf("/long/%03d", i); paths[len(paths)-1] != want {
			t.Errorf("call %s reached %s, want %s", tool.Name, paths[len(paths)-1], want)
		}
	}
	// An error names the tool as the model called it.
	resp := o.ProcessLLMResponse(ctx, fmt.Sprintf(`{"tool": %q, "arguments": {"bogus": 1}}`, tools[0].Name))
	if !resp.CallFailed || !strings.HasPrefix(resp.Calls[0].Err.Error(), tools[0].Name+": invalid arguments") {
		t.Errorf("error %v, want it to name %s", resp.Calls[0].Err, tools[0].Name)
	}
}

// The original operationId stays in the description of a shortened tool.
func TestShortenedNameKeepsOperationID(t *testing.T) {
	td, err := rest.NewToolDriver(rest.Config{Spec: apispec.LongIDs(40), BaseURL: "http://127.0.0.1:1", MaxNameLength: 56})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := td.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if len(tool.Name) > 56 || !strings.Contains(tool.Description, "(operationId: enterprise-admin/list-provisioned-scim-group-memberships-") {
			t.Errorf("tool %q (%d): %q", tool.Name, len(tool.Name), tool.Description)
		}
	}
}

// BenchmarkGitHubSearch measures one tools__search call through the orchestrator
// over the REST tools of the GitHub-shaped document (1,223 operations, with the
// Stripe-shaped 103 beside it), after the first listing.
func BenchmarkGitHubSearch(b *testing.B) {
	o := gitHubBehindSearch(b)
	ctx := context.Background()
	args := map[string]any{"query": "list issues of a repository"}
	if _, err := o.ExecuteTool(ctx, orchestrator.SearchTool, args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.ExecuteTool(ctx, orchestrator.SearchTool, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitHubFirstListing measures the first listing behind ToolSearch: the
// documents loaded and converted, every tool listed and the index built.
func BenchmarkGitHubFirstListing(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		a, err := newAPIs(1223, "http://127.0.0.1:1")
		if err != nil {
			b.Fatal(err)
		}
		o, err := newStack(a, orchestrator.Namespacing(), orchestrator.ToolSearch(5))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := o.ListTools(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitHubSearchNewFinds measures a search whose results change the
// exposed listing, so that the orchestrator lists both REST drivers again (each
// copies its tools): the cost of the first search of a round that finds new tools.
func BenchmarkGitHubSearchNewFinds(b *testing.B) {
	o := gitHubBehindSearch(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := recallCases[i%len(recallCases)]
		if _, err := o.ExecuteTool(ctx, orchestrator.SearchTool, map[string]any{"query": c.query}); err != nil {
			b.Fatal(err)
		}
		if _, err := o.ListTools(ctx); err != nil { // the next round's listing
			b.Fatal(err)
		}
	}
}
