package mcs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// files is a tool driver with one tool, which the middleware under test never lets run.
type files struct{}

func (files) Meta() mcs.Meta { return mcs.Meta{ID: "test/files", Name: "files", Version: "1"} }

func (files) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "delete_file", Description: "Deletes a file.",
		Parameters: []mcs.Parameter{{Name: "path", Required: true}}}}, nil
}

func (files) ExecuteTool(context.Context, string, map[string]any) (any, error) {
	return "deleted", nil
}

// signalOutputs are a call of delete_file in each of the five history formats.
var signalOutputs = []struct {
	format string
	output any
}{
	{"openai-chat", map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
		"id": "call_1", "type": "function", "function": map[string]any{"name": "delete_file", "arguments": `{"path":"a.txt"}`}}}}},
	{"openai-responses", map[string]any{"output": []any{map[string]any{
		"type": "function_call", "call_id": "call_1", "name": "delete_file", "arguments": `{"path":"a.txt"}`}}}},
	{"anthropic-messages", map[string]any{"role": "assistant", "content": []any{map[string]any{
		"type": "tool_use", "id": "toolu_1", "name": "delete_file", "input": map[string]any{"path": "a.txt"}}}}},
	{"gemini", map[string]any{"role": "model", "parts": []any{map[string]any{
		"functionCall": map[string]any{"name": "delete_file", "args": map[string]any{"path": "a.txt"}}}}}},
	{"text", `I will delete it. {"tool": "delete_file", "arguments": {"path": "a.txt"}}`},
}

// signalCases are the in-band results the model reads, each with the map that
// the permission and auth middleware returned before Signal existed, and that a
// pending approval is specified as.
var signalCases = []struct {
	kind   string
	signal mcs.Signal
	before map[string]any
}{
	{"denied",
		mcs.Signal{Kind: mcs.CodeDenied, Tool: "delete_file", Message: "User denied execution of 'delete_file'."},
		map[string]any{"permission_denied": true, "tool": "delete_file", "message": "User denied execution of 'delete_file'."}},
	{"challenge",
		mcs.Signal{Kind: mcs.CodeChallenge, Message: "Open https://example.test/device?x=1&y=2 and enter <AB-CD>.",
			Data: map[string]any{"url": "https://example.test/device?x=1&y=2", "code": "AB-CD", "scope": "github"}},
		map[string]any{"auth_required": true, "message": "Open https://example.test/device?x=1&y=2 and enter <AB-CD>.",
			"url": "https://example.test/device?x=1&y=2", "code": "AB-CD", "scope": "github"}},
	{"pending",
		mcs.Signal{Kind: mcs.CodePending, Tool: "delete_file", Message: "Waiting for a person to approve the call.",
			Data: map[string]any{"id": "apr_1"}},
		map[string]any{"approval_pending": true, "id": "apr_1", "tool": "delete_file", "message": "Waiting for a person to approve the call."}},
}

// messagesOf runs output through a driver whose middleware answers every call
// with result, and returns the history as JSON.
func messagesOf(t *testing.T, result any, output any) ([]byte, string) {
	t.Helper()
	mw := mcs.ToolMiddlewareFunc(func(context.Context, string, map[string]any, mcs.CallNext) (any, error) {
		return result, nil
	})
	d := mcs.NewBaseDriver(files{}, mcs.WithMiddleware(mw))
	resp := d.ProcessLLMResponse(context.Background(), output)
	if !resp.CallExecuted || resp.CallFailed || len(resp.Messages) == 0 {
		t.Fatalf("executed %t, failed %t, %d messages; want one successful call", resp.CallExecuted, resp.CallFailed, len(resp.Messages))
	}
	b, err := json.MarshalIndent(resp.Messages, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b, mcs.ResultText(resp.Calls[0].Result)
}

// TestSignalHistoryGolden pins the JSON the model reads for a denial, a challenge
// and a pending approval in all five history formats: the whole history a
// BaseDriver writes, compared with testdata/signals/<format>.json (go test -run
// TestSignalHistoryGolden -update rewrites them), and compared with the history
// of the map each signal replaced, so that the model reads what it read before.
func TestSignalHistoryGolden(t *testing.T) {
	for _, o := range signalOutputs {
		t.Run(o.format, func(t *testing.T) {
			got := map[string]json.RawMessage{}
			for _, c := range signalCases {
				withSignal, text := messagesOf(t, c.signal, o.output)
				withPointer, _ := messagesOf(t, &c.signal, o.output)
				withMap, _ := messagesOf(t, c.before, o.output)
				if !bytes.Equal(withSignal, withMap) {
					t.Errorf("%s: history with the Signal differs from the history with the map it replaced:\n%s", c.kind,
						cmp.Diff(string(withMap), string(withSignal)))
				}
				if !bytes.Equal(withSignal, withPointer) {
					t.Errorf("%s: history with a *Signal differs from the history with a Signal", c.kind)
				}
				if !bytes.Contains(withSignal, []byte(`permission_denied`)) && !bytes.Contains(withSignal, []byte(`auth_required`)) &&
					!bytes.Contains(withSignal, []byte(`approval_pending`)) {
					t.Errorf("%s: the history does not carry the signal: %s", c.kind, withSignal)
				}
				if want, _ := json.Marshal(c.before); text != string(want) {
					t.Errorf("%s: ResultText = %s, want %s", c.kind, text, want)
				}
				got[c.kind] = withSignal
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			path := filepath.Join("testdata", "signals", o.format+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), string(b)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}
