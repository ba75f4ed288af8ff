package mcs

// The Anthropic Messages wire format.

import (
	"strings"
)

type anthropicFormat struct{}

func (anthropicFormat) Format() string { return "anthropic-messages" }

func (anthropicFormat) Match(r Output) bool {
	if r.Message == nil {
		return false
	}
	blocks, ok := r.Message["content"].([]any)
	if !ok {
		return false
	}
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && m["type"] == "tool_use" {
			return true
		}
	}
	return false
}

func (anthropicFormat) Extract(r Output) []ToolCall {
	blocks, _ := r.Message["content"].([]any)
	var calls []ToolCall
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if m["type"] != "tool_use" {
			continue
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			continue
		}
		args, err := decodeArguments(name, "input", m["input"])
		calls = append(calls, ToolCall{ID: str(m["id"]), Name: name, Arguments: args, Err: err})
	}
	return calls
}

func (anthropicFormat) History(r Output, calls []CallRecord) []map[string]any {
	var content []any
	blocks, _ := r.Message["content"].([]any)
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && (m["type"] == "text" || m["type"] == "thinking" || m["type"] == "redacted_thinking") {
			content = append(content, m)
		}
	}
	results := make([]any, 0, len(calls))
	for _, o := range calls {
		content = append(content, map[string]any{"type": "tool_use", "id": o.ID, "name": o.Name, "input": nonNil(o.Arguments)})
		res := map[string]any{"type": "tool_result", "tool_use_id": o.ID, "content": outcomeValue(o)}
		if o.Err != nil {
			res["is_error"] = true
		}
		results = append(results, res)
	}
	return []map[string]any{
		{"role": "assistant", "content": content},
		{"role": "user", "content": results},
	}
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (anthropicFormat) MatchChunk(chunk any) bool {
	m, ok := chunk.(map[string]any)
	if !ok {
		return false
	}
	switch m["type"] {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping":
		return true
	}
	return false
}

func (anthropicFormat) NewAssembler() Assembler { return &anthropicAssembler{} }

type antBlock struct {
	kind      string
	id, name  string
	start     map[string]any  // the block as it started
	text      strings.Builder // text, or the thinking of a thinking block
	json      strings.Builder
	input     map[string]any
	signature string // of a thinking block
}

type anthropicAssembler struct {
	blocks []*antBlock
	names  []string // the names of the tool_use blocks, in order
	byIdx  map[int]*antBlock
	done   bool
	stop   string
}

func (a *anthropicAssembler) block(m map[string]any) *antBlock {
	idx := len(a.blocks) - 1
	if f, ok := m["index"].(float64); ok {
		idx = int(f)
	}
	if b := a.byIdx[idx]; b != nil {
		return b
	}
	return nil
}

func (a *anthropicAssembler) Add(chunk any) string {
	m, ok := chunk.(map[string]any)
	if !ok {
		return ""
	}
	switch m["type"] {
	case "content_block_start":
		cb, _ := m["content_block"].(map[string]any)
		b := &antBlock{kind: str(cb["type"]), id: str(cb["id"]), name: str(cb["name"]), start: cb, signature: str(cb["signature"])}
		b.text.WriteString(str(cb["thinking"]))
		if in, ok := cb["input"].(map[string]any); ok && len(in) > 0 {
			b.input = in
		}
		text := str(cb["text"])
		b.text.WriteString(text)
		idx := len(a.blocks)
		if f, ok := m["index"].(float64); ok {
			idx = int(f)
		}
		if a.byIdx == nil {
			a.byIdx = map[int]*antBlock{}
		}
		a.byIdx[idx] = b
		a.blocks = append(a.blocks, b)
		if b.kind == "tool_use" {
			a.names = append(a.names, b.name)
		}
		return text
	case "content_block_delta":
		b := a.block(m)
		if b == nil {
			return ""
		}
		d, _ := m["delta"].(map[string]any)
		switch d["type"] {
		case "text_delta":
			t := str(d["text"])
			b.text.WriteString(t)
			return t
		case "input_json_delta":
			b.json.WriteString(str(d["partial_json"]))
		case "thinking_delta":
			b.text.WriteString(str(d["thinking"])) // not for display
		case "signature_delta":
			b.signature = str(d["signature"])
		}
	case "message_delta":
		if d, ok := m["delta"].(map[string]any); ok {
			if s := str(d["stop_reason"]); s != "" {
				a.stop = s
			}
		}
	case "message_stop":
		a.done = true
	}
	return ""
}

func (a *anthropicAssembler) Message() map[string]any {
	content := make([]any, 0, len(a.blocks))
	for _, b := range a.blocks {
		switch b.kind {
		case "text":
			content = append(content, map[string]any{"type": "text", "text": b.text.String()})
		case "tool_use":
			var input any = map[string]any{}
			if b.json.Len() > 0 {
				var m map[string]any
				if unmarshalJSON([]byte(b.json.String()), &m) == nil && m != nil {
					input = m
				} else {
					input = b.json.String() // incomplete: reported as malformed at extraction
				}
			} else if b.input != nil {
				input = b.input
			}
			content = append(content, map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": input})
		case "thinking":
			// Extended thinking with tool use needs the block back, signature included.
			content = append(content, map[string]any{"type": "thinking", "thinking": b.text.String(), "signature": b.signature})
		default:
			if b.start != nil { // redacted_thinking and server-side blocks, as they came
				content = append(content, b.start)
			}
		}
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if a.stop != "" {
		msg["stop_reason"] = a.stop
	}
	return msg
}

func (a *anthropicAssembler) Done() bool { return a.done }

func (a *anthropicAssembler) CallNames() []string { return a.names }
