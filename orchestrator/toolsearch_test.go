package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/apispec"
	"github.com/mcs-go/mcs/orchestrator"
)

// catalogue is a driver whose tools have summaries, like a REST driver's.
type catalogue struct {
	*fake
}

func newCatalogue(name string, tools ...[2]string) catalogue {
	c := catalogue{fake: newFake(name)}
	c.fake.tools = nil
	for _, t := range tools {
		c.fake.tools = append(c.fake.tools, mcs.Tool{Name: t[0], Title: t[1], Description: t[1] + ".",
			Parameters: []mcs.Parameter{{Name: "owner"}, {Name: "repo"}}})
	}
	return c
}

var githubish = [][2]string{
	{"issues_list-for-repo", "List repository issues"},
	{"issues_create", "Create an issue"},
	{"issues_update", "Update an issue"},
	{"pulls_merge", "Merge a pull request"},
	{"repos_delete", "Delete a repository"},
	{"repos_list-for-authenticated-user", "List repositories for the authenticated user"},
	{"activity_list-stargazers-for-repo", "List stargazers"},
}

func search(t *testing.T, d mcs.ToolDriver, name, query string) *orchestrator.SearchResult {
	t.Helper()
	res, err := d.ExecuteTool(context.Background(), name, map[string]any{"query": query})
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	sr, ok := res.(*orchestrator.SearchResult)
	if !ok {
		t.Fatalf("search result %T, want *SearchResult", res)
	}
	return sr
}

func foundNames(sr *orchestrator.SearchResult) []string {
	var out []string
	for _, t := range sr.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestToolSearchListsOnlyTheSearchTool(t *testing.T) {
	o := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(3)), "gh", newCatalogue("gh", githubish...))
	tools, err := o.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{orchestrator.SearchTool}, names(tools)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	st := tools[0]
	if len(st.Parameters) != 1 || st.Parameters[0].Name != "query" || !st.Parameters[0].Required || st.Parameters[0].Schema["type"] != "string" {
		t.Errorf("parameters %+v, want one required string query", st.Parameters)
	}
	if st.Annotations == nil || !st.Annotations.ReadOnly {
		t.Errorf("annotations %+v, want read-only", st.Annotations)
	}
	for _, want := range []string{"among 7 tools", "issues (3)", "repos (2)"} {
		if !strings.Contains(st.Description, want) {
			t.Errorf("description %q lacks %q", st.Description, want)
		}
	}
	msg, err := o.SystemMessage(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "Tool search: 7 tools are available but not listed") || !strings.Contains(msg, `{"query": "list the issues of a repository"}`) {
		t.Errorf("system message lacks the instructions:\n%s", msg)
	}
}

func TestToolSearchFindsAndExposes(t *testing.T) {
	// The driver runs its own middleware, the orchestrator its own.
	driverMW := &recorder{}
	gh := mcs.NewBaseDriver(newCatalogue("gh", githubish...), mcs.WithMiddleware(driverMW))
	mw := &recorder{}
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(2)), mcs.WithMiddleware(mw))
	if err := o.AddDriver("gh", gh); err != nil {
		t.Fatal(err)
	}
	// Not listed yet: the model's call is not owned.
	if resp := process(t, o, "issues_update"); !notOwned(resp, "issues_update") {
		t.Fatalf("an unlisted tool was owned: %+v", resp)
	}
	resp := o.ProcessLLMResponse(context.Background(), textCall(t, orchestrator.SearchTool, map[string]any{"query": "edit an issue"}))
	if !resp.CallExecuted || len(resp.Calls) != 1 {
		t.Fatalf("search call: %+v", resp)
	}
	sr := resp.Calls[0].Result.(*orchestrator.SearchResult)
	if len(sr.Tools) != 2 || sr.Tools[0].Name != "issues_update" {
		t.Fatalf("found %q, want issues_update first", foundNames(sr))
	}
	if !strings.Contains(string(sr.Tools[0].Parameters), `"type":"object"`) || sr.Tools[0].Description == "" {
		t.Errorf("found tool without its definition: %+v", sr.Tools[0])
	}
	// Found tools are listed and callable in the next round, through the same
	// middleware.
	got := toolNames(t, o)
	if got[0] != orchestrator.SearchTool || !strings.Contains(strings.Join(got, ","), "issues_update") {
		t.Fatalf("tools after the search %q", got)
	}
	if diff := cmp.Diff([]string{"gh:issues_update"}, results(process(t, o, "issues_update"))); diff != "" {
		t.Errorf("call of a found tool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{orchestrator.SearchTool, "issues_update"}, mw.seen()); diff != "" {
		t.Errorf("middleware saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"issues_update"}, driverMW.seen()); diff != "" {
		t.Errorf("the driver's middleware saw (-want +got):\n%s", diff)
	}
	// ExecuteTool routes any name, found or not.
	if res, err := o.ExecuteTool(context.Background(), "repos_delete", nil); err != nil || res != "gh:repos_delete" {
		t.Errorf("ExecuteTool of an unfound tool: %v, %v", res, err)
	}
}

func TestToolSearchBadQueries(t *testing.T) {
	o := build(t, orchestrator.Pipeline(orchestrator.ToolSearch(2)), "gh", newCatalogue("gh", githubish...))
	for _, args := range []map[string]any{{}, {"query": ""}, {"query": 5.0}, {"query": "x", "extra": true}} {
		_, err := o.ExecuteTool(context.Background(), orchestrator.SearchTool, args)
		var ae *mcs.ArgumentsError
		if !errors.As(err, &ae) || len(ae.Problems) == 0 || ae.Tool != orchestrator.SearchTool {
			t.Errorf("args %v: error %v, want an *mcs.ArgumentsError", args, err)
		}
	}
	sr := search(t, o, orchestrator.SearchTool, "zebra xylophone")
	if len(sr.Tools) != 0 || !strings.Contains(sr.Message, "No tool matches") {
		t.Errorf("nonsense query: %+v", sr)
	}
}

// ToolSearch in a nested orchestrator: the outer one namespaces the search tool
// and renames the found tools in its result to the names the model calls.
func TestToolSearchNested(t *testing.T) {
	inner := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(3)),
		"gh", newCatalogue("gh", githubish...), "lab", newCatalogue("lab", [2]string{"projects_list", "List projects"}))
	outer := build(t, nil, "dev", inner, "notes", newFake("notes", "read_note"))
	if diff := cmp.Diff([]string{"dev__tools__search", "notes__read_note"}, toolNames(t, outer)); diff != "" {
		t.Fatalf("outer tools (-want +got):\n%s", diff)
	}
	resp := outer.ProcessLLMResponse(context.Background(), textCall(t, "dev__tools__search", map[string]any{"query": "merge a pull request"}))
	if !resp.CallExecuted {
		t.Fatalf("search: %+v", resp)
	}
	sr := resp.Calls[0].Result.(*orchestrator.SearchResult)
	if len(sr.Tools) == 0 || sr.Tools[0].Name != "dev__gh__pulls_merge" || !strings.HasPrefix(sr.Tools[0].Description, "[dev] [gh] ") {
		t.Fatalf("found %+v, want dev__gh__pulls_merge first", sr.Tools)
	}
	if diff := cmp.Diff([]string{"gh:pulls_merge"}, results(process(t, outer, "dev__gh__pulls_merge"))); diff != "" {
		t.Errorf("call of the found tool (-want +got):\n%s", diff)
	}
}

// ToolSearch over several namespaced drivers indexes the exposed names and groups
// them by label.
func TestToolSearchOverNamespacedDrivers(t *testing.T) {
	o := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(3)),
		"gh", newCatalogue("gh", githubish...), "lab", newCatalogue("lab", [2]string{"projects_list", "List projects"}, [2]string{"projects_get", "Get a project"}))
	tools, _ := o.ListTools(context.Background())
	if !strings.Contains(tools[0].Description, "gh: issues (3)") || !strings.Contains(tools[0].Description, "lab: projects (2)") {
		t.Errorf("compact index %q", tools[0].Description)
	}
	sr := search(t, o, orchestrator.SearchTool, "get a project")
	if len(sr.Tools) == 0 || sr.Tools[0].Name != "lab__projects_get" {
		t.Errorf("found %q", foundNames(sr))
	}
}

// The found set is bounded: the oldest found tools leave the listing first.
func TestToolSearchKeepsRecentFinds(t *testing.T) {
	var tools [][2]string
	for i := range 40 {
		tools = append(tools, [2]string{fmt.Sprintf("widget%02d_get", i), fmt.Sprintf("Get widget %02d", i)})
	}
	o := build(t, orchestrator.Pipeline(orchestrator.ToolSearch(1)), "w", newCatalogue("w", tools...))
	for i := range 20 {
		search(t, o, orchestrator.SearchTool, fmt.Sprintf("widget%02d", i))
	}
	got := toolNames(t, o)
	if len(got) != 17 || got[1] != "widget04_get" || got[16] != "widget19_get" {
		t.Errorf("listed after 20 searches: %q", got)
	}
}

// githubTools are the tools a REST driver would publish for the GitHub-shaped
// document: names sanitised, summaries as titles, path parameters.
func githubTools(n int) []mcs.Tool {
	var out []mcs.Tool
	for _, op := range apispec.GitHubOps(n) {
		t := mcs.Tool{Name: strings.ReplaceAll(op.ID, "/", "_"), Title: op.Summary, Description: op.Summary + ". OAuth app tokens need the repo scope."}
		for _, seg := range strings.Split(op.Path, "/") {
			if strings.HasPrefix(seg, "{") {
				t.Parameters = append(t.Parameters, mcs.Parameter{Name: strings.Trim(seg, "{}"), Required: true})
			}
		}
		out = append(out, t)
	}
	return out
}

// benchSearchOrchestrator returns an orchestrator with ToolSearch over the 1,223
// tools of the GitHub-shaped document, listed once.
func benchSearchOrchestrator(b *testing.B) *orchestrator.Orchestrator {
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.ToolSearch(5)))
	if err := o.AddDriver("github", static{tools: githubTools(1223)}); err != nil {
		b.Fatal(err)
	}
	if _, err := o.ListTools(context.Background()); err != nil {
		b.Fatal(err)
	}
	return o
}

var benchQueries = []string{"list issues of a repository", "merge a pull request", "delete a webhook", "get the authenticated user", "create a release",
	"star a repository", "list workflow runs", "add a collaborator", "lock an issue", "search code"}

// BenchmarkToolSearchOrchestrator measures one search call through the
// orchestrator (its middleware chain, call routing and the search) in the steady
// state: the query's tools were found before, so the listing does not change.
func BenchmarkToolSearchOrchestrator(b *testing.B) {
	o := benchSearchOrchestrator(b)
	ctx := context.Background()
	args := map[string]any{"query": "list issues of a repository"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := o.ExecuteTool(ctx, orchestrator.SearchTool, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolSearchNewFinds measures a search whose results change the exposed
// listing, so that the orchestrator lists its drivers again (10 queries rotating
// through a found set of 20).
func BenchmarkToolSearchNewFinds(b *testing.B) {
	o := benchSearchOrchestrator(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := o.ExecuteTool(ctx, orchestrator.SearchTool, map[string]any{"query": benchQueries[i%len(benchQueries)]}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolSearch measures the search alone, the figure of the target (at most
// 200 µs over 1,223 tools after the first listing): the layer's ExecuteTool over the
// index that the first listing built, for five rotating queries.
func BenchmarkToolSearch(b *testing.B) {
	layer := orchestrator.ToolSearch(5)
	drivers := []orchestrator.Entry{{Label: "github", Driver: static{tools: githubTools(1223)}}}
	inner := orchestrator.Flat()
	ctx := context.Background()
	if _, err := layer.ListTools(ctx, drivers, inner); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := layer.ExecuteTool(ctx, drivers, orchestrator.SearchTool, map[string]any{"query": benchQueries[i%5]}, inner); err != nil {
			b.Fatal(err)
		}
	}
}

// argFailing returns argument errors that name its own tool.
type argFailing struct {
	*fake
	named bool // return a renamable error instead of *mcs.ArgumentsError
}

type namedErr struct{ tool string }

func (e *namedErr) Error() string                  { return "tool " + e.tool + ": bad" }
func (e *namedErr) ToolName() string               { return e.tool }
func (e *namedErr) WithToolName(name string) error { return &namedErr{tool: name} }

func (f argFailing) ExecuteTool(_ context.Context, name string, _ map[string]any) (any, error) {
	if f.named {
		return nil, &namedErr{tool: name}
	}
	return nil, &mcs.ArgumentsError{Tool: name, Problems: []string{"/x: wrong"}}
}

// Errors that name a driver's tool reach the model with the exposed name, also
// through two levels of namespacing.
func TestErrorsNameTheExposedTool(t *testing.T) {
	for _, named := range []bool{false, true} {
		inner := build(t, nil, "a", argFailing{fake: newFake("a", "do")}, "b", newFake("b", "y"))
		if named {
			inner = build(t, nil, "a", argFailing{fake: newFake("a", "do"), named: true}, "b", newFake("b", "y"))
		}
		outer := build(t, nil, "in", inner, "c", newFake("c", "z"))
		resp := process(t, outer, "in__a__do")
		if !resp.CallFailed || !strings.Contains(resp.Calls[0].Err.Error(), "in__a__do") {
			t.Errorf("named=%v: error %v, want it to name in__a__do", named, resp.Calls[0].Err)
		}
	}
}

func TestToolSearchHostileQuery(t *testing.T) {
	o := build(t, orchestrator.Pipeline(orchestrator.ToolSearch(3)), "gh", newCatalogue("gh", githubish...))
	q := "merge pull " + strings.Repeat("zz", 1<<20)
	if sr := search(t, o, orchestrator.SearchTool, q); len(sr.Tools) == 0 || sr.Tools[0].Name != "pulls_merge" || len(sr.Query) > 600 {
		t.Errorf("found %q, query of %d bytes echoed", foundNames(sr), len(sr.Query))
	}
	var words []string
	for i := range 300 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	search(t, o, orchestrator.SearchTool, strings.Join(words, " ")+" merge")
}

// A found tool whose exposed name an outer orchestrator shortens is callable by
// the name the search returned, also when the shortened name is shorter than
// the limit (its cut ended in "_", which shortening trims) and the outer
// orchestrator has not listed it yet.
func TestToolSearchNestedShortenedName(t *testing.T) {
	long := strings.Repeat("a", 46) + "_merge_pull" // gh__ + 57: fits the inner limit
	inner := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(3)),
		"gh", newCatalogue("gh", [2]string{long, "Merge a pull request"}), "lab", newCatalogue("lab", [2]string{"projects_list", "List projects"}))
	outer := build(t, nil, "dev", inner, "notes", newFake("notes", "read_note"))
	resp := outer.ProcessLLMResponse(context.Background(), textCall(t, "dev__tools__search", map[string]any{"query": "merge a pull request"}))
	if !resp.CallExecuted {
		t.Fatalf("search: %+v", resp)
	}
	sr := resp.Calls[0].Result.(*orchestrator.SearchResult)
	if len(sr.Tools) == 0 {
		t.Fatal("nothing found")
	}
	name := sr.Tools[0].Name
	if len(name) > 64 || !strings.HasPrefix(name, "dev__gh__aaaa") {
		t.Fatalf("found %q, want a shortened dev__gh__ name", name)
	}
	// Straight after the search, as a client holding the orchestrator as a
	// ToolDriver calls it (no listing in between).
	got, err := outer.ExecuteTool(context.Background(), name, nil)
	if err != nil {
		t.Fatalf("call of the found tool %q: %v", name, err)
	}
	if got != "gh:"+long {
		t.Errorf("call of the found tool %q: %v", name, got)
	}
	if diff := cmp.Diff([]string{"gh:" + long}, results(process(t, outer, name))); diff != "" {
		t.Errorf("call of the found tool %q (-want +got):\n%s", name, diff)
	}
}
