package mcs

import (
	"encoding/json"
)

// inputKind says what form a value handed to the kernel had.
type inputKind int

const (
	inputNil   inputKind = iota // nil
	inputText                   // a string
	inputBytes                  // []byte or json.RawMessage
	inputMap                    // a map[string]any
	inputOther                  // any other value, marshalled to JSON
)

// input is a model output or a stream chunk reduced to text or an object.
type input struct {
	kind inputKind
	text string         // the text of a string or bytes, the JSON of another value
	obj  map[string]any // the map, for inputMap
}

// normalize is the one place that reduces what callers hand to ProcessLLMResponse,
// ExtractCalls and StreamBuffer.Add to text or an object: a string is text, a
// map[string]any is an object, []byte and json.RawMessage are their text, and any
// other value (a provider SDK struct) is marshalled to JSON; a value that cannot be
// marshalled gives "". Whether text holding JSON is decoded is the caller's rule.
func normalize(v any) input {
	switch x := v.(type) {
	case nil:
		return input{kind: inputNil}
	case string:
		return input{kind: inputText, text: x}
	case map[string]any:
		return input{kind: inputMap, obj: x}
	case []byte:
		return input{kind: inputBytes, text: string(x)}
	case json.RawMessage:
		return input{kind: inputBytes, text: string(x)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return input{kind: inputOther}
	}
	return input{kind: inputOther, text: string(b)}
}

// dropCalls returns msg without the native calls in drop, matched by call id and
// name, each at most once, in any built-in shape: Chat Completions "tool_calls",
// Responses "function_call" items, Anthropic "tool_use" blocks and Gemini
// "functionCall" parts. A "tool_calls" list left empty is removed.
func dropCalls(msg map[string]any, drop []ToolCall) map[string]any {
	left := append([]ToolCall(nil), drop...)
	match := func(id, name string) bool {
		for i, c := range left {
			if c.Name == name && c.ID == id {
				left = append(left[:i], left[i+1:]...)
				return true
			}
		}
		return false
	}
	filter := func(key string, ident func(m map[string]any) (id, name string, ok bool)) {
		list, ok := msg[key].([]any)
		if !ok {
			return
		}
		out := make([]any, 0, len(list))
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				if id, name, isCall := ident(m); isCall && match(id, name) {
					continue
				}
			}
			out = append(out, item)
		}
		if key == "tool_calls" && len(out) == 0 {
			delete(msg, key)
			return
		}
		msg[key] = out
	}
	filter("tool_calls", func(m map[string]any) (string, string, bool) {
		fn, _ := m["function"].(map[string]any)
		return str(m["id"]), str(fn["name"]), fn != nil
	})
	filter("output", func(m map[string]any) (string, string, bool) {
		id := str(m["call_id"])
		if id == "" {
			id = str(m["id"])
		}
		return id, str(m["name"]), m["type"] == "function_call"
	})
	filter("content", func(m map[string]any) (string, string, bool) {
		return str(m["id"]), str(m["name"]), m["type"] == "tool_use"
	})
	filter("parts", func(m map[string]any) (string, string, bool) {
		fc, ok := m["functionCall"].(map[string]any)
		return str(fc["id"]), str(fc["name"]), ok
	})
	return msg
}
