package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/tools"
)

// actionsFormat is a wire format only the user knows: {"actions":[{"id",
// "tool_name", "parameters"}]}, answered by one {"role":"tool","results":[...]}.
type actionsFormat struct{}

var _ mcs.WireFormat = actionsFormat{}

func (actionsFormat) Format() string { return "actions" }

func (actionsFormat) Match(out mcs.Output) bool {
	_, ok := out.Message["actions"]
	return ok
}

func (actionsFormat) Extract(out mcs.Output) []mcs.ToolCall {
	list, _ := out.Message["actions"].([]any)
	var calls []mcs.ToolCall
	for _, a := range list {
		m, _ := a.(map[string]any)
		id, _ := m["id"].(string)
		name, _ := m["tool_name"].(string)
		args, _ := m["parameters"].(map[string]any)
		calls = append(calls, mcs.ToolCall{ID: id, Name: name, Arguments: args})
	}
	return calls
}

func (actionsFormat) History(out mcs.Output, calls []mcs.CallRecord) []mcs.Message {
	results := make([]any, 0, len(calls))
	for _, c := range calls {
		text := mcs.ResultText(c.Result)
		if c.Err != nil {
			text = "error: " + c.Err.Error()
		}
		results = append(results, map[string]any{"id": c.ID, "output": text})
	}
	return []mcs.Message{out.Message, {"role": "tool", "results": results}}
}

// fixed is a runner.Model that answers from a list of messages.
type fixed struct{ replies []map[string]any }

func (f *fixed) Name() string { return "m" }

func (f *fixed) Generate(ctx context.Context, req runner.Request) (runner.Reply, error) {
	if len(f.replies) == 0 {
		return runner.Reply{}, errors.New("fixed: no more replies")
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	return runner.Reply{Message: r}, nil
}

func (f *fixed) Stream(ctx context.Context, req runner.Request, chunk func(any)) (runner.Reply, error) {
	return f.Generate(ctx, req)
}

// TestForeignCallsWithUserFormat: a driver built with a format only the user
// knows reports the call of a tool it does not publish, and the runner answers it
// in that format, in the order the model made the calls. (The runner used to
// re-parse every reply with the default formats, so this call was neither in
// Result.Calls nor answered, and a provider rejects a request in which a call id
// goes unanswered.)
func TestForeignCallsWithUserFormat(t *testing.T) {
	table := tools.New(mcs.Meta{ID: "test/echo", Name: "echo"})
	tools.Add(table, "echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	d := mcs.NewBaseDriver(table, mcs.WithFormats(actionsFormat{}))
	m := &fixed{replies: []map[string]any{
		{"actions": []any{
			map[string]any{"id": "a1", "tool_name": "ghost", "parameters": map[string]any{}},
			map[string]any{"id": "a2", "tool_name": "echo", "parameters": map[string]any{"text": "hi"}},
		}},
		{"role": "assistant", "content": "done"},
	}}
	res, err := runner.New(d, m).Run(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Calls {
		got = append(got, fmt.Sprintf("%s %s err=%v", c.ID, c.Name, c.Err != nil))
	}
	// The calls that ran come first, as they ran; then the answered foreign ones.
	if diff := cmp.Diff([]string{"a2 echo err=false", "a1 ghost err=true"}, got); diff != "" {
		t.Fatalf("Result.Calls (-want +got):\n%s", diff)
	}
	if !errors.Is(res.Calls[1].Err, mcs.ErrUnknownTool) || res.Calls[1].Index != 0 || res.Calls[0].Index != 1 {
		t.Errorf("the foreign call's error = %v, indexes %d and %d, want ErrUnknownTool, 1 and 0", res.Calls[1].Err, res.Calls[0].Index, res.Calls[1].Index)
	}
	// user, the actions, their results, the final answer
	if len(res.History) != 4 {
		t.Fatalf("history has %d entries, want 4: %v", len(res.History), res.History)
	}
	results, _ := res.History[2]["results"].([]any)
	var ids []string
	for _, r := range results {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	if diff := cmp.Diff([]string{"a1", "a2"}, ids); diff != "" {
		t.Errorf("answered ids (-want +got):\n%s", diff)
	}
	if out := results[1].(map[string]any)["output"]; out != "hi" {
		t.Errorf("echo's answer = %v, want hi", out)
	}
	if res.Text != "done" {
		t.Errorf("Text = %q", res.Text)
	}
}
