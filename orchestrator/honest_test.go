package orchestrator_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// denyAll refuses every call, as a fail-closed consent policy does.
var denyAll = mcs.ToolMiddlewareFunc(func(context.Context, string, map[string]any, mcs.CallNext) (any, error) {
	return "denied", nil
})

// TestNoDoorAroundTheMiddleware: no exported method of *Orchestrator hands out a
// ToolDriver, so its middleware cannot be bypassed; a call through every public
// path is refused.
func TestNoDoorAroundTheMiddleware(t *testing.T) {
	td := reflect.TypeFor[mcs.ToolDriver]()
	typ := reflect.TypeFor[*orchestrator.Orchestrator]()
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if m.Name == "RemoveDriver" {
			continue // hands back the caller's own driver, no longer composed
		}
		for j := range m.Type.NumOut() {
			if out := m.Type.Out(j); out == td || (out.Kind() != reflect.Interface && out.Implements(td)) {
				t.Errorf("(*Orchestrator).%s returns %v: a path around the orchestrator's middleware", m.Name, out)
			}
		}
	}
	f := newFake("crm", "list")
	o := orchestrator.New(nil, mcs.WithMiddleware(denyAll))
	if err := o.AddDriver("crm", f); err != nil {
		t.Fatal(err)
	}
	if got, _ := o.ExecuteTool(context.Background(), "list", nil); got != "denied" {
		t.Errorf("ExecuteTool: %v", got)
	}
	if got := results(process(t, o, "list")); !cmp.Equal(got, []string{"denied"}) {
		t.Errorf("ProcessLLMResponse: %v", got)
	}
	if len(f.executed) != 0 {
		t.Errorf("the tool ran: %v", f.executed)
	}
	// Cycles are still found through a wrapper.
	if err := o.AddDriver("self", mcs.NewBaseDriver(o)); !errors.Is(err, orchestrator.ErrCycle) {
		t.Errorf("wrapped self: %v", err)
	}
	if !o.Wraps(f) || o.Wraps(newFake("x")) {
		t.Error("Wraps is wrong")
	}
}

// TestUnavailableDriverIsVisible: a call shaped like one of a failed driver's calls
// says the driver is unavailable; the others keep working; Healthcheck is ERROR.
func TestUnavailableDriverIsVisible(t *testing.T) {
	bad := newFake("bad", "x")
	bad.setListErr(errors.New("the specification does not load"))
	o := build(t, nil, "good", newFake("good", "y"))
	if err := o.AddDrivers(context.Background()); err != nil {
		t.Fatal(err)
	}
	bad.setListErr(nil)
	if err := o.AddDriver("bad", bad); err != nil {
		t.Fatal(err)
	}
	bad.setListErr(errors.New("the specification does not load"))
	o.Refresh()
	r := process(t, o, "bad__x")
	var le *orchestrator.ListError
	if r.Unavailable == nil || !errors.As(r.Unavailable, &le) || le.Label != "bad" || r.Calls != nil {
		t.Errorf("bad__x: %+v", r)
	}
	if got := results(process(t, o, "good__y")); !cmp.Equal(got, []string{"good:y"}) {
		t.Errorf("good__y: %v", got)
	}
	if r := process(t, o, "other_tool"); r.Unavailable != nil || r.Calls != nil {
		t.Errorf("a name of nobody: %+v", r)
	}
	h := o.Healthcheck(context.Background())
	if h.Status != mcs.HealthError || !strings.Contains(h.Detail, "bad: cannot list its tools") {
		t.Errorf("health: %+v", h)
	}
}

// infoRecorder records the CallInfo its chain sees.
type infoRecorder struct {
	mu    sync.Mutex
	infos []mcs.CallInfo
}

func (r *infoRecorder) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	info, _ := mcs.CallInfoFromContext(ctx)
	r.mu.Lock()
	r.infos = append(r.infos, info)
	r.mu.Unlock()
	return next(ctx, name, args)
}

// TestCallInfoInNestedOrchestrators: each chain sees its own driver's meta and the
// label it is registered under, the definition of the tool as it knows it, and the
// provider's call id.
func TestCallInfoInNestedOrchestrators(t *testing.T) {
	outerRec, innerRec, leafRec := &infoRecorder{}, &infoRecorder{}, &infoRecorder{}
	leaf := mcs.NewBaseDriver(newFake("leaf", "t", "u"), mcs.WithMiddleware(leafRec))
	inner := orchestrator.New(nil, mcs.WithMiddleware(innerRec))
	if err := inner.AddDriver("files", leaf); err != nil {
		t.Fatal(err)
	}
	outer := orchestrator.New(nil, mcs.WithMiddleware(outerRec))
	if err := outer.AddDriver("inner", inner); err != nil {
		t.Fatal(err)
	}
	if err := outer.AddDriver("other", newFake("other", "v")); err != nil {
		t.Fatal(err)
	}
	msg := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
		"function": map[string]any{"name": "inner__t", "arguments": "{}"}}}}
	r := outer.ProcessLLMResponse(context.Background(), msg)
	if got := results(r); !cmp.Equal(got, []string{"leaf:t"}) {
		t.Fatalf("results %v", got)
	}
	type seen struct{ ID, Label, Tool, CallID string }
	got := func(r *infoRecorder) seen {
		if len(r.infos) != 1 {
			t.Fatalf("infos %+v", r.infos)
		}
		i := r.infos[0]
		return seen{i.Driver.ID, i.Label, i.Tool.Name, i.CallID}
	}
	want := []seen{
		{orchestrator.ID, "", "inner__t", "call_1"}, // the outer orchestrator's own chain
		{orchestrator.ID, "inner", "t", "call_1"},   // the inner one, registered as "inner"
		{"test/leaf", "files", "t", "call_1"},       // the leaf's chain sees its own meta
	}
	if diff := cmp.Diff(want, []seen{got(outerRec), got(innerRec), got(leafRec)}); diff != "" {
		t.Errorf("CallInfo (-want +got):\n%s", diff)
	}
	if d := leafRec.infos[0].Tool.Description; d != "t of leaf" {
		t.Errorf("the leaf's tool definition: %q", d)
	}
}

// TestOnePanicError: a driver's ListTools that panics is reported with the
// module's one panic error, *mcs.PanicError, without its stack in the message.
func TestOnePanicError(t *testing.T) {
	_, err := orchestrator.Flat().ListTools(context.Background(), []orchestrator.Entry{{Label: "p", Driver: &panicList{}}})
	pe, ok := errors.AsType[*mcs.PanicError](err)
	if !ok || pe.Op != "ListTools" || pe.Value != "bad driver" || len(pe.Stack) == 0 {
		t.Fatalf("error %v (%T) is not an *mcs.PanicError of ListTools", err, err)
	}
	if strings.Contains(err.Error(), "goroutine") || !strings.Contains(err.Error(), "ListTools panicked: bad driver") {
		t.Errorf("message %q", err.Error())
	}
}
