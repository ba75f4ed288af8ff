package mcs_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// petsDriver publishes a tool whose name a record in an answer may well quote.
type petsDriver struct{ calcDriver }

func (*petsDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "pets__getInventory", Description: "Lists the pets."}, {Name: "Bella", Description: "A tool named like a pet."}}, nil
}

func (d *petsDriver) ExecuteTool(context.Context, string, map[string]any) (any, error) {
	d.calls.Add(1)
	return "inventory", nil
}

// TestAttackRecordInAnswerIsData: a final answer that quotes a JSON record whose
// "name" field happens to be a tool name runs nothing, whole and streamed, as text
// and as the text content of a native message; a record with other keys is data
// even in a code fence. An object that names its tool with "tool", or with "name"
// and an arguments field, or with "name" alone in a fence, is still a call.
func TestAttackRecordInAnswerIsData(t *testing.T) {
	data := []string{
		`The record is {"id":5,"name":"pets__getInventory","owner":"bob"}.`,
		`Your pet: {"name":"Bella","species":"dog","age":3}`,
		`Your pet: {"name": "Bella"} is the only one.`,
		"The record:\n```json\n{\"id\": 5, \"name\": \"pets__getInventory\", \"owner\": \"bob\"}\n```",
		`{'name': 'Bella', 'owner': 'bob',}`,                                        // repaired, still a record
		"{\u201cname\u201d: \u201cBella\u201d, \u201cowner\u201d: \u201cbob\u201d}", // healed, still a record
		`{name: "Bella", owner: "bob"}`,                                             // bare keys
		`{"name":"Bella","name":"pets__getInventory","x":1}`,                        // repeated name field
		`{"id":5,"name":"pets__getInventory","owner":"bob"`,                         // a record that never closed
		"```\n{\"name\":\"Bella\",\"owner\":\"bob\"\n```",                           // ... in a fence
	}
	for _, reply := range data {
		for _, byteByByte := range []bool{false, true} {
			if got := mcs.DecodeTextForTest(reply, byteByByte); len(got) != 0 {
				t.Errorf("%q (byte by byte %v): decoded %+v, want no call", reply, byteByByte, got)
			}
		}
		td := &petsDriver{}
		d := mcs.NewBaseDriver(td)
		for _, in := range []any{reply, map[string]any{"role": "assistant", "content": reply}} {
			if r := d.ProcessLLMResponse(context.Background(), in); r.Calls != nil || r.Unavailable != nil {
				t.Errorf("%q as %T: ran %+v", reply, in, calls(r))
			}
		}
		run := runStream(t, textChunks(reply, 3), true, d)
		if len(run.responses) != 0 || run.shown.String() != reply {
			t.Errorf("%q streamed: ran %+v, showed %q", reply, run.calls(), run.shown.String())
		}
		if n := td.calls.Load(); n != 0 {
			t.Errorf("%q: %d tools ran", reply, n)
		}
	}

	callReplies := []string{
		`{"tool":"Bella","id":5,"owner":"bob"}`,
		`Sure: {"name":"Bella","arguments":{},"id":5}`,
		`{"name":"Bella","input":null}`,
		"```json\n{\"name\": \"Bella\"}\n```",
		"```json\n{'name': 'Bella',}\n```",
	}
	for _, reply := range callReplies {
		for _, byteByByte := range []bool{false, true} {
			got := mcs.DecodeTextForTest(reply, byteByByte)
			if len(got) != 1 || got[0].Name != "Bella" || got[0].Err != nil {
				t.Errorf("%q (byte by byte %v): decoded %+v, want one call of Bella", reply, byteByByte, got)
			}
		}
		td := &petsDriver{}
		d := mcs.NewBaseDriver(td)
		r := d.ProcessLLMResponse(context.Background(), reply)
		if diff := cmp.Diff([]call{{Name: "Bella", Args: map[string]any{}, Result: "inventory"}}, calls(r)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", reply, diff)
		}
		run := runStream(t, textChunks(reply, 3), true, d)
		if diff := cmp.Diff([]call{{Name: "Bella", Args: map[string]any{}, Result: "inventory"}}, run.calls()); diff != "" {
			t.Errorf("%q streamed (-want +got):\n%s", reply, diff)
		}
	}

	// A native message whose text content holds an explicit call, as some local
	// models write, still runs it.
	d := mcs.NewBaseDriver(&petsDriver{})
	r := d.ProcessLLMResponse(context.Background(), map[string]any{"role": "assistant", "content": `{"tool": "pets__getInventory", "arguments": {}}`})
	if len(r.Calls) != 1 || r.Calls[0].Name != "pets__getInventory" || r.Calls[0].Err != nil {
		t.Errorf("explicit call in a native message's text: %+v", calls(r))
	}
}
