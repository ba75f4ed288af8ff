package mcs_test

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
)

// actionsFormat is a wire format the kernel does not know: {"actions":[{"tool_name",
// "parameters"}]}, streamed as {"action": {...}} chunks and a final {"end": true}.
// It proves that a new provider format needs no fork.
type actionsFormat struct{}

var _ mcs.StreamingFormat = actionsFormat{}

func (actionsFormat) Format() string { return "actions" }

func (actionsFormat) Match(r mcs.Output) bool {
	_, ok := r.Message["actions"]
	return ok
}

func (actionsFormat) Extract(r mcs.Output) []mcs.ToolCall {
	list, _ := r.Message["actions"].([]any)
	var out []mcs.ToolCall
	for i, a := range list {
		m, _ := a.(map[string]any)
		name, _ := m["tool_name"].(string)
		args, _ := m["parameters"].(map[string]any)
		out = append(out, mcs.ToolCall{ID: fmt.Sprint("a", i), Name: name, Arguments: args})
	}
	return out
}

func (actionsFormat) History(r mcs.Output, calls []mcs.CallRecord) []mcs.Message {
	var results []any
	for _, o := range calls {
		results = append(results, map[string]any{"id": o.ID, "output": mcs.ResultText(o.Result)})
	}
	return []mcs.Message{{"role": "assistant", "actions": r.Message["actions"]}, {"role": "tool", "results": results}}
}

func (actionsFormat) MatchChunk(chunk any) bool {
	m, ok := chunk.(map[string]any)
	return ok && (m["action"] != nil || m["end"] != nil || m["text"] != nil)
}

func (actionsFormat) NewAssembler() mcs.Assembler { return &actionsAssembler{} }

type actionsAssembler struct {
	actions []any
	names   []string
	done    bool
}

func (a *actionsAssembler) Add(chunk any) string {
	m, _ := chunk.(map[string]any)
	if act, ok := m["action"].(map[string]any); ok {
		a.actions = append(a.actions, act)
		name, _ := act["tool_name"].(string)
		a.names = append(a.names, name)
	}
	if m["end"] == true {
		a.done = true
	}
	text, _ := m["text"].(string)
	return text
}

func (a *actionsAssembler) Message() map[string]any {
	return map[string]any{"actions": append([]any(nil), a.actions...)}
}
func (a *actionsAssembler) Done() bool          { return a.done }
func (a *actionsAssembler) CallNames() []string { return a.names }

// A provider format the kernel does not know needs no fork: implement WireFormat
// (and StreamingFormat to stream it) and give it to the driver with WithFormats.
// The calls of tools the driver does not publish come back in Response.Foreign,
// for the client to answer in the same format.
func ExampleWireFormat() {
	d := mcs.NewBaseDriver(weather{}, mcs.WithFormats(actionsFormat{}, mcs.TextFormat(nil)))
	out := map[string]any{"actions": []any{
		map[string]any{"tool_name": "get_weather", "parameters": map[string]any{"city": "Oslo"}},
		map[string]any{"tool_name": "book_flight", "parameters": map[string]any{"to": "Oslo"}},
	}}
	resp := d.ProcessLLMResponse(context.Background(), out)
	fmt.Println("format:", resp.Format)
	for _, c := range resp.Calls {
		fmt.Printf("ran #%d %s: %v\n", c.Index, c.Name, c.Result)
	}
	for _, c := range resp.Foreign {
		fmt.Printf("foreign #%d %s\n", c.Index, c.Name)
	}
	fmt.Println("history:", resp.Messages[1])
	// Output:
	//   exec get_weather Oslo
	// format: actions
	// ran #0 get_weather: sunny in Oslo
	// foreign #1 book_flight
	// history: map[results:[map[id:a0 output:sunny in Oslo]] role:tool]
}
