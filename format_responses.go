package mcs

// The OpenAI Responses API wire format.

import (
	"strings"
)

type responsesFormat struct{}

func (responsesFormat) Format() string { return "openai-responses" }

func (responsesFormat) Match(r Output) bool {
	if r.Message == nil {
		return false
	}
	out, ok := r.Message["output"].([]any)
	if !ok {
		return false
	}
	for _, item := range out {
		if m, ok := item.(map[string]any); ok && m["type"] == "function_call" {
			return true
		}
	}
	return false
}

func (responsesFormat) Extract(r Output) []ToolCall {
	out, _ := r.Message["output"].([]any)
	var calls []ToolCall
	for _, item := range out {
		m, _ := item.(map[string]any)
		if m["type"] != "function_call" {
			continue
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			continue
		}
		id := str(m["call_id"])
		if id == "" {
			id = str(m["id"])
		}
		raw, present := m["arguments"]
		args, err := decodeArguments(name, "arguments", raw)
		if present && raw == nil {
			args, err = nil, missingArguments(name)
		}
		calls = append(calls, ToolCall{ID: id, Name: name, Arguments: args, Err: err})
	}
	return calls
}

// History returns the output items that are not function calls (messages, and
// reasoning items, which reasoning models need back with the calls that followed
// them), then per owned call its function_call item (with the item id the model
// gave it) and its function_call_output.
func (responsesFormat) History(r Output, calls []CallRecord) []map[string]any {
	msgs := make([]map[string]any, 0, 2*len(calls)+1)
	itemIDs := map[string]string{} // call_id -> item id
	out, _ := r.Message["output"].([]any)
	for _, item := range out {
		m, ok := item.(map[string]any)
		switch {
		case !ok:
		case m["type"] == "function_call":
			itemIDs[str(m["call_id"])] = str(m["id"])
		default:
			msgs = append(msgs, m)
		}
	}
	for _, o := range calls {
		call := map[string]any{"type": "function_call", "call_id": o.ID, "name": o.Name, "arguments": argumentsJSON(o.Arguments)}
		if id := itemIDs[o.ID]; id != "" {
			call["id"] = id
		}
		msgs = append(msgs, call, map[string]any{"type": "function_call_output", "call_id": o.ID, "output": outcomeValue(o)})
	}
	return msgs
}

func (responsesFormat) MatchChunk(chunk any) bool {
	m, ok := chunk.(map[string]any)
	if !ok {
		return false
	}
	t, _ := m["type"].(string)
	return strings.HasPrefix(t, "response.")
}

func (responsesFormat) NewAssembler() Assembler { return &responsesAssembler{} }

type respItem struct {
	kind   string         // "message", "function_call" or another item type
	raw    map[string]any // the latest full item of another type (reasoning, ...)
	id     string
	callID string
	name   string
	call   int // index in responsesAssembler.names of a function_call
	args   strings.Builder
	text   strings.Builder
}

type responsesAssembler struct {
	items  []*respItem
	names  []string // the names of the function_call items, in order
	byID   map[string]*respItem
	byIdx  map[int]*respItem
	done   bool
	status string
}

func (a *responsesAssembler) item(m map[string]any) *respItem {
	if id, ok := m["item_id"].(string); ok && id != "" {
		if it := a.byID[id]; it != nil {
			return it
		}
	}
	if f, ok := m["output_index"].(float64); ok {
		if it := a.byIdx[int(f)]; it != nil {
			return it
		}
	}
	return nil
}

func (a *responsesAssembler) add(idx int, it *respItem) {
	if a.byID == nil {
		a.byID, a.byIdx = map[string]*respItem{}, map[int]*respItem{}
	}
	a.items = append(a.items, it)
	if it.kind == "function_call" {
		it.call = len(a.names)
		a.names = append(a.names, it.name)
	}
	if it.id != "" {
		a.byID[it.id] = it
	}
	a.byIdx[idx] = it
}

func (a *responsesAssembler) Add(chunk any) string {
	m, ok := chunk.(map[string]any)
	if !ok {
		return ""
	}
	switch m["type"] {
	case "response.output_item.added":
		item, _ := m["item"].(map[string]any)
		idx := len(a.items)
		if f, ok := m["output_index"].(float64); ok {
			idx = int(f)
		}
		it := &respItem{kind: str(item["type"]), id: str(item["id"]), callID: str(item["call_id"]), name: str(item["name"]), raw: item}
		if s := str(item["arguments"]); s != "" {
			it.args.WriteString(s)
		}
		a.add(idx, it)
	case "response.output_text.delta":
		d := str(m["delta"])
		it := a.item(m)
		if it == nil {
			it = &respItem{kind: "message", id: str(m["item_id"])}
			idx := len(a.items)
			if f, ok := m["output_index"].(float64); ok {
				idx = int(f)
			}
			a.add(idx, it)
		}
		it.text.WriteString(d)
		return d
	case "response.function_call_arguments.delta":
		if it := a.item(m); it != nil {
			it.args.WriteString(str(m["delta"]))
		}
	case "response.function_call_arguments.done":
		if it := a.item(m); it != nil {
			if s, ok := m["arguments"].(string); ok {
				it.args.Reset()
				it.args.WriteString(s)
			}
		}
	case "response.output_item.done":
		item, _ := m["item"].(map[string]any)
		if it := a.item(m); it != nil && item != nil && it.kind != "function_call" {
			it.raw = item
		}
		if it := a.item(m); it != nil && it.kind == "function_call" {
			if s, ok := item["arguments"].(string); ok && s != "" {
				it.args.Reset()
				it.args.WriteString(s)
			}
			if n := str(item["name"]); n != "" && it.name == "" {
				it.name = n
				a.names[it.call] = n
			}
			if c := str(item["call_id"]); c != "" {
				it.callID = c
			}
		}
	case "response.completed", "response.incomplete", "response.failed":
		a.done = true
		a.status = strings.TrimPrefix(str(m["type"]), "response.")
	}
	return ""
}

func (a *responsesAssembler) Message() map[string]any {
	out := make([]any, 0, len(a.items))
	for _, it := range a.items {
		switch it.kind {
		case "function_call":
			var args any = it.args.String()
			if it.args.Len() == 0 {
				args = nil // never arrived: the call fails instead of running with {}
			}
			out = append(out, map[string]any{"type": "function_call", "id": it.id, "call_id": it.callID, "name": it.name, "arguments": args})
		case "message":
			out = append(out, map[string]any{"type": "message", "role": "assistant", "id": it.id,
				"content": []any{map[string]any{"type": "output_text", "text": it.text.String()}}})
		default:
			if it.raw != nil {
				out = append(out, it.raw)
			}
		}
	}
	msg := map[string]any{"output": out}
	if a.status != "" {
		msg["status"] = a.status
	}
	return msg
}

func (a *responsesAssembler) Done() bool { return a.done }

func (a *responsesAssembler) CallNames() []string { return a.names }
