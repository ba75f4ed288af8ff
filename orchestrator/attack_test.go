package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// TestAttackCallDuringRenameIsAnswered: a reply written while one driver was
// registered calls read_file; a second driver arrives before the reply is
// processed and namespacing renames the tool. The call is answered as unknown,
// with the new name, never silently dropped; a name that is still routable runs.
func TestAttackCallDuringRenameIsAnswered(t *testing.T) {
	o := orchestrator.New(nil)
	if err := o.AddDriver("files", newFake("files", "read_file")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"read_file"}, toolNames(t, o)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	reply := textCall(t, "read_file", nil)
	if err := o.AddDriver("backup", newFake("backup", "restore")); err != nil {
		t.Fatal(err)
	}
	resp := o.ProcessLLMResponse(context.Background(), reply)
	if len(resp.Calls) != 1 || !resp.CallFailed || resp.RetryPrompt == "" {
		t.Fatalf("the call for the old name was not answered: %+v", resp)
	}
	err := resp.Calls[0].Err
	if !errors.Is(err, mcs.ErrUnknownTool) || !strings.Contains(err.Error(), `now called "files__read_file"`) {
		t.Errorf("err = %v, want an unknown tool naming the new name", err)
	}
	// Back to one driver: the namespaced name is answered with the bare one.
	o.RemoveDriver("backup")
	resp = o.ProcessLLMResponse(context.Background(), textCall(t, "files__read_file", nil))
	if len(resp.Calls) != 1 || !strings.Contains(fmt.Sprint(resp.Calls[0].Err), `now called "read_file"`) {
		t.Errorf("2 -> 1 drivers: %+v", resp)
	}
}

// TestAlwaysNamespacing: with AlwaysNamespacing a single driver's tools are
// prefixed too, so a name survives a second driver arriving and the call runs.
func TestAlwaysNamespacing(t *testing.T) {
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.AlwaysNamespacing()))
	if err := o.AddDriver("files", newFake("files", "read_file")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"files__read_file"}, toolNames(t, o)); diff != "" {
		t.Errorf("one driver (-want +got):\n%s", diff)
	}
	reply := textCall(t, "files__read_file", nil)
	if err := o.AddDriver("backup", newFake("backup", "restore")); err != nil {
		t.Fatal(err)
	}
	resp := o.ProcessLLMResponse(context.Background(), reply)
	if diff := cmp.Diff([]string{"files:read_file"}, results(resp)); diff != "" {
		t.Errorf("the call across the change (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"files__read_file", "backup__restore"}, toolNames(t, o)); diff != "" {
		t.Errorf("two drivers (-want +got):\n%s", diff)
	}
}
