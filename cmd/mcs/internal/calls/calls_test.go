package calls

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

func TestPretty(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{`{"a":1}`, "{\n  \"a\": 1\n}"},
		{"plain <b>text</b>\n", "plain <b>text</b>"},
		{"[not json", "[not json"},
		{map[string]any{"x": "<&>"}, "{\n  \"x\": \"<&>\"\n}"},
		{mcs.Signal{Kind: mcs.CodePending, Data: map[string]any{"id": "abc"}}, ""},
	} {
		got := Pretty(c.in)
		if c.want == "" {
			if got == "" {
				t.Errorf("Pretty(%v) is empty", c.in)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Pretty(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPendingID(t *testing.T) {
	sig := mcs.Signal{Kind: mcs.CodePending, Data: map[string]any{"id": "q1"}}
	for _, c := range []struct {
		in   any
		want string
	}{{sig, "q1"}, {&sig, "q1"}, {(*mcs.Signal)(nil), ""}, {"text", ""}} {
		if got := PendingID(c.in); got != c.want {
			t.Errorf("PendingID(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	got := InvalidArguments("t", []string{"/a: want integer", "/b: line\nbreak"})
	want := "t was not run: 2 problems with its arguments; fix them and call again:\n  /a: want integer\n  /b: line break"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// echoTools owns the tool "echo" only.
type echoTools struct{}

func (echoTools) Meta() mcs.Meta { return mcs.Meta{ID: "test/echo"} }
func (echoTools) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "echo", Parameters: []mcs.Parameter{{Name: "x"}}}}, nil
}
func (echoTools) ExecuteTool(_ context.Context, _ string, args map[string]any) (any, error) {
	return args, nil
}

// Process runs the calls the stack owns and lists the others as unowned.
func TestProcess(t *testing.T) {
	d := mcs.NewBaseDriver(echoTools{})
	out, err := Process(context.Background(), d, []byte(`{"tool": "echo", "arguments": {"x": "1"}} then {"tool": "other", "arguments": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	var owned, unowned []string
	for _, c := range out.Calls {
		owned = append(owned, c.Name)
	}
	for _, c := range out.Unowned {
		unowned = append(unowned, c.Name)
	}
	if diff := cmp.Diff([]string{"echo"}, owned); diff != "" {
		t.Errorf("owned (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"other"}, unowned); diff != "" {
		t.Errorf("unowned (-want +got):\n%s", diff)
	}
	if !out.CallExecuted || out.Denied || out.Messages == nil {
		t.Errorf("flags %+v", out)
	}
}
