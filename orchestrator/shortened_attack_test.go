package orchestrator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/orchestrator"
)

// TestAttackShortenedNameLosesItsTool: a name that namespacing shortens to 64
// characters ends in a hash, so its description must still name the driver's own
// tool; without it the model (and the operator reading the listing) cannot tell
// which operation the shortened name runs.
func TestAttackShortenedNameLosesItsTool(t *testing.T) {
	long := "enterprise-admin_list-self-hosted-runner-groups-for-enterprise"
	gh := newFake("github", long, "short")
	gh.tools[0].Description = "Operation number 0" // what the issue saw: a summary that names nothing
	gh.tools[1].Description = "Operation number 1"
	o := build(t, orchestrator.Pipeline(orchestrator.Namespacing()),
		"github", gh,
		"other", newFake("other", "x"))
	tools, err := o.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, tool := range tools {
		if !strings.HasPrefix(tool.Name, "github__enterprise-admin") {
			if tool.Name == "github__short" && strings.Contains(tool.Description, "(short)") {
				t.Errorf("a name that was not shortened names itself again: %q", tool.Description)
			}
			continue
		}
		found = true
		if len(tool.Name) > 64 {
			t.Fatalf("exposed name %q is over 64 characters", tool.Name)
		}
		if !strings.Contains(tool.Description, long) {
			t.Errorf("description %q of the shortened %q does not name the tool %q", tool.Description, tool.Name, long)
		}
		if !strings.HasPrefix(tool.Description, "[github] ") {
			t.Errorf("description %q lost its label", tool.Description)
		}
	}
	if !found {
		t.Fatalf("no shortened tool in %v", names(tools))
	}
}
