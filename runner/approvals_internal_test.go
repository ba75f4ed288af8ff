package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pendingIDs finds the pending signals in the tool results of every history
// format, and the ids a user message reports; it ignores assistant messages.
func TestPendingIDs(t *testing.T) {
	with := func(id string) string {
		return `{"approval_pending":true,"id":"` + id + `","message":"waits","tool":"delete_file"}`
	}
	cases := []struct {
		name         string
		history      []map[string]any
		want         []string
		wantReported []string
	}{
		{"chat completions", []map[string]any{{"role": "tool", "tool_call_id": "c1", "content": with("a")}}, []string{"a"}, nil},
		{"text protocol, framed", []map[string]any{{"role": "user", "content": "[Result of the tool call delete_file]\n<tool_result tool=\"delete_file\">\n" + with("b") + "\n</tool_result>"}}, []string{"b"}, nil},
		{"anthropic", []map[string]any{{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": with("c")},
			map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": []any{map[string]any{"type": "text", "text": with("d")}}},
		}}}, []string{"c", "d"}, nil},
		{"responses", []map[string]any{{"type": "function_call_output", "call_id": "c1", "output": with("e")}}, []string{"e"}, nil},
		{"gemini", []map[string]any{{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "delete_file", "response": map[string]any{"result": with("f")}}}}}}, []string{"f"}, nil},
		{"decoded object", []map[string]any{{"role": "tool", "content": []map[string]any{{"approval_pending": true, "id": "g"}}}}, []string{"g"}, nil},
		{"two in one text, once each", []map[string]any{
			{"role": "tool", "content": with("h") + " and " + with("i")},
			{"role": "tool", "content": with("h")},
		}, []string{"h", "i"}, nil},
		{"assistant messages are not read", []map[string]any{{"role": "assistant", "content": with("x")}, {"role": "model", "parts": []any{map[string]any{"text": with("y")}}}}, nil, nil},
		{"not pending", []map[string]any{{"role": "tool", "content": `{"approval_pending":false,"id":"z"}`}, {"role": "tool", "content": `{"permission_denied":true,"id":"z"}`}}, nil, nil},
		{"reported", []map[string]any{
			{"role": "tool", "content": with("j")},
			{"role": "user", "content": "The approved call to 'delete_file' (approval j) ran.\nresult\n\nis it done?"},
		}, []string{"j"}, []string{"j"}},
		{"not JSON", []map[string]any{{"role": "tool", "content": `{"approval_pending" broken {`}}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, reported := pendingIDs(c.history)
			if diff := cmp.Diff(c.want, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			var rep []string
			for id := range reported {
				rep = append(rep, id)
			}
			if diff := cmp.Diff(c.wantReported, rep); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
		})
	}
}
