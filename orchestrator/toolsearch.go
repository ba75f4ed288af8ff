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
// (name highest), light stemming (issues → issue, closed → close) and a few verb
// synonyms (remove → delete, show → get, edit → update, my → authenticated). The
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
// of a nested one. It implements [Versioned]: a search that exposes new tools makes
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
	_ Layer       = (*toolSearch)(nil)
	_ Versioned   = (*toolSearch)(nil)
	_ windowLayer = (*toolSearch)(nil)
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

func (s *toolSearch) Instructions() string {
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
	idf      map[string]float32
	groups   string                            // the compact index for the search tool's description
	schemas  []atomic.Pointer[json.RawMessage] // each tool's parameter schema, once asked
	scores   sync.Pool                         // *[]float32 of len(tools), zeroed
	matched  sync.Pool                         // *[]uint8 of len(tools), zeroed
}

// matchPool returns a zeroed counter per tool; the caller zeroes what it used and
// puts it back.
func (x *searchIndex) matchPool(n int) []uint8 {
	if p, ok := x.matched.Get().(*[]uint8); ok {
		return *p
	}
	return make([]uint8, n)
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
	// maxQueryTerms bounds the distinct words of a query that count.
	maxQueryTerms = 32
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
		idf:      map[string]float32{},
		schemas:  make([]atomic.Pointer[json.RawMessage], len(tools)),
	}
	n := len(tools)
	x.scores.New = func() any { s := make([]float32, n); return &s }
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
		terms(t.Name, add(weightName, primary))
		terms(cutText(t.Title), add(weightTitle, primary))
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
func (x *searchIndex) search(query string, k int) []int {
	// A query is a few words: a hostile one is cut, not scanned whole.
	query = cutText(query)
	var qterms []string
	terms(query, func(t string) {
		if len(qterms) < maxQueryTerms && !slices.Contains(qterms, t) {
			qterms = append(qterms, t)
		}
	})
	if len(qterms) == 0 || len(x.tools) == 0 {
		return nil
	}
	sp := x.scores.Get().(*[]float32)
	scores := *sp
	touched := make([]int32, 0, 256)
	defer func() {
		for _, d := range touched {
			scores[d] = 0
		}
		x.scores.Put(sp)
	}()
	matched := x.matchPool(len(x.tools))
	for _, t := range qterms {
		idf := x.idf[t]
		for _, p := range x.postings[t] {
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * p.w
			matched[p.doc]++
		}
	}
	// Coordination: a tool that matches more of the query's words ranks above one
	// that matches fewer words more often.
	for _, d := range touched {
		scores[d] *= float32(matched[d]) / float32(len(qterms))
		matched[d] = 0
	}
	x.matched.Put(&matched)
	// A small insertion-sorted top k.
	top := make([]int32, 0, k+1)
	better := func(a, b int32) bool {
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return a < b
	}
	for _, d := range touched {
		if len(top) == k && !better(d, top[k-1]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return better(d, top[i]) })
		top = slices.Insert(top, i, d)
		if len(top) > k {
			top = top[:k]
		}
	}
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
	splitWords(s, func(w string) {
		w = strings.ToLower(w)
		if stopWords[w] {
			return
		}
		if c, ok := synonyms[w]; ok {
			w = c
		}
		if w = stem(w); w != "" {
			emit(w)
		}
	})
}

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
