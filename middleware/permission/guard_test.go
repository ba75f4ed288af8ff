package permission_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
)

// TestPolicyHoldsForCallsFromOutside: a driver's consent policy also guards the
// calls that reach it through ExecuteTool from outside, here from an orchestrator
// that has no middleware of its own.
func TestPolicyHoldsForCallsFromOutside(t *testing.T) {
	fake := &fakeDriver{}
	guarded := mcs.NewBaseDriver(fake, mcs.WithMiddleware(
		permission.New(nil, permission.WithRules(permission.Allow("read_*"), permission.Deny("delete_*"))),
	))
	orch := orchestrator.New(orchestrator.Flat())
	if err := orch.AddDriver("files", guarded); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// The orchestrator's ExecuteTool, as another orchestrator or a client calls it.
	res, err := orch.ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"})
	if err != nil || mcs.CodeOf(res, nil) != mcs.CodeDenied {
		t.Errorf("ExecuteTool(delete_file) = %v, %v; want the denial result", res, err)
	}
	_, err = orch.ExecuteTool(ctx, "write_file", map[string]any{"path": "a.txt"})
	var ce *permission.ConsentError
	if !errors.As(err, &ce) || ce.Reason != permission.ReasonNoHandler {
		t.Errorf("ExecuteTool(write_file) err = %v, want a no_handler *ConsentError", err)
	}

	// The orchestrator's own response processing, from model output.
	resp := orch.ProcessLLMResponse(ctx, `{"tool":"read_file","arguments":{"path":"a.txt"}}
{"tool":"delete_file","arguments":{"path":"a.txt"}}
{"tool":"write_file","arguments":{"path":"a.txt"}}`)
	if len(resp.Calls) != 3 {
		t.Fatalf("got %d call records, want 3: %+v", len(resp.Calls), resp)
	}
	if resp.Calls[0].Err != nil || resp.Calls[0].Result != "read_file a.txt: done" {
		t.Errorf("read_file = %v, %v; want it executed", resp.Calls[0].Result, resp.Calls[0].Err)
	}
	if resp.Calls[1].Err != nil || mcs.CodeOf(resp.Calls[1].Result, nil) != mcs.CodeDenied {
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
