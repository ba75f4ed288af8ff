package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
)

// SearchTool is the name of the tool [ToolSearch] adds.
const SearchTool = "tools__search"

// ToolSearch returns the Layer that replaces a long tool listing with one search tool.
// Instead of every inner tool it exposes SearchTool, whose one required string
// parameter "query" takes a few words that describe a task ("list issues of a
// repository"); the result, a *[SearchResult], names the best matching tools (at most
// maxResults) with their full definitions. The tools a search returns are exposed
// from then on, after SearchTool, so that the model can call them in the following
// rounds; the layer keeps the 4×maxResults (at least 16) most recently found or
// called, dropping the oldest first. ExecuteTool routes every name the inner strategy
// can route, found or not.
//
// Ranking is BM25 over each tool's name (split at "_", "-", "__" and camelCase),
// title, description, parameter names and parameter descriptions, with field weights
// (name highest), light stemming (issues → issue, closed → close, assignees →
// assign, re-run → rerun) and a few verb synonyms (remove → delete, show → get, edit
// → update, my → authenticated), times the share of the query's words a tool
// matches, times one plus the share of the tool's own words (its name and title;
// those after "for", "in", "of"... count a quarter) that the query has: "list pull
// requests" is all of pulls_list and a part of pulls_list-requested-reviewers. A
// name made of an HTTP method and a path, as Stripe's are, also says its action:
// PostCustomers creates, PostCustomersCustomer (ending in a required parameter)
// updates, GetCustomers lists. Queries get alternatives for the words of requests
// (open and add also look for create; "signed-in", "current" and "who am I" for
// authenticated), and one that starts with a word of titles that starts none
// of them, a thing rather than an action ("comment on an issue"), also looks for
// create.
// On GitHub's and Stripe's own descriptions, 102 phrasings have
// their answer in the top 5 (see BenchmarkToolSearchRecallReal). The
// index is built once per inner listing and kept until that listing changes; a search
// over 1,223 tools takes well under 200 µs (see BenchmarkToolSearch).
//
// The description of SearchTool carries a compact index: how many tools there are and
// their groups (driver labels and the first word of each name, such as "issues (55)"),
// so that it also guides a model when the search tool is reached through an outer
// orchestrator (as label__tools__search). The layer's Instructions explain the
// search-then-call protocol for the system message. Found tools obey the same
// middleware as listed ones: calls reach the drivers through the inner strategy,
// inside the orchestrator's own chain. SearchTool is annotated read-only.
//
// Put ToolSearch outside (after) Namespacing, so that it indexes and returns the
// exposed names; an outer orchestrator's Namespacing renames the names in the result
// of a nested one. It implements [mcs.VersionedTools]: a search that exposes new tools makes
// the orchestrator list again. It panics when maxResults is less than 1, a
// programming error. The result is safe for concurrent use and belongs to one
// pipeline: the found tools are its state (one conversation's worth).
func ToolSearch(maxResults int) Layer {
	if maxResults < 1 {
		panic(fmt.Sprintf("orchestrator: ToolSearch(%d): the number of results must be at least 1", maxResults))
	}
	return &toolSearch{max: maxResults, keep: max(4*maxResults, 16)}
}

// SearchResult is the result of SearchTool: the query, the best matching tools in
// rank order, and a message for the model. It marshals to JSON for the model.
type SearchResult struct {
	Query   string      `json:"query"`
	Tools   []FoundTool `json:"tools"`
	Message string      `json:"message"`
}

// FoundTool is one tool of a [SearchResult], with its full definition. Parameters
// is the JSON Schema of the tool's arguments ([mcs.ToolSchema]) as JSON; it is
// computed once per tool and shared, so treat it as read-only.
type FoundTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type toolSearch struct {
	max  int // results per search
	keep int // found tools exposed at most

	idx atomic.Pointer[searchIndex] // the index of the last inner listing

	mu    sync.Mutex
	found []string // exposed found tools, least recently used first

	version atomic.Uint64
}

var (
	_ Layer              = (*toolSearch)(nil)
	_ mcs.VersionedTools = (*toolSearch)(nil)
	_ windowLayer        = (*toolSearch)(nil)
)

func (s *toolSearch) ToolsVersion() uint64 { return s.version.Load() }

// index returns the index of tools, reusing the last one when the listing is the
// same.
func (s *toolSearch) index(tools []mcs.Tool) *searchIndex {
	if cur := s.idx.Load(); cur != nil && cur.same(tools) {
		return cur
	}
	idx := buildIndex(tools)
	s.idx.Store(idx)
	return idx
}

// ListTools exposes SearchTool and the found tools that the inner listing still has.
func (s *toolSearch) ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	tools, err := inner.ListTools(ctx, drivers)
	if len(tools) == 0 && err != nil {
		return nil, err
	}
	idx := s.index(withoutSearchTool(tools))
	s.mu.Lock()
	found := slices.Clone(s.found)
	s.mu.Unlock()
	out := make([]mcs.Tool, 0, 1+len(found))
	out = append(out, idx.searchTool(s.max))
	for _, name := range found {
		if i, ok := idx.byName[name]; ok {
			out = append(out, idx.tools[i])
		}
	}
	return out, err
}

// listEvery exposes everything a search could expose, for registration checks.
func (s *toolSearch) listEvery(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	tools, err := inner.ListTools(ctx, drivers)
	if len(tools) == 0 && err != nil {
		return nil, err
	}
	tools = withoutSearchTool(tools)
	return append([]mcs.Tool{s.index(tools).searchTool(s.max)}, tools...), err
}

func withoutSearchTool(tools []mcs.Tool) []mcs.Tool {
	i := slices.IndexFunc(tools, func(t mcs.Tool) bool { return t.Name == SearchTool })
	if i < 0 {
		return tools
	}
	return slices.Delete(slices.Clone(tools), i, i+1)
}

// ExecuteTool answers SearchTool and hands every other name to inner; a found tool
// that is called becomes the most recently used.
func (s *toolSearch) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error) {
	if name != SearchTool {
		s.touch([]string{name}, false)
		return inner.ExecuteTool(ctx, drivers, name, args)
	}
	var problems []string
	query, ok := args["query"].(string)
	switch {
	case !ok && args["query"] == nil:
		problems = append(problems, "/query: missing; give a few words that describe the task")
	case !ok:
		problems = append(problems, "/query: must be a string of a few words that describe the task")
	case strings.TrimSpace(query) == "":
		problems = append(problems, "/query: is empty; give a few words that describe the task")
	}
	for k := range args {
		if k != "query" {
			problems = append(problems, "/"+k+": unknown argument; "+SearchTool+" takes only \"query\"")
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, &mcs.ArgumentsError{Tool: calledAs(ctx, name), Problems: problems}
	}
	idx := s.idx.Load()
	if idx == nil {
		tools, err := inner.ListTools(ctx, drivers)
		if len(tools) == 0 && err != nil {
			return nil, fmt.Errorf("%s: %w", SearchTool, err)
		}
		idx = s.index(withoutSearchTool(tools))
	}
	hits := idx.search(query, s.max)
	res := &SearchResult{Query: cutText(query), Tools: make([]FoundTool, 0, len(hits))}
	names := make([]string, 0, len(hits))
	for _, i := range hits {
		t := idx.tools[i]
		res.Tools = append(res.Tools, FoundTool{Name: t.Name, Description: t.Summary(), Parameters: idx.schema(i)})
		names = append(names, t.Name)
	}
	if len(hits) == 0 {
		res.Message = "No tool matches these words. Search again with other words (the action and the object, such as \"delete a webhook\")."
	} else {
		res.Message = fmt.Sprintf("%d best matching tools, best first. They are callable now by exactly these names; search again if none fits.", len(hits))
	}
	s.touch(names, true)
	return res, nil
}

// calledAs is the name the model called a tool by, from the call's CallInfo.
func calledAs(ctx context.Context, name string) string {
	if info, ok := mcs.CallInfoFromContext(ctx); ok && info.Tool.Name != "" && strings.HasSuffix(info.Tool.Name, name) {
		return info.Tool.Name
	}
	return name
}

// touch makes names the most recently used found tools, the last one most recent;
// add says names not found yet are added (a search), else only found ones move.
func (s *toolSearch) touch(names []string, add bool) {
	s.mu.Lock()
	changed := false
	for _, n := range names {
		i := slices.Index(s.found, n)
		switch {
		case i >= 0:
			if i != len(s.found)-1 {
				s.found = append(slices.Delete(s.found, i, i+1), n)
			}
		case add:
			s.found = append(s.found, n)
			changed = true
		}
	}
	if len(s.found) > s.keep {
		s.found = slices.Delete(s.found, 0, len(s.found)-s.keep)
		changed = true
	}
	s.mu.Unlock()
	if changed {
		s.version.Add(1)
	}
}

func (s *toolSearch) Instructions(context.Context) string {
	n := 0
	if idx := s.idx.Load(); idx != nil {
		n = len(idx.tools)
	}
	return fmt.Sprintf("Tool search: %s tools are available but not listed. To find the one a task needs, call %s "+
		"with a few words that describe the task, for example {\"query\": \"list the issues of a repository\"}. "+
		"It returns up to %d matching tools with their parameters; from then on you can call them by exactly the names it returned. "+
		"Search again with other words when none fits; never guess a tool name that no search returned.",
		strconv.Itoa(n), SearchTool, s.max)
}

// searchIndex is the BM25 index of one inner listing. It is immutable.
type searchIndex struct {
	tools    []mcs.Tool
	byName   map[string]int
	postings map[string][]posting // term -> documents, in document order
	// cover has, for each term of a tool's name or title, the share of that
	// tool's own words it stands for (the words before a "for", "in", "of"...
	// count twice those after), in document order.
	cover   map[string][]posting
	idf     map[string]float32
	actions map[string]bool                   // the terms that name what tools do: the first of each title
	things  map[string]bool                   // the other terms of titles
	groups  string                            // the compact index for the search tool's description
	schemas []atomic.Pointer[json.RawMessage] // each tool's parameter schema, once asked
	scratch sync.Pool                         // *searchScratch sized for tools, clean
}

// searchScratch is the per-search state, cleaned after each search for the
// next one: per tool its score, its coverage, how many query words it matched
// and the last word group that matched it (0 for none: the tools touched).
type searchScratch struct {
	scores, cover []float32
	matched, last []uint8
	touched       []int32
	query         []queryTerm
	top           []int32
}

func (x *searchIndex) getScratch() *searchScratch {
	if sc, ok := x.scratch.Get().(*searchScratch); ok {
		return sc
	}
	n := len(x.tools)
	return &searchScratch{
		scores: make([]float32, n), cover: make([]float32, n),
		matched: make([]uint8, n), last: make([]uint8, n),
		touched: make([]int32, 0, 256), query: make([]queryTerm, 0, maxQueryTerms), top: make([]int32, 0, 16),
	}
}

// putScratch cleans what the search touched and keeps sc for the next one.
func (x *searchIndex) putScratch(sc *searchScratch) {
	for _, d := range sc.touched {
		sc.scores[d], sc.cover[d], sc.matched[d], sc.last[d] = 0, 0, 0, 0
	}
	sc.touched, sc.query, sc.top = sc.touched[:0], sc.query[:0], sc.top[:0]
	x.scratch.Put(sc)
}

// schema returns the JSON parameter schema of tool i, computing it once.
func (x *searchIndex) schema(i int) json.RawMessage {
	if p := x.schemas[i].Load(); p != nil {
		return *p
	}
	data, err := json.Marshal(mcs.ToolSchema(x.tools[i]))
	if err != nil {
		data = []byte(`{"type":"object"}`)
	}
	raw := json.RawMessage(data)
	x.schemas[i].Store(&raw)
	return raw
}

// posting is one document of a term with its BM25 term weight (tf saturated and
// length-normalised).
type posting struct {
	doc int32
	w   float32
}

// BM25 parameters and field weights.
const (
	bm25K1 = 1.2
	bm25B  = 0.75

	weightName      = 3.0
	weightTitle     = 2.0
	weightDesc      = 1.0
	weightParam     = 1.0
	weightParamDesc = 0.3

	// maxIndexedDesc bounds how much of a description or parameter description
	// is indexed, and of a query; long descriptions are mostly notes and
	// examples.
	maxIndexedDesc = 600
	// maxQueryTerms bounds the distinct words of a query that count, with
	// their alternatives.
	maxQueryTerms = 32

	// coverBoost is what a query that has all of a tool's own words adds to
	// its score, as a share of it.
	coverBoost = 1.0
	// qualifierWeight is the part of a tool's own word that qualifies its
	// object ("for the authenticated user"), where one that names the action or
	// the object is 1.
	qualifierWeight = 0.25
)

// same reports whether tools is the listing the index was built from: the same
// names, titles, descriptions and parameter names in the same order. Strings of an
// unchanged listing usually share their memory, so this is cheap.
func (x *searchIndex) same(tools []mcs.Tool) bool {
	if len(tools) != len(x.tools) {
		return false
	}
	for i := range tools {
		a, b := &tools[i], &x.tools[i]
		if a.Name != b.Name || a.Title != b.Title || a.Description != b.Description || len(a.Parameters) != len(b.Parameters) {
			return false
		}
		for j := range a.Parameters {
			if a.Parameters[j].Name != b.Parameters[j].Name {
				return false
			}
		}
	}
	return true
}

func buildIndex(tools []mcs.Tool) *searchIndex {
	x := &searchIndex{
		tools:    slices.Clone(tools),
		byName:   make(map[string]int, len(tools)),
		postings: map[string][]posting{},
		cover:    map[string][]posting{},
		idf:      map[string]float32{},
		actions:  map[string]bool{},
		things:   map[string]bool{},
		schemas:  make([]atomic.Pointer[json.RawMessage], len(tools)),
	}
	n := len(tools)
	tfs := make([]map[string]float32, len(tools))
	lens := make([]float32, len(tools))
	// Document frequencies count the documents whose name or title has the term,
	// else whose description has it, else any field: notes repeated in every
	// description ("supports the following media types") and parameters repeated
	// by most tools (owner, repo) would otherwise make the words that tell tools
	// apart worthless.
	primaryDF, descDF := map[string]int{}, map[string]int{}
	var total float64
	for i, t := range tools {
		if _, dup := x.byName[t.Name]; !dup {
			x.byName[t.Name] = i
		}
		tf := map[string]float32{}
		primary, inDesc := map[string]bool{}, map[string]bool{}
		var dl float32
		add := func(w float32, seen map[string]bool) func(string) {
			return func(term string) {
				tf[term] += w
				dl += w
				if seen != nil {
					seen[term] = true
				}
			}
		}
		// The tool's own words: its name and title, each word worth one part
		// of the whole (words that qualify the object, after "for", "in"...,
		// half a part), for the coverage of a query.
		own := map[string]float32{}
		var ownTotal float32
		ownWord := func(term string, qualifier bool) {
			w := float32(1)
			if qualifier {
				w = qualifierWeight
			}
			if old, ok := own[term]; !ok || old < w {
				ownTotal += w - old
				own[term] = w
			}
		}
		nameTerms(t.Name, add(weightName, primary), ownWord)
		title := cutText(t.Title)
		n := 0
		terms(title, func(term string) {
			if n == 0 {
				x.actions[term] = true
			} else {
				x.things[term] = true
			}
			n++
			add(weightTitle, primary)(term)
		})
		ownTerms(title, ownWord)
		if verb, method := derivedVerb(t.Name, t.Parameters); verb != "" {
			// PostCustomers creates: the verb stands in the method's place, as
			// part of the name and of the tool's own words, not as one more.
			add(weightName, primary)(verb)
			if w, ok := own[method]; ok {
				if old := own[verb]; old < w {
					own[verb] = w
				}
			}
		}
		if t.Description != t.Title {
			terms(cutText(t.Description), add(weightDesc, inDesc))
		}
		for _, p := range t.Parameters {
			terms(p.Name, add(weightParam, nil))
			terms(cutText(p.Description), add(weightParamDesc, nil))
		}
		for term := range primary {
			primaryDF[term]++
		}
		for term := range inDesc {
			descDF[term]++
		}
		for term, w := range own {
			x.cover[term] = append(x.cover[term], posting{doc: int32(i), w: w / ownTotal})
		}
		tfs[i], lens[i] = tf, dl
		total += float64(dl)
	}
	avg := float32(1)
	if len(tools) > 0 && total > 0 {
		avg = float32(total / float64(len(tools)))
	}
	for i, tf := range tfs {
		norm := bm25K1 * (1 - bm25B + bm25B*lens[i]/avg)
		for term, f := range tf {
			x.postings[term] = append(x.postings[term], posting{doc: int32(i), w: f * (bm25K1 + 1) / (f + norm)})
		}
	}
	for term, ps := range x.postings {
		df := float64(len(ps))
		if p := primaryDF[term]; p > 0 {
			df = float64(p)
		} else if d := descDF[term]; d > 0 {
			df = float64(d)
		}
		x.idf[term] = float32(math.Log(1 + (float64(n)-df+0.5)/(df+0.5)))
	}
	x.groups = compactIndex(tools)
	return x
}

// cutText returns the start of a description that is indexed.
func cutText(s string) string {
	if len(s) <= maxIndexedDesc {
		return s
	}
	i := maxIndexedDesc
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// search returns the documents of the best matches for query, at most k, best first;
// equal scores keep listing order.
//
// A tool's score is its BM25 score over the query's words, times the share of
// the query's words it matches (coordination), times one plus the share of the
// tool's own words (name and title) that the query has (coverage): "list pull
// requests" is all of "List pull requests" and a part of "List requested
// reviewers for a pull request".
func (x *searchIndex) search(query string, k int) []int {
	if len(x.tools) == 0 {
		return nil
	}
	sc := x.getScratch()
	defer x.putScratch(sc)
	// A query is a few words: a hostile one is cut, not scanned whole.
	sc.query = queryTerms(cutText(query), sc.query)
	if len(sc.query) == 0 {
		return nil
	}
	// A request that starts with a thing the titles name, and never as their
	// action ("comment on an issue", "fork a repository"), asks to make one.
	if len(x.actions) > 0 && sc.query[0].w == 1 && !x.actions[sc.query[0].term] && x.actions[create] &&
		x.things[sc.query[0].term] {
		i := 1
		for i < len(sc.query) && sc.query[i].group == 0 {
			i++
		}
		if !slices.ContainsFunc(sc.query, func(q queryTerm) bool { return q.term == create }) {
			sc.query = slices.Insert(sc.query, i, queryTerm{term: create, w: impliedCreate})
		}
	}
	groups := int(sc.query[len(sc.query)-1].group) + 1
	scores, cover, matched, last := sc.scores, sc.cover, sc.matched, sc.last
	for _, q := range sc.query {
		idf := x.idf[q.term] * q.w
		g := q.group + 1
		for _, p := range x.postings[q.term] {
			if last[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			if last[p.doc] != g { // the query's terms come group by group
				matched[p.doc]++
				last[p.doc] = g
			}
			scores[p.doc] += idf * p.w
		}
		for _, p := range x.cover[q.term] {
			cover[p.doc] += p.w * q.w
		}
	}
	for _, d := range sc.touched {
		scores[d] *= float32(matched[d]) / float32(groups) * (1 + coverBoost*min(cover[d], 1))
	}
	// A small insertion-sorted top k.
	top := sc.top
	better := func(a, b int32) bool {
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return a < b
	}
	for _, d := range sc.touched {
		if len(top) == k && !better(d, top[k-1]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return better(d, top[i]) })
		top = slices.Insert(top, i, d)
		if len(top) > k {
			top = top[:k]
		}
	}
	sc.top = top
	out := make([]int, len(top))
	for i, d := range top {
		out[i] = int(d)
	}
	return out
}

// searchTool is the definition of SearchTool over this index.
func (x *searchIndex) searchTool(k int) mcs.Tool {
	desc := fmt.Sprintf("Finds the tools for a task among %d tools that are not listed. Give a few words that describe the task; "+
		"the result lists up to %d matching tools with their parameters, and they become callable by exactly those names.", len(x.tools), k)
	if x.groups != "" {
		desc += " Groups of tools: " + x.groups
	}
	return mcs.Tool{
		Name:        SearchTool,
		Title:       "Search the tools",
		Description: desc,
		Parameters: []mcs.Parameter{{
			Name:        "query",
			Description: "A few words that describe the task, such as \"close an issue\" or \"list the invoices of a customer\".",
			Required:    true,
			Schema:      map[string]any{"type": "string"},
		}},
		Annotations: &mcs.ToolAnnotations{ReadOnly: true},
	}
}

// Limits of the compact index.
const (
	maxGroupsShown  = 80
	maxCompactBytes = 2400
)

// compactIndex describes the groups of tools in one line per label path, such as
// "github: actions (184), issues (55), ...; stripe: customers (20), ...". A group is
// the first word of a tool's own name that is not a common verb. The most populous
// groups come first; the rest are counted.
func compactIndex(tools []mcs.Tool) string {
	type group struct {
		prefix, word string
		n            int
		first        int
	}
	byKey := map[[2]string]*group{}
	var order []*group
	for i, t := range tools {
		prefix := ""
		base := t.Name
		if j := strings.LastIndex(t.Name, Separator); j > 0 {
			prefix, base = t.Name[:j], t.Name[j+len(Separator):]
		}
		word := groupWord(base)
		key := [2]string{prefix, word}
		g := byKey[key]
		if g == nil {
			g = &group{prefix: prefix, word: word, first: i}
			byKey[key] = g
			order = append(order, g)
		}
		g.n++
	}
	if len(order) <= 1 {
		return ""
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].n > order[j].n })
	shown := order[:min(len(order), maxGroupsShown)]
	// Group the shown ones by prefix, prefixes in order of first appearance.
	var prefixes []string
	per := map[string][]*group{}
	for _, g := range shown {
		if _, ok := per[g.prefix]; !ok {
			prefixes = append(prefixes, g.prefix)
		}
		per[g.prefix] = append(per[g.prefix], g)
	}
	var sb strings.Builder
	rest := len(order) - len(shown)
	for _, p := range prefixes {
		var part strings.Builder
		if p != "" {
			part.WriteString(strings.ReplaceAll(p, Separator, "/") + ": ")
		}
		for i, g := range per[p] {
			if i > 0 {
				part.WriteString(", ")
			}
			fmt.Fprintf(&part, "%s (%d)", g.word, g.n)
		}
		if sb.Len()+part.Len() > maxCompactBytes {
			rest += len(per[p])
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(part.String())
	}
	if rest > 0 {
		fmt.Fprintf(&sb, "; and %d smaller groups", rest)
	}
	sb.WriteString(".")
	return sb.String()
}

// verbs are the words that start many tool names without saying what they act on.
var verbs = map[string]bool{
	"get": true, "list": true, "create": true, "update": true, "delete": true, "post": true,
	"put": true, "patch": true, "set": true, "add": true, "remove": true, "head": true, "options": true,
	"fetch": true, "retrieve": true, "search": true, "check": true,
}

// groupWord is the group of a tool's name, lower case: the part before the first
// "_" when that is not a common verb (issues_update: issues, code-scanning_get:
// code-scanning), else the first word that is not one (PostCustomers: customers).
func groupWord(name string) string {
	if seg, _, ok := strings.Cut(name, "_"); ok && seg != "" && !verbs[strings.ToLower(seg)] {
		return strings.ToLower(seg)
	}
	var words []string
	splitWords(name, func(w string) { words = append(words, strings.ToLower(w)) })
	for _, w := range words {
		if !verbs[w] {
			return w
		}
	}
	if len(words) > 0 {
		return words[0]
	}
	return name
}

// splitWords splits s at every character that is not a letter or digit and at
// camelCase boundaries (getSSHKey: get, SSH, Key).
func splitWords(s string, emit func(string)) {
	start := -1
	var prev rune
	for i, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !alnum {
			if start >= 0 {
				emit(s[start:i])
				start = -1
			}
			prev = r
			continue
		}
		if start < 0 {
			start = i
		} else if unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			emit(s[start:i])
			start = i
		} else if unicode.IsLower(r) && unicode.IsUpper(prev) && i-start > utf8.RuneLen(prev) {
			// "SSHKey": the upper-case run ends before its last letter.
			j := i - utf8.RuneLen(prev)
			emit(s[start:j])
			start = j
		}
		prev = r
	}
	if start >= 0 {
		emit(s[start:])
	}
}

// terms emits the index terms of s: its words, lower case, stop words dropped,
// synonyms mapped and stemmed.
func terms(s string, emit func(string)) {
	eachTerm(s, func(t string, _ bool) { emit(t) })
}

// eachTerm emits the index terms of s, as terms does, each with whether a
// preposition came before it ("Create a repository for the authenticated
// user": authenticated and user qualify the object). A lone "re" joins the next
// word ("re-run" and "rerun" meet).
func eachTerm(s string, emit func(term string, qualifier bool)) {
	qualifier, re := false, false
	splitWords(s, func(w string) {
		w = strings.ToLower(w)
		if w == "re" {
			re = true
			return
		}
		if re {
			w, re = "re"+w, false
		}
		if prepositions[w] {
			qualifier = true
		}
		if t := term(w); t != "" {
			emit(t, qualifier)
		}
	})
}

// term is the index term of one lower-case word, "" for a stop word.
func term(w string) string {
	if stopWords[w] {
		return ""
	}
	if c, ok := synonyms[w]; ok {
		w = c
	}
	return stem(w)
}

// prepositions start the words that qualify an operation's object.
var prepositions = map[string]bool{
	"for": true, "in": true, "of": true, "on": true, "to": true, "with": true, "from": true, "by": true,
	"at": true, "into": true, "across": true, "within": true, "via": true, "using": true,
}

// nameTerms emits the terms of a tool's name to emit and, with whether they
// qualify the object ("list-for-repo"), to own.
func nameTerms(name string, emit func(string), own func(string, bool)) {
	eachTerm(name, func(t string, q bool) {
		emit(t)
		own(t, q)
	})
}

// ownTerms emits the terms of a title to own, with whether they qualify the
// object.
func ownTerms(title string, own func(string, bool)) { eachTerm(title, own) }

// httpMethods are the first words of names made of the method and the path
// (PostCustomers, get_users_id).
var httpMethods = map[string]bool{"get": true, "post": true, "put": true, "patch": true, "delete": true}

// derivedVerb returns, for a name made of an HTTP method and a path such as
// Stripe's, the term of the action it stands for and the term of the method:
// a write to an item (PostCustomersCustomer, whose last words are a required
// parameter) updates, a post to a collection (PostCustomers, ending in a
// plural) creates and a get of one lists. Other names give "".
func derivedVerb(name string, params []mcs.Parameter) (verb, method string) {
	var words []string
	splitWords(name, func(w string) { words = append(words, strings.ToLower(w)) })
	if len(words) < 2 || !httpMethods[words[0]] {
		return "", ""
	}
	m, last := words[0], words[len(words)-1]
	item := false
	for _, p := range params {
		if !p.Required {
			continue
		}
		var pw []string
		splitWords(p.Name, func(w string) { pw = append(pw, strings.ToLower(w)) })
		if len(pw) > 0 && len(pw) < len(words) && slices.Equal(words[len(words)-len(pw):], pw) {
			item = true
			break
		}
	}
	plural := len(last) > 3 && strings.HasSuffix(last, "s") && !strings.HasSuffix(last, "ss") &&
		!strings.HasSuffix(last, "us") && !strings.HasSuffix(last, "is")
	switch {
	case item && m != "get" && m != "delete":
		verb = "update"
	case !item && plural && m == "post":
		verb = "create"
	case !item && plural && m == "get":
		verb = "list"
	default:
		return "", ""
	}
	return term(verb), term(m)
}

// queryTerm is one term of a query: a word's term (w 1) or an alternative of
// it (w below 1), in the group of that word.
type queryTerm struct {
	term  string
	w     float32
	group uint8
}

// queryTerms appends the terms of query to buf, group by group: each word's
// term and its alternatives (open: create), phrases of requests mapped to the
// words of APIs ("signed-in", "who am I": authenticated), repeated terms once,
// at most maxQueryTerms groups.
func queryTerms(query string, buf []queryTerm) []queryTerm {
	var words [2 * maxQueryTerms]string
	n := 0
	splitWords(query, func(w string) {
		if n < len(words) {
			words[n] = strings.ToLower(w)
			n++
		}
	})
	group := -1
	has := func(t string) bool {
		return slices.ContainsFunc(buf, func(q queryTerm) bool { return q.term == t })
	}
	add := func(t string) {
		if t == "" || has(t) || group+1 >= maxQueryTerms {
			return
		}
		group++
		buf = append(buf, queryTerm{term: t, w: 1, group: uint8(group)})
		for _, a := range queryAlternatives[t] {
			if !has(a.term) {
				buf = append(buf, queryTerm{term: a.term, w: a.w, group: uint8(group)})
			}
		}
	}
	ws := words[:n]
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		switch {
		case signIn[w] && i+1 < len(ws) && ws[i+1] == "in":
			add(authenticated)
			i++
			continue
		case w == "whoami", w == "who" && i+2 < len(ws) && ws[i+1] == "am" && ws[i+2] == "i":
			add(authenticated)
			add(user)
			i += 2
			continue
		case w == "re" && i+1 < len(ws):
			w = "re" + ws[i+1]
			i++
		}
		add(term(w))
	}
	return buf
}

// impliedCreate is the weight of the create a request that starts with a
// thing implies.
const impliedCreate = 0.5

var (
	create        = term("create")
	signIn        = map[string]bool{"signed": true, "logged": true, "sign": true, "log": true}
	authenticated = term("authenticated")
	user          = term("user")
)

// queryAlternatives are terms a query's term also looks for, with their weight:
// people open a pull request and add a webhook that APIs create.
var queryAlternatives = func() map[string][]queryTerm {
	m := map[string][]queryTerm{}
	for _, a := range [][3]string{
		{"open", "create", "0.8"}, {"add", "create", "0.6"}, {"current", "authenticated", "0.8"},
		{"close", "update", "0.5"}, {"cancel", "delete", "0.5"},
	} {
		w, _ := strconv.ParseFloat(a[2], 32)
		m[term(a[0])] = append(m[term(a[0])], queryTerm{term: term(a[1]), w: float32(w)})
	}
	return m
}()

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "for": true, "to": true, "in": true, "on": true,
	"by": true, "with": true, "and": true, "or": true, "from": true, "at": true, "as": true, "is": true,
	"are": true, "be": true, "this": true, "that": true, "it": true, "its": true, "i": true, "you": true,
	"your": true, "we": true, "our": true, "do": true, "does": true, "how": true, "can": true,
	"which": true, "what": true, "want": true, "please": true, "some": true, "any": true, "into": true,
	"via": true, "using": true, "will": true, "would": true, "should": true,
	"if": true, "not": true, "no": true, "when": true, "there": true, "their": true, "them": true,
	"they": true, "has": true, "have": true, "was": true, "were": true, "been": true, "one": true,
}

// synonyms map words of requests to the words APIs name their operations with.
var synonyms = map[string]string{
	"remove": "delete", "erase": "delete", "destroy": "delete", "drop": "delete",
	"fetch": "get", "retrieve": "get", "show": "get", "view": "get", "read": "get", "display": "get",
	"edit": "update", "change": "update", "modify": "update", "alter": "update",
	"make": "create", "new": "create", "publish": "create",
	"set": "update", "replace": "update",
	"enumerate": "list", "browse": "list", "all": "list",
	"find": "search", "lookup": "search",
	"repository": "repo", "repositories": "repo",
	"organization": "org", "organizations": "org", "organisation": "org",
	"pr": "pull", "prs": "pull",
	"my": "authenticated", "me": "authenticated", "mine": "authenticated", "myself": "authenticated",
}

// stem strips common English endings so that "issues", "closed" and "closing" meet
// "issue" and "close". It is deliberately small and applied to documents and queries
// alike, so consistency matters more than linguistic accuracy.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes")):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	if len(w) > 6 && strings.HasSuffix(w, "ee") {
		w = w[:len(w)-2] // assignees -> assign
	}
	if len(w) > 6 && strings.HasSuffix(w, "er") {
		w = w[:len(w)-2] // reviewers -> review, followers -> follow
	}
	cut := false
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing") && !isVowel(w[len(w)-4]):
		w, cut = w[:len(w)-3], true // but issuing stays apart from issue
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w, cut = w[:len(w)-2], true
	}
	if cut && len(w) > 2 && w[len(w)-1] == w[len(w)-2] && !strings.ContainsRune("lsz", rune(w[len(w)-1])) && !isVowel(w[len(w)-1]) {
		w = w[:len(w)-1] // starred -> star, running -> run
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }
