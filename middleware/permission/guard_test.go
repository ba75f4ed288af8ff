package permission_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
)

// router stands in for an orchestrator: it publishes the tools of its drivers and
// dispatches each call to the driver that owns the tool through its ExecuteTool.
type router struct{ drivers []mcs.ToolDriver }

func (r *router) Meta() mcs.Meta { return mcs.Meta{ID: "router", Name: "Router", Version: "1.0.0"} }

func (r *router) ListTools(ctx context.Context) ([]mcs.Tool, error) {
	var all []mcs.Tool
	for _, d := range r.drivers {
		tools, err := d.ListTools(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, tools...)
	}
	return all, nil
}

func (r *router) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	for _, d := range r.drivers {
		tools, err := d.ListTools(ctx)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(tools, func(t mcs.Tool) bool { return t.Name == name }) {
			return d.ExecuteTool(ctx, name, args)
		}
	}
	return nil, fmt.Errorf("no driver has tool %q", name)
}

func TestPolicyHoldsForCallsFromOutside(t *testing.T) {
	fake := &fakeDriver{}
	guarded := mcs.NewBaseDriver(fake, mcs.WithMiddleware(
		permission.New(nil, permission.WithRules(permission.Allow("read_*"), permission.Deny("delete_*"))),
	))
	ctx := context.Background()

	// Directly through the ToolDriver contract, as an orchestrator calls it.
	var td mcs.ToolDriver = guarded
	res, err := td.ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"})
	if err != nil || !permission.IsDenied(res) {
		t.Errorf("ExecuteTool(delete_file) = %v, %v; want the denial result", res, err)
	}
	_, err = td.ExecuteTool(ctx, "write_file", map[string]any{"path": "a.txt"})
	var ce *permission.ConsentError
	if !errors.As(err, &ce) || ce.Reason != permission.ReasonNoHandler {
		t.Errorf("ExecuteTool(write_file) err = %v, want a no_handler *ConsentError", err)
	}

	// Through a driver that composes it and has no middleware of its own.
	outer := mcs.NewBaseDriver(&router{drivers: []mcs.ToolDriver{guarded}})
	resp := outer.ProcessLLMResponse(ctx, `{"tool":"read_file","arguments":{"path":"a.txt"}}
{"tool":"delete_file","arguments":{"path":"a.txt"}}
{"tool":"write_file","arguments":{"path":"a.txt"}}`)
	if len(resp.Calls) != 3 {
		t.Fatalf("got %d call records, want 3: %+v", len(resp.Calls), resp)
	}
	if resp.Calls[0].Err != nil || resp.Calls[0].Result != "read_file a.txt: done" {
		t.Errorf("read_file = %v, %v; want it executed", resp.Calls[0].Result, resp.Calls[0].Err)
	}
	if resp.Calls[1].Err != nil || !permission.IsDenied(resp.Calls[1].Result) {
		t.Errorf("delete_file = %v, %v; want the denial result", resp.Calls[1].Result, resp.Calls[1].Err)
	}
	if !errors.As(resp.Calls[2].Err, &ce) {
		t.Errorf("write_file err = %v, want a *ConsentError", resp.Calls[2].Err)
	}
	if !resp.CallExecuted || !resp.CallFailed || resp.RetryPrompt == "" {
		t.Errorf("response flags = executed %v failed %v retry %q", resp.CallExecuted, resp.CallFailed, resp.RetryPrompt)
	}
	if diff := cmp.Diff([]string{"read_file"}, fake.Calls()); diff != "" {
		t.Errorf("executed tools (-want +got):\n%s", diff)
	}
}

func TestMetaUnchanged(t *testing.T) {
	td := &fakeDriver{}
	with := mcs.NewBaseDriver(td, mcs.WithMiddleware(permission.New(allowAll)))
	if diff := cmp.Diff(mcs.NewBaseDriver(td).Meta(), with.Meta()); diff != "" {
		t.Errorf("permission changed the meta (-bare +with):\n%s", diff)
	}
	if with.Meta().HasCapability(permission.Capability) {
		t.Error("meta advertises the consent flag")
	}
}
