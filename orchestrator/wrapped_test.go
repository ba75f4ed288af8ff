package orchestrator_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

type noteIn struct {
	Title string `json:"title"`
}

// A tool table wrapped in a BaseDriver, to give it middleware of its own, stays
// current in an orchestrator: a tool added to the table after registration is
// listed and runs, through the wrapper's middleware, without a Refresh.
func TestWrappedTableListsToolsAddedAfterRegistration(t *testing.T) {
	note := func(_ context.Context, in noteIn) (string, error) { return "note " + in.Title, nil }
	table := tools.New(mcs.Meta{ID: "test/notes", Name: "Notes", Version: "1.0.0"})
	tools.Add(table, "read_note", "Returns a note.", note)
	rec := &recorder{}
	o := build(t, nil, "notes", mcs.NewBaseDriver(table, mcs.WithMiddleware(rec)))
	if diff := cmp.Diff([]string{"read_note"}, toolNames(t, o)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	v := o.ToolsVersion()

	tools.Add(table, "write_note", "Writes a note.", note)
	if o.ToolsVersion() <= v {
		t.Errorf("ToolsVersion did not increase after tools.Add: %d -> %d", v, o.ToolsVersion())
	}
	if diff := cmp.Diff([]string{"read_note", "write_note"}, toolNames(t, o)); diff != "" {
		t.Errorf("tools after tools.Add (-want +got):\n%s", diff)
	}
	resp := o.ProcessLLMResponse(context.Background(), textCall(t, "write_note", map[string]any{"title": "a"}))
	if diff := cmp.Diff([]string{"note a"}, results(resp)); diff != "" {
		t.Errorf("results of the new tool (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"write_note"}, rec.seen()); diff != "" {
		t.Errorf("the wrapper's middleware saw (-want +got):\n%s", diff)
	}
}

// A nested orchestrator wrapped in a BaseDriver keeps the outer one current,
// and a wrapped driver without a version is cached as it is unwrapped: until
// the outer listing is made again for another reason.
func TestWrappedDriversInAnOrchestrator(t *testing.T) {
	inner := build(t, nil, "a", newFake("a", "one"))
	plain := newFake("p", "p1")
	outer := build(t, nil, "in", mcs.NewBaseDriver(inner), "p", mcs.NewBaseDriver(plain))
	if _, ok := mcs.ToolsVersion(mcs.NewBaseDriver(inner)); !ok {
		t.Error("a wrapped orchestrator has no version")
	}
	if _, ok := mcs.ToolsVersion(mcs.NewBaseDriver(plain)); ok {
		t.Error("a wrapped driver without a version claims one")
	}
	if diff := cmp.Diff([]string{"in__one", "p__p1"}, toolNames(t, outer)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	plain.setTools("p1", "p2")
	if diff := cmp.Diff([]string{"in__one", "p__p1"}, toolNames(t, outer)); diff != "" {
		t.Errorf("tools after an unversioned change (-want +got):\n%s", diff)
	}
	if err := inner.AddDriver("b", newFake("b", "two")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"in__a__one", "in__b__two", "p__p1", "p__p2"}, toolNames(t, outer)); diff != "" {
		t.Errorf("tools after the nested change (-want +got):\n%s", diff)
	}
}
