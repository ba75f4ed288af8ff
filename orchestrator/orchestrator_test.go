package orchestrator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

func TestNewDefaultStrategyIsNamespacing(t *testing.T) {
	o := build(t, nil, "crm", newFake("crm", "list_contacts"), "billing", newFake("billing", "list_invoices"))
	want := []string{"crm__list_contacts", "billing__list_invoices"}
	if diff := cmp.Diff(want, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if o.Strategy() == nil {
		t.Error("Strategy() = nil")
	}
}

func TestMetaIsOwnIdentity(t *testing.T) {
	o := build(t, nil, "crm", newFake("crm", "a"), "h", healthy{newFake("h", "b"), status(mcs.HealthOK, "")})
	got := o.Meta()
	want := mcs.Meta{
		ID:            orchestrator.ID,
		Name:          "Orchestrator",
		Version:       "0.1.0",
		SupportedLLMs: []string{"*"},
		Capabilities: []mcs.Capability{
			mcs.CapabilityStandalone, mcs.CapabilityOrchestratable, mcs.CapabilityNativeTools,
			mcs.CapabilityStreaming, mcs.CapabilityToolMiddleware, mcs.CapabilityHealthcheck,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Meta (-want +got):\n%s", diff)
	}
	// Middleware is configuration, not identity.
	o2 := orchestrator.New(nil, mcs.WithMiddleware(&recorder{}))
	if diff := cmp.Diff(want, o2.Meta()); diff != "" {
		t.Errorf("Meta with middleware (-want +got):\n%s", diff)
	}
}

func TestAddDriverRejects(t *testing.T) {
	o := build(t, nil, "crm", newFake("crm", "a"))
	inner := orchestrator.New(nil)
	if err := inner.AddDriver("outer", o); err != nil {
		t.Fatal(err)
	}
	var nilFake *fake
	tests := []struct {
		name  string
		label string
		d     mcs.ToolDriver
		want  error // nil: any error
	}{
		{"empty label", "", newFake("x", "a"), orchestrator.ErrInvalidLabel},
		{"label too long", strings.Repeat("a", 33), newFake("x", "a"), orchestrator.ErrInvalidLabel},
		{"underscore in label", "a_b", newFake("x", "a"), orchestrator.ErrInvalidLabel},
		{"space in label", "a b", newFake("x", "a"), orchestrator.ErrInvalidLabel},
		{"non-ASCII label", "caf\u00e9", newFake("x", "a"), orchestrator.ErrInvalidLabel},
		{"label in use", "crm", newFake("x", "a"), orchestrator.ErrLabelInUse},
		{"nil driver", "x", nil, nil},
		{"typed nil driver", "x", nilFake, nil},
		{"itself", "self", o, orchestrator.ErrCycle},
		{"a container of itself", "loop", inner, orchestrator.ErrCycle},
		{"tool name with a dot", "x", newFake("x", "a.b"), orchestrator.ErrInvalidName},
		{"tool name too long by itself", "x", newFake("x", strings.Repeat("t", 65)), orchestrator.ErrInvalidName},
		{"tool without description", "x", &bare{}, mcs.ErrInvalidTool},
		{"driver that cannot list", "x", &fake{name: "x", listErr: errors.New("spec unreachable")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := o.AddDriver(tt.label, tt.d)
			if err == nil {
				t.Fatal("AddDriver succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("AddDriver error %v, want %v", err, tt.want)
			}
			if diff := cmp.Diff([]string{"crm"}, o.Labels()); diff != "" {
				t.Errorf("labels changed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"a"}, toolNames(t, o)); diff != "" {
				t.Errorf("tools changed (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("list error names the label", func(t *testing.T) {
		err := o.AddDriver("x", &fake{name: "x", listErr: errors.New("spec unreachable")})
		var le *orchestrator.ListError
		if !errors.As(err, &le) || le.Label != "x" || !strings.Contains(err.Error(), "spec unreachable") {
			t.Errorf("error %v: want a *ListError for label x", err)
		}
	})
}

// bare lists a tool with neither title nor description.
type bare struct{ fake }

func (*bare) ListTools(context.Context) ([]mcs.Tool, error) { return []mcs.Tool{{Name: "t"}}, nil }

func TestAddDriverLongLabelShortensNames(t *testing.T) {
	// One driver: names are unchanged. A second driver prefixes them with a
	// 32-character label beyond 64 characters: the namespaced names are shortened
	// with a stable hash, stay unique and route back to the driver's own names.
	long := strings.Repeat("l", 32)
	a := newFake("a", strings.Repeat("t", 31), strings.Repeat("t", 30)+"u")
	o := build(t, nil, long, a)
	if err := o.AddDriver("b", newFake("b", "x")); err != nil {
		t.Fatalf("AddDriver: %v", err)
	}
	got := toolNames(t, o)
	if len(got) != 3 || got[0] == got[1] || got[2] != "b__x" {
		t.Fatalf("tools = %q", got)
	}
	for _, n := range got[:2] {
		if len(n) != 64 || !strings.HasPrefix(n, long+"__ttt") {
			t.Errorf("name %q (%d): want 64 characters starting with the label", n, len(n))
		}
	}
	if diff := cmp.Diff(got, toolNames(t, build(t, nil, long, newFake("a", strings.Repeat("t", 31), strings.Repeat("t", 30)+"u"), "b", newFake("b", "x")))); diff != "" {
		t.Errorf("names are not stable (-first +second):\n%s", diff)
	}
	resp := process(t, o, got[1])
	if diff := cmp.Diff([]string{"a:" + strings.Repeat("t", 30) + "u"}, results(resp)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	// 32 + 2 + 30 = 64 is not shortened.
	o2 := build(t, nil, long, newFake("a", strings.Repeat("t", 30)), "b", newFake("b", "x"))
	if diff := cmp.Diff([]string{long + "__" + strings.Repeat("t", 30), "b__x"}, toolNames(t, o2)); diff != "" {
		t.Errorf("64-character names (-want +got):\n%s", diff)
	}
}

func TestAddDriversIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	o := build(t, orchestrator.Pipeline(orchestrator.RejectConflicts()), "a", newFake("a", "s"))
	down := newFake("down", "y")
	down.setListErr(errors.New("timeout"))
	for _, tc := range []struct {
		name    string
		entries []orchestrator.Entry
		want    error  // nil: see text
		text    string // in the error
	}{
		{"label twice in the batch", []orchestrator.Entry{{Label: "b", Driver: newFake("b", "x")}, {Label: "b", Driver: newFake("b", "y")}}, orchestrator.ErrLabelInUse, ""},
		{"one label in use", []orchestrator.Entry{{Label: "b", Driver: newFake("b", "x")}, {Label: "a", Driver: newFake("a", "y")}}, orchestrator.ErrLabelInUse, ""},
		{"one invalid label", []orchestrator.Entry{{Label: "b", Driver: newFake("b", "x")}, {Label: "c_", Driver: newFake("c", "y")}}, orchestrator.ErrInvalidLabel, ""},
		{"one cannot list", []orchestrator.Entry{{Label: "b", Driver: newFake("b", "x")}, {Label: "down", Driver: down}}, nil, `driver "down" cannot list its tools: timeout`},
		{"conflict inside the batch", []orchestrator.Entry{{Label: "b", Driver: newFake("b", "x")}, {Label: "c", Driver: newFake("c", "x")}}, nil, `tool name "x" would be exposed more than once (listed by b, c)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := o.AddDrivers(ctx, tc.entries...)
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("AddDrivers error %v, want %v", err, tc.want)
			}
			if diff := cmp.Diff([]string{"a"}, o.Labels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
	if err := o.AddDrivers(ctx, orchestrator.Entry{Label: "b", Driver: newFake("b", "x")}, orchestrator.Entry{Label: "c", Driver: newFake("c", "y")}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, o.Labels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if err := o.AddDrivers(ctx); err != nil {
		t.Errorf("AddDrivers with nothing: %v", err)
	}
}

func TestLabelsAndRemoveDriver(t *testing.T) {
	a, b, c := newFake("a", "t"), newFake("b", "t"), newFake("c", "t")
	o := build(t, nil, "a", a, "b", b, "c", c)
	if diff := cmp.Diff([]string{"a", "b", "c"}, o.Labels()); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
	d, ok := o.RemoveDriver("b")
	if !ok || d != b {
		t.Errorf("RemoveDriver(b) = %v, %v", d, ok)
	}
	if _, ok := o.RemoveDriver("b"); ok {
		t.Error("second RemoveDriver(b) reported a driver")
	}
	if diff := cmp.Diff([]string{"a", "c"}, o.Labels()); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a__t", "c__t"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	// Down to one driver, names lose their prefix; the label is free again.
	o.RemoveDriver("a")
	if diff := cmp.Diff([]string{"t"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if err := o.AddDriver("b", b); err != nil {
		t.Errorf("re-adding b: %v", err)
	}
	if diff := cmp.Diff([]string{"c", "b"}, o.Labels()); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
}

func TestDispatchRules(t *testing.T) {
	crm, billing := newFake("crm", "list_contacts"), newFake("billing", "list_invoices")
	o := build(t, nil, "crm", crm, "billing", billing)
	ctx := context.Background()

	t.Run("listed name runs", func(t *testing.T) {
		resp := process(t, o, "crm__list_contacts")
		if !resp.CallExecuted || resp.CallFailed {
			t.Fatalf("response %+v", resp)
		}
		if diff := cmp.Diff([]string{"crm:list_contacts"}, results(resp)); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		if resp.Calls[0].Name != "crm__list_contacts" {
			t.Errorf("record name %q", resp.Calls[0].Name)
		}
	})
	for _, name := range []string{"list_contacts", "crm__nope", "other__list_contacts", "weather"} {
		t.Run("unlisted "+name+" is not owned", func(t *testing.T) {
			resp := process(t, o, name)
			if !notOwned(resp, name) {
				t.Errorf("response %+v, want no call of the driver and %q foreign", resp, name)
			}
		})
	}
	t.Run("ExecuteTool with an unknown name names it", func(t *testing.T) {
		_, err := o.ExecuteTool(ctx, "crm__nope", nil)
		if !errors.Is(err, mcs.ErrUnknownTool) || !strings.Contains(err.Error(), `"crm__nope"`) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("ExecuteTool routes", func(t *testing.T) {
		got, err := o.ExecuteTool(ctx, "billing__list_invoices", map[string]any{"id": "1"})
		if err != nil || got != "billing:list_invoices" {
			t.Errorf("ExecuteTool = %v, %v", got, err)
		}
	})
}

func TestMiddlewareSeesExposedNamesAndInnerMiddlewareRuns(t *testing.T) {
	outer, inner := &recorder{}, &recorder{}
	crm := mcs.NewBaseDriver(newFake("crm", "list_contacts"), mcs.WithMiddleware(inner))
	o := orchestrator.New(nil, mcs.WithMiddleware(outer))
	if err := o.AddDriver("crm", crm); err != nil {
		t.Fatal(err)
	}
	if err := o.AddDriver("billing", newFake("billing", "list_invoices")); err != nil {
		t.Fatal(err)
	}
	resp := process(t, o, "crm__list_contacts")
	if !resp.CallExecuted {
		t.Fatalf("response %+v", resp)
	}
	if diff := cmp.Diff([]string{"crm__list_contacts"}, outer.seen()); diff != "" {
		t.Errorf("orchestrator middleware (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"list_contacts"}, inner.seen()); diff != "" {
		t.Errorf("driver middleware (-want +got):\n%s", diff)
	}
}

func TestFailingDriverIsLeftOutLoggedAndReported(t *testing.T) {
	broken := newFake("broken", "x")
	broken.setListErr(errors.New("connection refused"))
	good := newFake("good", "y")
	// Registered while healthy, then it breaks.
	b2 := newFake("flaky", "z")
	o := build(t, nil, "good", good, "flaky", b2)
	var logs bytes.Buffer
	o.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	b2.setListErr(errors.New("connection refused"))
	o.Refresh()

	if diff := cmp.Diff([]string{"good__y"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if resp := process(t, o, "good__y"); !resp.CallExecuted {
		t.Errorf("the healthy driver stopped serving: %+v", resp)
	}
	if !strings.Contains(logs.String(), "label=flaky") || !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("log does not name the failed label: %q", logs.String())
	}
	h := o.Healthcheck(context.Background())
	if h.Status != mcs.HealthError || !strings.Contains(h.Detail, "flaky") || !strings.Contains(h.Detail, "connection refused") {
		t.Errorf("Healthcheck = %+v", h)
	}
	// The listing is cached: no log line per call.
	n := strings.Count(logs.String(), "\n")
	process(t, o, "good__y")
	if m := strings.Count(logs.String(), "\n"); m != n {
		t.Errorf("log grew from %d to %d lines on a cached call", n, m)
	}
	// Recovery shows after Refresh.
	b2.setListErr(nil)
	o.Refresh()
	if diff := cmp.Diff([]string{"good__y", "flaky__z"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools after recovery (-want +got):\n%s", diff)
	}
	if h := o.Healthcheck(context.Background()); h.Status != mcs.HealthOK {
		t.Errorf("Healthcheck after recovery = %+v", h)
	}
}

func TestPanicInListToolsKeepsTheStackOutOfMessages(t *testing.T) {
	p := &panicOnList{fake: newFake("p", "t")}
	o := build(t, nil, "ok", newFake("ok", "u"), "p", p)
	var logs bytes.Buffer
	o.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	p.panics.Store(true)
	o.Refresh()
	want := mcs.HealthResult{Status: mcs.HealthError, Detail: "p: cannot list its tools: ListTools panicked: parser bug"}
	if diff := cmp.Diff(want, o.Healthcheck(context.Background())); diff != "" {
		t.Errorf("Healthcheck (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), "label=p") || !strings.Contains(logs.String(), "stack=") {
		t.Errorf("the log lacks the label or the stack: %q", logs.String())
	}
	if diff := cmp.Diff([]string{"ok:u"}, results(process(t, o, "ok__u"))); diff != "" {
		t.Errorf("the other driver (-want +got):\n%s", diff)
	}
}

// panicOnList is a fake whose ListTools panics once panics is set.
type panicOnList struct {
	*fake
	panics atomic.Bool
}

func (p *panicOnList) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	if p.panics.Load() {
		panic("parser bug")
	}
	return p.fake.ListTools(ctx)
}

func TestRefreshRelists(t *testing.T) {
	a := newFake("a", "one")
	o := build(t, nil, "a", a)
	if diff := cmp.Diff([]string{"one"}, toolNames(t, o)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	a.setTools("one", "two")
	if diff := cmp.Diff([]string{"one"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools before Refresh (-want +got):\n%s", diff)
	}
	if resp := process(t, o, "two"); resp.CallExecuted {
		t.Error("an unlisted tool ran before Refresh")
	}
	v := o.ToolsVersion()
	o.Refresh()
	if o.ToolsVersion() <= v {
		t.Errorf("ToolsVersion did not increase: %d -> %d", v, o.ToolsVersion())
	}
	if diff := cmp.Diff([]string{"one", "two"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools after Refresh (-want +got):\n%s", diff)
	}
	if resp := process(t, o, "two"); !resp.CallExecuted {
		t.Errorf("response %+v", resp)
	}
}

func TestThreeLevelsOfNesting(t *testing.T) {
	leafMW := &recorder{}
	lowMW, midMW, topMW := &recorder{}, &recorder{}, &recorder{}
	a := mcs.NewBaseDriver(newFake("a", "read"), mcs.WithMiddleware(leafMW))
	low := orchestrator.New(nil, mcs.WithMiddleware(lowMW))
	mid := orchestrator.New(nil, mcs.WithMiddleware(midMW))
	top := orchestrator.New(nil, mcs.WithMiddleware(topMW))
	for _, step := range []struct {
		o     *orchestrator.Orchestrator
		label string
		d     mcs.ToolDriver
	}{
		{low, "a", a}, {low, "b", newFake("b", "read")},
		{mid, "low", low}, {mid, "y", newFake("y", "write")},
		{top, "mid", mid}, {top, "x", newFake("x", "write")},
	} {
		if err := step.o.AddDriver(step.label, step.d); err != nil {
			t.Fatalf("AddDriver(%q): %v", step.label, err)
		}
	}
	tools, err := top.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []mcs.Tool{
		{Name: "mid__low__a__read", Description: "[mid] [low] [a] read of a"},
		{Name: "mid__low__b__read", Description: "[mid] [low] [b] read of b"},
		{Name: "mid__y__write", Description: "[mid] [y] write of y"},
		{Name: "x__write", Description: "[x] write of x"},
	}
	if diff := cmp.Diff(want, tools, cmp.Transformer("noParams", func(t mcs.Tool) mcs.Tool { t.Parameters = nil; return t })); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	resp := process(t, top, "mid__low__a__read")
	if diff := cmp.Diff([]string{"a:read"}, results(resp)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		name string
		r    *recorder
		want string
	}{
		{"top", topMW, "mid__low__a__read"}, {"mid", midMW, "low__a__read"},
		{"low", lowMW, "a__read"}, {"leaf", leafMW, "read"},
	} {
		if diff := cmp.Diff([]string{c.want}, c.r.seen()); diff != "" {
			t.Errorf("%s middleware (-want +got):\n%s", c.name, diff)
		}
	}

	// A change at the bottom shows at the top without Refresh.
	if err := low.AddDriver("c", newFake("c", "read")); err != nil {
		t.Fatal(err)
	}
	if resp := process(t, top, "mid__low__c__read"); !resp.CallExecuted {
		t.Errorf("new bottom driver not reachable from the top: %+v", resp)
	}
	low.RemoveDriver("a")
	// Its tool is answered as unknown (the name was just retired), never run.
	if resp := process(t, top, "mid__low__a__read"); resp.CallExecuted || len(resp.Calls) != 1 || !errors.Is(resp.Calls[0].Err, mcs.ErrUnknownTool) {
		t.Errorf("removed bottom driver's tool: %+v", resp)
	}

	// Health cascades and names the path.
	if err := low.AddDriver("sick", healthy{newFake("sick", "z"), status(mcs.HealthWarning, "disk 91% full")}); err != nil {
		t.Fatal(err)
	}
	h := top.Healthcheck(context.Background())
	want2 := mcs.HealthResult{Status: mcs.HealthWarning, Detail: "mid: low: sick: disk 91% full"}
	if diff := cmp.Diff(want2, h); diff != "" {
		t.Errorf("Healthcheck (-want +got):\n%s", diff)
	}
}

func TestConcurrentAddRemoveWhileProcessing(t *testing.T) {
	stable := newFake("stable", "ping")
	o := build(t, nil, "stable", stable, "anchor", newFake("anchor", "pong"))
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range rounds {
				resp := process(t, o, "stable__ping")
				if got := results(resp); !resp.CallExecuted || len(got) != 1 || got[0] != "stable:ping" {
					errs <- fmt.Errorf("worker %d round %d: %+v", w, i, resp)
					return
				}
				// A churning driver's tool is served, answered as unknown (its
				// name was just retired) or not owned: a call finishes against the
				// set it started with, so it never fails because the driver went
				// away meanwhile.
				resp = process(t, o, "churn__tick")
				served := resp.CallExecuted && !resp.CallFailed && len(resp.Calls) == 1 && resp.Calls[0].Result == "churn:tick"
				unknown := resp.CallFailed && len(resp.Calls) == 1 && errors.Is(resp.Calls[0].Err, mcs.ErrUnknownTool)
				if !served && !unknown && !notOwned(resp, "churn__tick") {
					errs <- fmt.Errorf("worker %d round %d: churn call %+v", w, i, resp)
					return
				}
			}
		}()
	}
	close(start)
	for i := range 100 {
		if err := o.AddDriver("churn", newFake("churn", "tick")); err != nil {
			t.Errorf("AddDriver round %d: %v", i, err)
		}
		if i%10 == 0 {
			o.Refresh()
		}
		if _, ok := o.RemoveDriver("churn"); !ok {
			t.Errorf("RemoveDriver round %d failed", i)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if diff := cmp.Diff([]string{"stable", "anchor"}, o.Labels()); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
}

func TestInstructionsAppendToSystemMessage(t *testing.T) {
	var tools []string
	for i := range 45 {
		tools = append(tools, fmt.Sprintf("t%02d", i))
	}
	o := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.Pagination(20), orchestrator.DetailLoading(20)), "a", newFake("a", tools...))
	msg, err := o.SystemMessage(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	// Innermost layer first.
	wantTail := "\n\nYou see tools 1–20 of 45 (page 1/3). Call tools__next_page to see the other tools; only the tools on the current page can be called.\n" +
		"Tool descriptions that end in \"...\" are shortened; call get_tool_details with the tool's name for the full description and parameters."
	if !strings.HasSuffix(msg, wantTail) {
		t.Errorf("system message does not end with the instructions:\n%s", msg)
	}
	native, err := orchestrator.New(orchestrator.Pipeline(orchestrator.Pagination(1)), mcs.WithNativeTools(func(string) bool { return true })).NativeToolContext(context.Background(), "m")
	if err != nil || native.Tools == nil {
		t.Fatalf("NativeToolContext = %+v, %v", native, err)
	}
}

func TestNativeToolsCarryExposedNames(t *testing.T) {
	o := orchestrator.New(nil, mcs.WithNativeTools(func(string) bool { return true }))
	for _, l := range []string{"crm", "billing"} {
		if err := o.AddDriver(l, newFake(l, "list")); err != nil {
			t.Fatal(err)
		}
	}
	nc, err := o.NativeToolContext(context.Background(), "gpt")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range nc.Tools {
		got = append(got, tool.Name)
	}
	if diff := cmp.Diff([]string{"crm__list", "billing__list"}, got); diff != "" {
		t.Errorf("native tool names (-want +got):\n%s", diff)
	}
	resp := o.ProcessLLMResponse(context.Background(), map[string]any{
		"role": "assistant",
		"tool_calls": []any{map[string]any{
			"id": "c1", "type": "function",
			"function": map[string]any{"name": "billing__list", "arguments": "{}"},
		}},
	})
	if diff := cmp.Diff([]string{"billing:list"}, results(resp)); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestStreamingDispatch(t *testing.T) {
	o := build(t, nil, "crm", newFake("crm", "list"), "billing", newFake("billing", "list"))
	buf := o.NewStreamBuffer()
	call := textCall(t, "crm__list", nil)
	var last mcs.Response
	for i := 0; i < len(call); i += 7 {
		buf.Add(call[i:min(i+7, len(call))])
		if r := o.ProcessStream(context.Background(), buf); r.CallExecuted {
			last = r
		}
	}
	if diff := cmp.Diff([]string{"crm:list"}, results(last)); diff != "" {
		t.Errorf("streamed results (-want +got):\n%s", diff)
	}
}

func TestStrategyErrorFailsTheListing(t *testing.T) {
	o := orchestrator.New(failing{})
	if _, err := o.ListTools(context.Background()); err == nil || !strings.Contains(err.Error(), "layer exploded") {
		t.Errorf("ListTools error %v", err)
	}
	if resp := process(t, o, "x"); resp.CallExecuted || resp.CallFailed {
		t.Errorf("response %+v", resp)
	}
	if h := o.Healthcheck(context.Background()); h.Status != mcs.HealthError || !strings.Contains(h.Detail, "layer exploded") {
		t.Errorf("Healthcheck = %+v", h)
	}
	p := orchestrator.New(orchestrator.Pipeline(panicking{}))
	if _, err := p.ListTools(context.Background()); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("ListTools of a panicking layer: %v", err)
	}
}

type failing struct{}

func (failing) ListTools(context.Context, []orchestrator.Entry) ([]mcs.Tool, error) {
	return nil, errors.New("layer exploded")
}

func (failing) ExecuteTool(context.Context, []orchestrator.Entry, string, map[string]any) (any, error) {
	return nil, errors.New("layer exploded")
}

type panicking struct{}

func (panicking) ListTools(context.Context, []orchestrator.Entry, orchestrator.Strategy) ([]mcs.Tool, error) {
	panic("boom")
}

func (panicking) ExecuteTool(context.Context, []orchestrator.Entry, string, map[string]any, orchestrator.Strategy) (any, error) {
	panic("boom")
}

func (panicking) Instructions(context.Context) string { return "" }

func TestCancelledListingIsNotCached(t *testing.T) {
	gate := &gated{fake: newFake("g", "t"), block: make(chan struct{})}
	o := build(t, orchestrator.Flat(), "g", gate)
	o.Refresh()
	ctx, cancel := context.WithCancel(context.Background())
	gate.arm()
	done := make(chan mcs.Response)
	go func() { done <- o.ProcessLLMResponse(ctx, textCall(t, "t", nil)) }()
	<-gate.entered
	cancel()
	close(gate.block)
	if resp := <-done; resp.CallExecuted {
		t.Errorf("a call ran under a cancelled listing: %+v", resp)
	}
	if resp := process(t, o, "t"); !resp.CallExecuted {
		t.Errorf("the cancelled listing was cached: %+v", resp)
	}
}

// gated blocks ListTools, once armed, until block is closed.
type gated struct {
	*fake
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	block   chan struct{}
}

func (g *gated) arm() {
	g.mu.Lock()
	g.armed, g.entered = true, make(chan struct{})
	g.mu.Unlock()
}

func (g *gated) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	g.mu.Lock()
	armed := g.armed
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(g.entered)
		<-g.block
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return g.fake.ListTools(ctx)
}

func TestInvalidFirstToolIsNotReplacedByALaterOne(t *testing.T) {
	// Under Flat a call by a shared name reaches the first driver; when that
	// driver's tool becomes invalid, the second driver's tool must not be exposed in
	// its place, or the model would see one tool and run another.
	a, b := newFake("a", "search", "other"), newFake("b", "search")
	o := build(t, orchestrator.Flat(), "a", a, "b", b)
	a.mu.Lock()
	a.tools[0].Description = ""
	a.mu.Unlock()
	o.Refresh()
	if diff := cmp.Diff([]string{"other"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if resp := process(t, o, "search"); !notOwned(resp, "search") {
		t.Errorf("the shadowed name was owned: %+v", resp)
	}
	if h := o.Healthcheck(context.Background()); h.Status != mcs.HealthWarning || !strings.Contains(h.Detail, `"search"`) {
		t.Errorf("Healthcheck = %+v", h)
	}
}

func TestNestedLongNameIsShortened(t *testing.T) {
	inner := build(t, nil, "a", newFake("a", "x"), "b", newFake("b", "y"))
	outer := build(t, nil, "inner", inner, "c", newFake("c", "z"))
	// Fine for the inner orchestrator (59 characters), too long once the outer
	// prefixes it (66): shortened, and still callable.
	long := strings.Repeat("n", 56)
	if err := inner.AddDriver("d", newFake("d", long)); err != nil {
		t.Fatal(err)
	}
	got := toolNames(t, outer)
	if len(got) != 4 || !strings.HasPrefix(got[2], "inner__d__nnn") || len(got[2]) != 64 {
		t.Fatalf("tools = %q", got)
	}
	if diff := cmp.Diff([]string{"d:" + long}, results(process(t, outer, got[2]))); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestConcurrentNestedChangesWhileProcessing(t *testing.T) {
	inner := build(t, nil, "stable", newFake("stable", "ping"), "anchor", newFake("anchor", "pong"))
	sw := orchestrator.ToolSwitching()
	outer := build(t, orchestrator.Pipeline(orchestrator.Namespacing(), sw), "inner", inner, "other", newFake("other", "ping"))
	if err := sw.SetActive("inner"); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				resp := process(t, outer, "stable__ping")
				if got := results(resp); !resp.CallExecuted || got[0] != "stable:ping" {
					errs <- fmt.Errorf("worker %d round %d: %+v", w, i, resp)
					return
				}
				_ = outer.Healthcheck(context.Background())
			}
		}()
	}
	for i := range 50 {
		if err := inner.AddDriver("churn", newFake("churn", "tick")); err != nil {
			t.Errorf("AddDriver round %d: %v", i, err)
		}
		_ = sw.SetActive("inner") // a state change that invalidates the cache
		inner.RemoveDriver("churn")
		outer.Refresh()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// gate is a middleware that holds the first call until release is closed.
type gate struct {
	once     sync.Once
	entered  chan struct{}
	released chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}), released: make(chan struct{})} }

func (g *gate) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	g.once.Do(func() {
		close(g.entered)
		<-g.released
	})
	return next(ctx, name, args)
}

func TestCallInFlightFinishesAgainstItsSet(t *testing.T) {
	type call func(o *orchestrator.Orchestrator, name string) []string
	viaReply := func(o *orchestrator.Orchestrator, name string) []string { return results(process(t, o, name)) }
	viaStream := func(o *orchestrator.Orchestrator, name string) []string {
		buf := o.NewStreamBuffer()
		buf.Add(textCall(t, name, nil))
		buf.Finish()
		return results(o.ProcessStream(context.Background(), buf))
	}
	viaExecute := func(o *orchestrator.Orchestrator, name string) []string {
		res, err := o.ExecuteTool(context.Background(), name, nil)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		return []string{fmt.Sprint(res)}
	}
	for _, tc := range []struct {
		name   string
		call   call
		remove string // removed while the call waits in the orchestrator's middleware
		tool   string
		want   string
		after  []string // the tools listed afterwards
	}{
		{"reply, its driver removed", viaReply, "churn", "churn__tick", "churn:tick", []string{"ping"}},
		{"reply, names change from 2 drivers to 1", viaReply, "churn", "stable__ping", "stable:ping", []string{"ping"}},
		{"stream, its driver removed", viaStream, "churn", "churn__tick", "churn:tick", []string{"ping"}},
		{"ExecuteTool, its driver removed", viaExecute, "churn", "churn__tick", "churn:tick", []string{"ping"}},
		{"ExecuteTool, names change from 2 drivers to 1", viaExecute, "churn", "stable__ping", "stable:ping", []string{"ping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate()
			o := orchestrator.New(nil, mcs.WithMiddleware(g))
			for _, l := range []string{"stable", "churn"} {
				tool := map[string]string{"stable": "ping", "churn": "tick"}[l]
				if err := o.AddDriver(l, newFake(l, tool)); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan []string)
			go func() { done <- tc.call(o, tc.tool) }()
			<-g.entered
			if _, ok := o.RemoveDriver(tc.remove); !ok {
				t.Fatal("RemoveDriver failed")
			}
			close(g.released)
			if diff := cmp.Diff([]string{tc.want}, <-done); diff != "" {
				t.Errorf("the call in flight (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.after, toolNames(t, o)); diff != "" {
				t.Errorf("tools afterwards (-want +got):\n%s", diff)
			}
			// A later call for the old name is answered as unknown, loudly.
			if resp := process(t, o, tc.tool); len(resp.Calls) != 1 || !errors.Is(resp.Calls[0].Err, mcs.ErrUnknownTool) || !resp.CallFailed {
				t.Errorf("a call for the old name is not answered as unknown: %+v", resp)
			}
		})
	}
}

func TestStrategyReturnsTheGivenOne(t *testing.T) {
	s := orchestrator.Pipeline(orchestrator.RejectConflicts())
	if got := orchestrator.New(s).Strategy(); got != s {
		t.Errorf("Strategy() = %v, want the strategy given to New", got)
	}
}

func TestAddDriverAcceptsValidLabels(t *testing.T) {
	for _, label := range []string{"a", "Z", "0", "-", "crm-backup", "v2", strings.Repeat("x", 32), "AZaz09-"} {
		t.Run(label, func(t *testing.T) {
			o := orchestrator.New(orchestrator.Flat())
			if err := o.AddDriver(label, newFake("x", "t")); err != nil {
				t.Fatalf("AddDriver(%q): %v", label, err)
			}
			if diff := cmp.Diff([]string{label}, o.Labels()); diff != "" {
				t.Errorf("Labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddDriverRejectsACycleThroughAWrapper(t *testing.T) {
	o := build(t, nil, "a", newFake("a", "t"))
	wrapped := mcs.NewBaseDriver(mcs.NewBaseDriver(o))
	if err := o.AddDriver("self", wrapped); !errors.Is(err, orchestrator.ErrCycle) {
		t.Errorf("AddDriver(wrapped self) = %v, want ErrCycle", err)
	}
	outer := build(t, nil, "inner", mcs.NewBaseDriver(o))
	if err := o.AddDriver("outer", outer); !errors.Is(err, orchestrator.ErrCycle) {
		t.Errorf("AddDriver(container behind a wrapper) = %v, want ErrCycle", err)
	}
	if diff := cmp.Diff([]string{"a"}, o.Labels()); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
}

func TestExecuteToolUnknownNameUnderEveryStrategy(t *testing.T) {
	for name, s := range map[string]func() orchestrator.Strategy{
		"flat":           orchestrator.Flat,
		"namespacing":    func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.Namespacing()) },
		"switching":      func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.ToolSwitching()) },
		"pagination":     func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.Pagination(1)) },
		"detail loading": func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.DetailLoading(10)) },
		"reject":         func() orchestrator.Strategy { return orchestrator.Pipeline(orchestrator.RejectConflicts()) },
		"all layers":     allLayers,
	} {
		for _, drivers := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s, %d drivers", name, drivers), func(t *testing.T) {
				o := orchestrator.New(s())
				for i := range drivers {
					l := fmt.Sprintf("d%d", i)
					if err := o.AddDriver(l, newFake(l, "t"+l)); err != nil {
						t.Fatal(err)
					}
				}
				_, err := o.ExecuteTool(context.Background(), "no_such_tool", nil)
				if !errors.Is(err, mcs.ErrUnknownTool) || !strings.Contains(err.Error(), `"no_such_tool"`) {
					t.Errorf("ExecuteTool error %v, want mcs.ErrUnknownTool naming the tool", err)
				}
				if resp := process(t, o, "no_such_tool"); !notOwned(resp, "no_such_tool") {
					t.Errorf("ProcessLLMResponse = %+v, want no call of the driver and the call foreign", resp)
				}
			})
		}
	}
}

// allLayers is a pipeline of every built-in layer.
func allLayers() orchestrator.Strategy {
	return orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.RejectConflicts(), orchestrator.Pagination(1), orchestrator.DetailLoading(10))
}

// vetting is a user-written Layer that vets registrations: it rejects a proposed set
// that would expose more than max tools, and records what it was shown.
type vetting struct {
	max      int
	mu       sync.Mutex
	proposed [][]string
	exposed  [][]string
}

func (v *vetting) ListTools(ctx context.Context, d []orchestrator.Entry, inner orchestrator.Strategy) ([]mcs.Tool, error) {
	return inner.ListTools(ctx, d)
}

func (v *vetting) ExecuteTool(ctx context.Context, d []orchestrator.Entry, name string, args map[string]any, inner orchestrator.Strategy) (any, error) {
	return inner.ExecuteTool(ctx, d, name, args)
}

func (v *vetting) Instructions(context.Context) string { return "" }

func (v *vetting) CheckRegistration(_ context.Context, proposed []orchestrator.Entry, exposed []mcs.Tool) error {
	var labels []string
	for _, e := range proposed {
		labels = append(labels, e.Label)
	}
	v.mu.Lock()
	v.proposed = append(v.proposed, labels)
	v.exposed = append(v.exposed, names(exposed))
	v.mu.Unlock()
	if len(exposed) > v.max {
		return fmt.Errorf("%d tools are more than %d", len(exposed), v.max)
	}
	return nil
}

func TestCustomRegistrationChecker(t *testing.T) {
	v := &vetting{max: 3}
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing(), v))
	if err := o.AddDriver("a", newFake("a", "x", "y")); err != nil {
		t.Fatal(err)
	}
	err := o.AddDriver("b", newFake("b", "z", "w"))
	if err == nil || !strings.Contains(err.Error(), `add driver "b": 4 tools are more than 3`) {
		t.Errorf("AddDriver(b) error %v", err)
	}
	if diff := cmp.Diff([]string{"a"}, o.Labels()); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x", "y"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	want := struct{ Proposed, Exposed [][]string }{
		Proposed: [][]string{{"a"}, {"a", "b"}},
		Exposed:  [][]string{{"x", "y"}, {"a__x", "a__y", "b__z", "b__w"}},
	}
	v.mu.Lock()
	got := struct{ Proposed, Exposed [][]string }{v.proposed, v.exposed}
	v.mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the checker saw (-want +got):\n%s", diff)
	}
}

func TestNestedLayerStateShowsAtTheTop(t *testing.T) {
	inner := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.Pagination(1)))
	for _, l := range []string{"a", "b"} {
		if err := inner.AddDriver(l, newFake(l, "t")); err != nil {
			t.Fatal(err)
		}
	}
	outer := build(t, nil, "inner", inner, "c", newFake("c", "u"))
	want := []string{"inner__a__t", "inner__tools__next_page", "c__u"}
	if diff := cmp.Diff(want, toolNames(t, outer)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if resp := process(t, outer, "inner__tools__next_page"); !resp.CallExecuted {
		t.Fatalf("turning the inner page: %+v", resp)
	}
	want = []string{"inner__b__t", "inner__tools__prev_page", "c__u"}
	if diff := cmp.Diff(want, toolNames(t, outer)); diff != "" {
		t.Errorf("tools after the inner page turned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b:t"}, results(process(t, outer, "inner__b__t"))); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

// panicky is a driver whose tool panics.
type panicky struct{ fake }

func (*panicky) ExecuteTool(context.Context, string, map[string]any) (any, error) { panic("tool bug") }

func TestPanickingDriverToolIsAFailedCall(t *testing.T) {
	p := &panicky{fake: fake{name: "p"}}
	p.setTools("boom")
	o := build(t, nil, "p", p, "q", newFake("q", "ok"))
	_, err := o.ExecuteTool(context.Background(), "p__boom", nil)
	var pe *mcs.PanicError
	if !errors.As(err, &pe) || pe.Value != "tool bug" {
		t.Errorf("ExecuteTool error %v, want a *mcs.PanicError", err)
	}
	resp := process(t, o, "p__boom")
	if !resp.CallFailed || !errors.As(resp.Calls[0].Err, &pe) {
		t.Errorf("response %+v, want a failed call", resp)
	}
	if diff := cmp.Diff([]string{"q:ok"}, results(process(t, o, "q__ok"))); diff != "" {
		t.Errorf("the other driver after the panic (-want +got):\n%s", diff)
	}
}

// notOwned reports that resp says "no call of this driver was there" and reports
// the one call, named name, as foreign.
func notOwned(resp mcs.Response, name string) bool {
	return resp.Calls == nil && resp.Messages == nil && !resp.CallPending && resp.Unavailable == nil &&
		len(resp.Foreign) == 1 && resp.Foreign[0].Name == name && resp.Format == "text"
}
