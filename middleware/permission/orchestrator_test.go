package permission_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
)

// TestPromptOnOrchestrator: a prompt on the orchestrator's own chain names the
// driver the call goes to by the label of the exposed name, and "always" still
// separates the drivers.
func TestPromptOnOrchestrator(t *testing.T) {
	var out bytes.Buffer
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()),
		mcs.WithMiddleware(permission.New(permission.Prompt(strings.NewReader("a\nn\n"), &out))))
	pets, shop := &fakeDriver{id: "db"}, &fakeDriver{id: "db"}
	if err := o.AddDriver("pets", pets); err != nil {
		t.Fatal(err)
	}
	if err := o.AddDriver("shop", shop); err != nil {
		t.Fatal(err)
	}
	got := []string{
		decide(t, o, "pets__write_file"), // answered a
		decide(t, o, "pets__write_file"), // remembered
		decide(t, o, "shop__write_file"), // another driver: asked again, answered n
	}
	if diff := cmp.Diff([]string{"ran", "ran", "denied"}, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if len(shop.Calls()) != 0 {
		t.Errorf("shop ran %v", shop.Calls())
	}
	for _, want := range []string{
		`Tool "pets__write_file" (driver "pets", via the orchestrator) wants to run without arguments.`,
		`Tool "shop__write_file" (driver "shop", via the orchestrator) wants to run without arguments.`,
	} {
		if n := strings.Count(out.String(), want); n != 1 {
			t.Errorf("output asks %d times %q, want once:\n%s", n, want, out.String())
		}
	}
	if strings.Contains(out.String(), "Orchestrator") {
		t.Errorf("the question names the orchestrator as the driver:\n%s", out.String())
	}
}

// TestPromptOnOrchestratorNames covers the other names a call on an
// orchestrator's chain can have.
func TestPromptOnOrchestratorNames(t *testing.T) {
	// question installs a prompt on on, calls name on d, and returns the first
	// line of the question.
	question := func(t *testing.T, on mcs.SupportsToolMiddleware, d mcs.ToolDriver, name string) string {
		t.Helper()
		var out bytes.Buffer
		on.AddMiddleware(permission.New(permission.Prompt(strings.NewReader("n\n"), &out)))
		if got := decide(t, d, name); got != "denied" {
			t.Fatalf("%s: %s, want denied", name, got)
		}
		line, _, _ := strings.Cut(out.String(), "\n")
		return line
	}

	t.Run("bare name under a flat strategy", func(t *testing.T) {
		o := orchestrator.New(orchestrator.Flat())
		if err := o.AddDriver("files", &fakeDriver{}); err != nil {
			t.Fatal(err)
		}
		want := `Tool "write_file" (via the orchestrator) wants to run without arguments.`
		if got := question(t, o, o, "write_file"); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})

	t.Run("nested orchestrator", func(t *testing.T) {
		inner := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()))
		if err := inner.AddDriver("pets", &fakeDriver{}); err != nil {
			t.Fatal(err)
		}
		if err := inner.AddDriver("shop", &fakeDriver{}); err != nil {
			t.Fatal(err)
		}
		outer := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()))
		if err := outer.AddDriver("zoo", inner); err != nil {
			t.Fatal(err)
		}
		if err := outer.AddDriver("files", &fakeDriver{}); err != nil {
			t.Fatal(err)
		}
		// The inner orchestrator's chain sees its own exposed name and its label.
		want := `Tool "pets__write_file" (driver "pets", via the orchestrator "zoo") wants to run without arguments.`
		if got := question(t, inner, outer, "zoo__pets__write_file"); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})

	t.Run("a driver is still named as before", func(t *testing.T) {
		d := mcs.NewBaseDriver(&fakeDriver{id: "files"})
		want := `Tool "write_file" on driver "Fake" (id "files") wants to run without arguments.`
		if got := question(t, d, d, "write_file"); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
}
