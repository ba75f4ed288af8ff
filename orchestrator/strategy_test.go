package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// TestCollisions registers two drivers that both publish "search" under every
// strategy and checks what is exposed and where each call goes.
func TestCollisions(t *testing.T) {
	var sw *orchestrator.Switching
	tests := []struct {
		name     string
		strategy func() orchestrator.Strategy
		setup    func(t *testing.T)
		addErr   bool
		tools    []string
		calls    map[string]string // exposed name -> result ("" = not owned)
	}{
		{
			name:     "flat: first registered wins",
			strategy: orchestrator.Flat,
			tools:    []string{"search", "only_a", "only_b"},
			calls:    map[string]string{"search": "a:search", "only_b": "b:only_b", "a__search": ""},
		},
		{
			name:     "empty pipeline behaves like flat",
			strategy: func() orchestrator.Strategy { return orchestrator.Pipeline() },
			tools:    []string{"search", "only_a", "only_b"},
			calls:    map[string]string{"search": "a:search"},
		},
		{
			name:     "namespacing: both exposed under their labels",
			strategy: func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.Namespacing()) },
			tools:    []string{"a__search", "a__only_a", "b__search", "b__only_b"},
			calls:    map[string]string{"a__search": "a:search", "b__search": "b:search", "search": ""},
		},
		{
			name: "switching: only the active driver",
			strategy: func() orchestrator.Strategy {
				sw = orchestrator.ToolSwitching()
				return orchestrator.Pipeline(sw)
			},
			setup: func(t *testing.T) {
				if err := sw.SetActive("b"); err != nil {
					t.Fatal(err)
				}
			},
			tools: []string{"search", "only_b"},
			calls: map[string]string{"search": "b:search", "only_a": ""},
		},
		{
			name:     "reject conflicts",
			strategy: func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.RejectConflicts()) },
			addErr:   true,
			tools:    []string{"search", "only_a"},
			calls:    map[string]string{"search": "a:search"},
		},
		{
			name: "reject conflicts after namespacing: no conflict",
			strategy: func() orchestrator.Strategy {
				return orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.RejectConflicts())
			},
			tools: []string{"a__search", "a__only_a", "b__search", "b__only_b"},
			calls: map[string]string{"b__search": "b:search"},
		},
		{
			name: "reject conflicts before namespacing: still no conflict",
			strategy: func() orchestrator.Strategy {
				return orchestrator.Pipeline(orchestrator.RejectConflicts(), orchestrator.Namespacing())
			},
			tools: []string{"a__search", "a__only_a", "b__search", "b__only_b"},
			calls: map[string]string{"a__search": "a:search"},
		},
		{
			name: "reject conflicts under switching: no conflict",
			strategy: func() orchestrator.Strategy {
				return orchestrator.Pipeline(orchestrator.RejectConflicts(), orchestrator.ToolSwitching())
			},
			tools: []string{},
			calls: map[string]string{"search": ""},
		},
		{
			name: "pagination keeps flat priority",
			strategy: func() orchestrator.Strategy {
				return orchestrator.Pipeline(orchestrator.Pagination(10))
			},
			tools: []string{"search", "only_a", "only_b"},
			calls: map[string]string{"search": "a:search"},
		},
		{
			name: "reject conflicts sees every page",
			strategy: func() orchestrator.Strategy {
				return orchestrator.Pipeline(orchestrator.RejectConflicts(), orchestrator.Pagination(1))
			},
			addErr: true,
			tools:  []string{"search", orchestrator.NextPageTool},
			calls:  map[string]string{"search": "a:search"},
		},
		{
			name: "detail loading keeps flat priority",
			strategy: func() orchestrator.Strategy {
				return orchestrator.Pipeline(orchestrator.DetailLoading(100))
			},
			tools: []string{"search", "only_a", "only_b", orchestrator.DetailsTool},
			calls: map[string]string{"search": "a:search"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.strategy()
			o := build(t, s, "a", newFake("a", "search", "only_a"))
			if tt.setup != nil {
				tt.setup(t)
			}
			err := o.AddDriver("b", newFake("b", "search", "only_b"))
			if (err != nil) != tt.addErr {
				t.Fatalf("AddDriver(b) error %v, want error %v", err, tt.addErr)
			}
			if tt.addErr {
				var ce *orchestrator.ConflictError
				if !errors.As(err, &ce) || ce.Name != "search" || !cmp.Equal(ce.Labels, []string{"a", "b"}) {
					t.Errorf("error %v: want a *ConflictError on search listed by a, b", err)
				}
				if diff := cmp.Diff([]string{"a"}, o.Labels()); diff != "" {
					t.Errorf("a rejected driver was registered (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tt.tools, toolNames(t, o)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for name, want := range tt.calls {
				resp := process(t, o, name)
				var got string
				if len(resp.Calls) > 0 {
					got = results(resp)[0]
				}
				if got != want {
					t.Errorf("call %s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

func TestNamespacingSingleDriverUnchanged(t *testing.T) {
	o := build(t, nil, "only", newFake("only", "search"))
	tools, err := o.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tools[0].Name != "search" || tools[0].Description != "search of only" {
		t.Errorf("tool %+v", tools[0])
	}
	if resp := process(t, o, "only__search"); resp.CallExecuted {
		t.Error("a prefixed name was owned with one driver")
	}
}

func TestNamespacingKeepsInnerSyntheticTools(t *testing.T) {
	long := strings.Repeat("x", 40)
	a, b := newFake("a", "search"), newFake("b", "report")
	a.tools[0].Description = long
	o := build(t, orchestrator.Pipeline(orchestrator.DetailLoading(10), orchestrator.Namespacing()), "a", a, "b", b)
	tools, err := o.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a__search", "b__report", orchestrator.DetailsTool}
	if diff := cmp.Diff(want, names(tools)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if got := tools[0].Description; got != "[a] xxx..." {
		t.Errorf("description %q, want the prefixed one cut to 10", got)
	}
	// The inner layer sees namespaced names, so details resolve them.
	got, err := o.ExecuteTool(context.Background(), orchestrator.DetailsTool, map[string]any{"name": "a__search"})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.(map[string]any)["description"]; d != "[a] "+long {
		t.Errorf("details description %q", d)
	}
}

func TestSwitching(t *testing.T) {
	sw := orchestrator.ToolSwitching()
	o := build(t, orchestrator.Pipeline(sw), "a", newFake("a", "search", "only_a"))
	ctx := context.Background()

	// One driver: implicitly active.
	if diff := cmp.Diff([]string{"search", "only_a"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools with one driver (-want +got):\n%s", diff)
	}
	if err := o.AddDriver("b", newFake("b", "search", "only_b")); err != nil {
		t.Fatal(err)
	}
	// Two drivers, none active: nothing, and calls say what to do.
	if diff := cmp.Diff([]string{}, toolNames(t, o)); diff != "" {
		t.Errorf("tools with no active driver (-want +got):\n%s", diff)
	}
	if _, err := o.ExecuteTool(ctx, "search", nil); err == nil || !strings.Contains(err.Error(), "SetActive") {
		t.Errorf("ExecuteTool with no active driver: %v", err)
	}
	for _, tc := range []struct {
		label   string
		tools   []string
		search  string
		wantErr string
	}{
		{"b", []string{"search", "only_b"}, "b:search", ""},
		{"a", []string{"search", "only_a"}, "a:search", ""},
		{"ghost", []string{}, "", `"ghost" is not registered`},
	} {
		if err := sw.SetActive(tc.label); err != nil {
			t.Fatal(err)
		}
		if sw.Active() != tc.label {
			t.Errorf("Active() = %q", sw.Active())
		}
		if diff := cmp.Diff(tc.tools, toolNames(t, o)); diff != "" {
			t.Errorf("active %s: tools (-want +got):\n%s", tc.label, diff)
		}
		got, err := o.ExecuteTool(ctx, "search", nil)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("active %s: ExecuteTool error %v", tc.label, err)
			}
			continue
		}
		if err != nil || got != tc.search {
			t.Errorf("active %s: ExecuteTool = %v, %v", tc.label, got, err)
		}
	}
	if err := sw.SetActive("not valid"); !errors.Is(err, orchestrator.ErrInvalidLabel) {
		t.Errorf("SetActive(invalid) = %v", err)
	}
	if sw.Active() != "ghost" {
		t.Errorf("a rejected SetActive changed the target to %q", sw.Active())
	}
	// Switching only exposes the tools of the active driver, but the name rule covers
	// all of them.
	if err := o.AddDriver("c", newFake("c", "bad.name")); !errors.Is(err, orchestrator.ErrInvalidName) {
		t.Errorf("AddDriver with a bad name under switching: %v", err)
	}
}

func TestPagination(t *testing.T) {
	toolsN := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("t%03d", i)
		}
		return out
	}
	tests := []struct {
		name         string
		tools        int
		size         int
		turns        []string // page tools called in order
		wantTools    []string
		wantInstr    string
		wantPage     [2]int
		wantLastNote string
	}{
		{
			name: "empty set", tools: 0, size: 20,
			wantTools: []string{}, wantPage: [2]int{1, 0},
		},
		{
			name: "page larger than the set", tools: 5, size: 20,
			wantTools: toolsN(5), wantPage: [2]int{1, 1},
		},
		{
			name: "exactly one page", tools: 20, size: 20,
			wantTools: toolsN(20), wantPage: [2]int{1, 1},
		},
		{
			name: "first page", tools: 45, size: 20,
			wantTools: append(toolsN(20), orchestrator.NextPageTool),
			wantInstr: "You see tools 1–20 of 45 (page 1/3).", wantPage: [2]int{1, 3},
		},
		{
			name: "last page is short", tools: 45, size: 20,
			turns:     []string{orchestrator.NextPageTool, orchestrator.NextPageTool},
			wantTools: append(toolsN(45)[40:], orchestrator.PrevPageTool),
			wantInstr: "You see tools 41–45 of 45 (page 3/3).", wantPage: [2]int{3, 3},
		},
		{
			name: "next on the last page stays", tools: 45, size: 20,
			// the third next is not offered any more: forced, it still answers in band
			turns:     []string{orchestrator.NextPageTool, orchestrator.NextPageTool, orchestrator.NextPageTool},
			wantTools: append(toolsN(45)[40:], orchestrator.PrevPageTool),
			wantInstr: "You see tools 41–45 of 45 (page 3/3).", wantPage: [2]int{3, 3},
			wantLastNote: "This is already the last page. You see tools 41–45 of 45 (page 3/3).",
		},
		{
			name: "prev on the first page stays", tools: 45, size: 20,
			turns:     []string{orchestrator.PrevPageTool},
			wantTools: append(toolsN(20), orchestrator.NextPageTool),
			wantInstr: "You see tools 1–20 of 45 (page 1/3).", wantPage: [2]int{1, 3},
			wantLastNote: "This is already the first page. You see tools 1–20 of 45 (page 1/3).",
		},
		{
			name: "next then prev", tools: 45, size: 20,
			turns:     []string{orchestrator.NextPageTool, orchestrator.PrevPageTool},
			wantTools: append(toolsN(20), orchestrator.NextPageTool),
			wantInstr: "You see tools 1–20 of 45 (page 1/3).", wantPage: [2]int{1, 3},
		},
		{
			name: "135 tools, first page", tools: 135, size: 20,
			wantTools: append(toolsN(20), orchestrator.NextPageTool),
			wantInstr: "You see tools 1–20 of 135 (page 1/7). Call tools__next_page to see the other tools; only the tools on the current page can be called.",
			wantPage:  [2]int{1, 7},
		},
		{
			name: "135 tools, last page", tools: 135, size: 20,
			turns:     slices.Repeat([]string{orchestrator.NextPageTool}, 7),
			wantTools: append(toolsN(135)[120:], orchestrator.PrevPageTool),
			wantInstr: "You see tools 121–135 of 135 (page 7/7).", wantPage: [2]int{7, 7},
			wantLastNote: "This is already the last page. You see tools 121–135 of 135 (page 7/7).",
		},
		{
			name: "page size 1", tools: 3, size: 1,
			turns:     []string{orchestrator.NextPageTool},
			wantTools: []string{"t001", orchestrator.NextPageTool, orchestrator.PrevPageTool},
			wantInstr: "You see tools 2–2 of 3 (page 2/3).", wantPage: [2]int{2, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := orchestrator.Pagination(tt.size)
			o := build(t, orchestrator.Pipeline(p), "a", newFake("a", toolsN(tt.tools)...))
			var last mcs.Response
			for _, turn := range tt.turns {
				last = process(t, o, turn)
				if !last.CallExecuted {
					t.Fatalf("%s: %+v", turn, last)
				}
			}
			if diff := cmp.Diff(tt.wantTools, toolNames(t, o)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			msg, err := o.SystemMessage(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantInstr == "" && strings.Contains(msg, "You see tools") {
				t.Errorf("unexpected page instruction in %q", msg)
			}
			if tt.wantInstr != "" && !strings.Contains(msg, tt.wantInstr) {
				t.Errorf("system message lacks %q", tt.wantInstr)
			}
			page, pages := p.Page()
			if diff := cmp.Diff(tt.wantPage, [2]int{page, pages}); diff != "" {
				t.Errorf("Page (-want +got):\n%s", diff)
			}
			if tt.wantLastNote != "" {
				res := last.Calls[0].Result.(map[string]any)
				if res["message"] != tt.wantLastNote {
					t.Errorf("message %q, want %q", res["message"], tt.wantLastNote)
				}
			}
		})
	}
}

func TestPaginationTurnResultAndRouting(t *testing.T) {
	p := orchestrator.Pagination(2)
	a := newFake("a", "t0", "t1", "t2", "t3", "t4")
	o := build(t, orchestrator.Pipeline(p), "a", a)
	// A tool on another page is not owned by ProcessLLMResponse ...
	if resp := process(t, o, "t4"); !notOwned(resp, "t4") {
		t.Errorf("a tool of another page was owned: %+v", resp)
	}
	// ... but ExecuteTool routes it.
	if got, err := o.ExecuteTool(context.Background(), "t4", nil); err != nil || got != "a:t4" {
		t.Errorf("ExecuteTool(t4) = %v, %v", got, err)
	}
	resp := process(t, o, orchestrator.NextPageTool)
	res := resp.Calls[0].Result.(map[string]any)
	if res["page"] != 2 || res["pages"] != 3 || res["message"] != "You see tools 3–4 of 5 (page 2/3)." {
		t.Errorf("result %v", res)
	}
	var listed []string
	for _, x := range res["tools"].([]any) {
		listed = append(listed, x.(map[string]any)["name"].(string))
	}
	if diff := cmp.Diff([]string{"t2", "t3"}, listed); diff != "" {
		t.Errorf("tools in the result (-want +got):\n%s", diff)
	}
	// The listing follows the page; the new page is callable.
	if resp := process(t, o, "t3"); !resp.CallExecuted {
		t.Errorf("t3 on the new page: %+v", resp)
	}
	// Shrinking the set clamps the page onto the grid.
	process(t, o, orchestrator.NextPageTool) // page 3: t4
	a.setTools("t0", "t1", "t2")
	o.Refresh()
	if diff := cmp.Diff([]string{"t2", orchestrator.PrevPageTool}, toolNames(t, o)); diff != "" {
		t.Errorf("tools after shrinking (-want +got):\n%s", diff)
	}
	if page, pages := p.Page(); page != 2 || pages != 2 {
		t.Errorf("Page() = %d, %d", page, pages)
	}
	// A driver tool named like a page tool is hidden by it.
	a.setTools("t0", "t1", "t2", orchestrator.NextPageTool)
	o.Refresh()
	if got, _ := o.ExecuteTool(context.Background(), orchestrator.NextPageTool, nil); got == "a:"+orchestrator.NextPageTool {
		t.Error("the driver's tool shadowed the page tool")
	}
	if p.PageSize() != 2 {
		t.Errorf("PageSize() = %d", p.PageSize())
	}
}

func TestDetailLoading(t *testing.T) {
	a := newFake("a", "short", "long", "accents")
	a.tools[1].Description = strings.Repeat("a", 30)
	a.tools[2].Description = strings.Repeat("é", 30)
	a.tools[0].Description = "exactly ten"[:10]
	o := build(t, orchestrator.Pipeline(orchestrator.DetailLoading(10)), "a", a)
	tools, err := o.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range tools {
		got[tool.Name] = tool.Description
	}
	want := map[string]string{
		"short":                  "exactly te",
		"long":                   "aaaaaaa...",
		"accents":                "ééééééé...",
		orchestrator.DetailsTool: "Returns the full description and the parameters of a tool.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("descriptions (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	res, err := o.ExecuteTool(ctx, orchestrator.DetailsTool, map[string]any{"name": "accents"})
	if err != nil {
		t.Fatal(err)
	}
	wantRes := map[string]any{
		"name":        "accents",
		"description": strings.Repeat("é", 30),
		"parameters":  mcs.ToolSchema(a.tools[2]),
	}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	for _, args := range []map[string]any{nil, {"name": 3}, {"name": ""}} {
		if _, err := o.ExecuteTool(ctx, orchestrator.DetailsTool, args); err == nil || !strings.Contains(err.Error(), `argument "name"`) {
			t.Errorf("details with %v: %v", args, err)
		}
	}
	if _, err := o.ExecuteTool(ctx, orchestrator.DetailsTool, map[string]any{"name": "nope"}); !errors.Is(err, mcs.ErrUnknownTool) {
		t.Errorf("details of an unknown tool: %v", err)
	}
	// Through the model: a call by the listed name works.
	if resp := process(t, o, "long"); !resp.CallExecuted {
		t.Errorf("response %+v", resp)
	}
	// Empty listing: no details tool.
	if diff := cmp.Diff([]string{}, toolNames(t, orchestrator.New(orchestrator.Pipeline(orchestrator.DetailLoading(10))))); diff != "" {
		t.Errorf("tools of an empty orchestrator (-want +got):\n%s", diff)
	}
}

func TestConstructorsPanicOnProgrammingErrors(t *testing.T) {
	for name, f := range map[string]func(){
		"Pagination(0)":    func() { orchestrator.Pagination(0) },
		"DetailLoading(3)": func() { orchestrator.DetailLoading(3) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// upper is a user-written layer: it exposes every tool in upper case and
// contributes an instruction.
type upper struct{}

func (upper) ListTools(ctx context.Context, drivers []orchestrator.Entry, inner orchestrator.Strategy) ([]mcs.Tool, error) {
	tools, err := inner.ListTools(ctx, drivers)
	out := make([]mcs.Tool, len(tools))
	for i, t := range tools {
		t.Name = strings.ToUpper(t.Name)
		out[i] = t
	}
	return out, err
}

func (upper) ExecuteTool(ctx context.Context, drivers []orchestrator.Entry, name string, args map[string]any, inner orchestrator.Strategy) (any, error) {
	return inner.ExecuteTool(ctx, drivers, strings.ToLower(name), args)
}

func (upper) Instructions(context.Context) string { return "Tool names are in upper case." }

func TestCustomLayer(t *testing.T) {
	broken := newFake("broken", "x")
	o := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), upper{}), "a", newFake("a", "search"), "broken", broken)
	broken.setListErr(errors.New("down"))
	o.Refresh()
	// A partial listing passes through the custom layer.
	if diff := cmp.Diff([]string{"A__SEARCH"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a:search"}, results(process(t, o, "A__SEARCH"))); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	msg, err := o.SystemMessage(context.Background(), "")
	if err != nil || !strings.HasSuffix(msg, "\n\nTool names are in upper case.") {
		t.Errorf("system message %q, %v", msg, err)
	}
}

func TestFlatDirectly(t *testing.T) {
	// Used without an orchestrator, Flat reports failed drivers and lists first.
	f := orchestrator.Flat()
	bad := newFake("bad", "x")
	bad.setListErr(errors.New("nope"))
	drivers := []orchestrator.Entry{{Label: "a", Driver: newFake("a", "s")}, {Label: "bad", Driver: bad}, {Label: "c", Driver: newFake("c", "s", "u")}}
	got, err := f.ExecuteTool(context.Background(), drivers, "u", nil)
	if err != nil || got != "c:u" {
		t.Errorf("ExecuteTool before listing = %v, %v", got, err)
	}
	tools, err := f.ListTools(context.Background(), drivers)
	var le *orchestrator.ListError
	if !errors.As(err, &le) || le.Label != "bad" {
		t.Errorf("ListTools error %v", err)
	}
	if diff := cmp.Diff([]string{"s", "s", "u"}, names(tools)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if _, err := f.ExecuteTool(context.Background(), drivers, "x", nil); !errors.Is(err, mcs.ErrUnknownTool) {
		t.Errorf("ExecuteTool(x) = %v", err)
	}
	panicky := []orchestrator.Entry{{Label: "p", Driver: &panicList{}}}
	if _, err := f.ListTools(context.Background(), panicky); !errors.As(err, &le) || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("ListTools of a panicking driver: %v", err)
	}
}

type panicList struct{ fake }

func (*panicList) ListTools(context.Context) ([]mcs.Tool, error) { panic("bad driver") }

func TestPaginationConcurrentTurns(t *testing.T) {
	p := orchestrator.Pagination(3)
	var tools []string
	for i := range 10 {
		tools = append(tools, fmt.Sprintf("t%d", i))
	}
	o := build(t, orchestrator.Pipeline(p), "a", newFake("a", tools...))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			turn := orchestrator.NextPageTool
			if w%2 == 1 {
				turn = orchestrator.PrevPageTool
			}
			for range 50 {
				if resp := process(t, o, turn); !resp.CallExecuted {
					t.Errorf("%s: %+v", turn, resp)
					return
				}
				if _, err := o.SystemMessage(context.Background(), ""); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Wherever it stopped, the page is on the grid and the listing matches it.
	page, pages := p.Page()
	got := toolNames(t, o)
	lo := (page - 1) * 3
	want := slices.Clone(tools[lo:min(lo+3, len(tools))])
	if page < pages {
		want = append(want, orchestrator.NextPageTool)
	}
	if page > 1 {
		want = append(want, orchestrator.PrevPageTool)
	}
	if pages != 4 || page < 1 || page > 4 {
		t.Fatalf("Page() = %d, %d", page, pages)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools on page %d (-want +got):\n%s", page, diff)
	}
}

func TestDetailLoadingCutIsExactlyMaxLong(t *testing.T) {
	for _, max := range []int{4, 5, 12} {
		for _, n := range []int{0, 1, max - 1, max, max + 1, 3 * max} {
			for _, r := range []string{"a", "ß", "語"} {
				t.Run(fmt.Sprintf("max %d, %d×%s", max, n, r), func(t *testing.T) {
					desc := strings.Repeat(r, n)
					a := &fake{name: "a", tools: []mcs.Tool{
						{Name: "described", Title: "T", Description: desc},
						{Name: "titled", Title: desc},
					}}
					if n == 0 {
						a.tools = a.tools[:1]
						a.tools[0].Description = ""
					}
					o := build(t, orchestrator.Pipeline(orchestrator.DetailLoading(max)), "a", a)
					tools, err := o.ListTools(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					for _, tool := range tools[:len(tools)-1] {
						got := tool.Summary()
						if n == 0 {
							got = tool.Description
						}
						wantLen := min(n, max)
						if c := utf8.RuneCountInString(got); c != wantLen {
							t.Errorf("%s: %q has %d characters, want %d", tool.Name, got, c, wantLen)
						}
						if cut := strings.HasSuffix(got, "..."); cut != (n > max) {
							t.Errorf("%s: %q ends in \"...\": %v, want %v", tool.Name, got, cut, n > max)
						}
						if n > max && !strings.HasPrefix(desc, strings.TrimSuffix(got, "...")) {
							t.Errorf("%s: %q is not a prefix of the description", tool.Name, got)
						}
					}
					if d := tools[0].Description; n > 0 && n <= max && d != desc {
						t.Errorf("short description changed to %q", d)
					}
				})
			}
		}
	}
}

func TestDetailLoadingOutsidePaginationOnEveryPage(t *testing.T) {
	a := newFake("a", "t0", "t1", "t2", "t3", "t4")
	o := build(t, orchestrator.Pipeline(orchestrator.Pagination(2), orchestrator.DetailLoading(10)), "a", a)
	for page, want := range [][]string{
		{"t0", "t1", orchestrator.NextPageTool},
		{"t2", "t3", orchestrator.NextPageTool, orchestrator.PrevPageTool},
		{"t4", orchestrator.PrevPageTool},
	} {
		want = append(want, orchestrator.DetailsTool)
		if diff := cmp.Diff(want, toolNames(t, o)); diff != "" {
			t.Errorf("page %d tools (-want +got):\n%s", page+1, diff)
		}
		resp := o.ProcessLLMResponse(context.Background(), textCall(t, orchestrator.DetailsTool, map[string]any{"name": want[0]}))
		if !resp.CallExecuted || resp.Calls[0].Result.(map[string]any)["description"] != want[0]+" of a" {
			t.Errorf("page %d: details of %s: %+v", page+1, want[0], resp)
		}
		process(t, o, orchestrator.NextPageTool)
	}
}

func TestPaginationClampInAnyListingInvalidatesTheCache(t *testing.T) {
	p := orchestrator.Pagination(2)
	a := newFake("a", "t0", "t1", "t2", "t3", "t4")
	o := build(t, orchestrator.Pipeline(p, orchestrator.DetailLoading(10)), "a", a)
	process(t, o, orchestrator.NextPageTool)
	process(t, o, orchestrator.NextPageTool) // page 3: t4
	if diff := cmp.Diff([]string{"t4", orchestrator.PrevPageTool, orchestrator.DetailsTool}, toolNames(t, o)); diff != "" {
		t.Fatalf("tools on page 3 (-want +got):\n%s", diff)
	}
	// The driver shrinks without a Refresh; a details call lists through the
	// paginator, which clamps the page to the new last one.
	a.setTools("t0", "t1")
	v := p.ToolsVersion()
	if _, err := o.ExecuteTool(context.Background(), orchestrator.DetailsTool, map[string]any{"name": "t0"}); err != nil {
		t.Fatal(err)
	}
	if page, pages := p.Page(); page != 1 || pages != 1 {
		t.Fatalf("Page() = %d, %d", page, pages)
	}
	if p.ToolsVersion() <= v {
		t.Errorf("the page moved but ToolsVersion stayed at %d", v)
	}
	if diff := cmp.Diff([]string{"t0", "t1", orchestrator.DetailsTool}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}
