package mcs

// The OpenAI Chat Completions wire format (also Ollama, vLLM and most
// OpenAI-compatible servers).

import (
	"strings"
)

type chatFormat struct{}

func (chatFormat) Format() string { return "openai-chat" }

func (chatFormat) Match(r Output) bool {
	if r.Message == nil {
		return false
	}
	_, ok := r.Message["tool_calls"]
	return ok
}

func (chatFormat) Extract(r Output) []ToolCall {
	list, _ := r.Message["tool_calls"].([]any)
	calls := make([]ToolCall, 0, len(list))
	for _, item := range list {
		tc, _ := item.(map[string]any)
		fn, _ := tc["function"].(map[string]any)
		name, ok := fn["name"].(string)
		if !ok || name == "" {
			continue // not a call
		}
		raw, present := fn["arguments"]
		args, err := decodeArguments(name, "arguments", raw)
		if present && raw == nil {
			args, err = nil, missingArguments(name)
		}
		calls = append(calls, ToolCall{ID: str(tc["id"]), Name: name, Arguments: args, Err: err})
	}
	return calls
}

// History returns the assistant message with one tool call per outcome and one
// "tool" message per result. When the model sent arguments as JSON objects (Ollama's
// /api/chat) they stay objects, as Ollama expects them back, and each tool message
// also names its tool ("tool_name"); otherwise they are JSON text, as OpenAI sends
// them. A tool call the model wrote in the plain OpenAI shape (id, type and a
// function with name and arguments, nothing else) whose arguments decoded is sent
// back as the model wrote it, the same map; any other is rebuilt.
func (chatFormat) History(r Output, calls []CallRecord) []map[string]any {
	objects := objectArguments(r.Message)
	orig, _ := r.Message["tool_calls"].([]any)
	next := 0 // outcomes are an ordered subsequence of the calls the model wrote
	tcs := make([]any, 0, len(calls))
	var idsBuf [4]any
	ids := idsBuf[:0] // the boxed ids, reused by the tool messages
	for _, o := range calls {
		var src map[string]any
		for ; next < len(orig); next++ {
			tc, _ := orig[next].(map[string]any)
			fn, _ := tc["function"].(map[string]any)
			if fn != nil && fn["name"] == o.Name && str(tc["id"]) == o.ID {
				src = tc
				next++
				break
			}
		}
		if src != nil && !objects && o.ToolCall.Err == nil && plainChatCall(src) {
			tcs = append(tcs, src)
			ids = append(ids, src["id"])
			continue
		}
		var args any = argumentsJSON(o.Arguments)
		if objects {
			args = nonNil(o.Arguments)
		}
		ids = append(ids, o.ID)
		tcs = append(tcs, map[string]any{
			"id":   ids[len(ids)-1],
			"type": "function",
			"function": map[string]any{
				"name":      o.Name,
				"arguments": args,
			},
		})
	}
	var content any
	if c, ok := r.Message["content"]; ok && c != "" {
		content = c
	}
	msgs := make([]map[string]any, 0, len(calls)+1)
	msgs = append(msgs, map[string]any{"role": "assistant", "content": content, "tool_calls": tcs})
	for k, o := range calls {
		m := map[string]any{"role": "tool", "tool_call_id": ids[k], "content": outcomeValue(o)}
		if objects {
			m["tool_name"] = o.Name
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// plainChatCall reports whether tc is a tool call in exactly the OpenAI shape:
// {"id": string, "type": "function", "function": {"name": string, "arguments":
// string}}.
func plainChatCall(tc map[string]any) bool {
	if len(tc) != 3 || tc["type"] != "function" {
		return false
	}
	if _, ok := tc["id"].(string); !ok {
		return false
	}
	fn, _ := tc["function"].(map[string]any)
	if len(fn) != 2 {
		return false
	}
	_, isName := fn["name"].(string)
	_, isArgs := fn["arguments"].(string)
	return isName && isArgs
}

// objectArguments reports whether the tool calls of msg carry their arguments as
// JSON objects (Ollama) rather than JSON text (OpenAI).
func objectArguments(msg map[string]any) bool {
	list, _ := msg["tool_calls"].([]any)
	for _, item := range list {
		tc, _ := item.(map[string]any)
		fn, _ := tc["function"].(map[string]any)
		if _, ok := fn["arguments"].(map[string]any); ok {
			return true
		}
	}
	return false
}

func (chatFormat) MatchChunk(chunk any) bool {
	m, ok := chunk.(map[string]any)
	if !ok {
		return false
	}
	if ch, ok := m["choices"].([]any); ok {
		return len(ch) == 0 || hasKey(ch[0], "delta")
	}
	if m["object"] == "chat.completion.chunk" {
		return true
	}
	if hasKey(m, "type") || hasKey(m, "parts") {
		return false
	}
	if msg, ok := m["message"].(map[string]any); ok { // Ollama's /api/chat chunk
		m = msg
	}
	_, hasCalls := m["tool_calls"]
	_, hasContent := m["content"]
	_, hasRole := m["role"]
	return hasCalls || hasContent || hasRole
}

func hasKey(v any, k string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[k]
	return ok
}

func (chatFormat) NewAssembler() Assembler { return &chatAssembler{} }

type chatCall struct {
	pos      int // index in chatAssembler.calls
	id, name string
	args     strings.Builder
	argsObj  map[string]any // Ollama streams arguments as an object
}

type chatAssembler struct {
	content strings.Builder
	calls   []*chatCall
	names   []string // names[i] is calls[i].name
	byIndex map[int]*chatCall
	done    bool
}

func (a *chatAssembler) Add(chunk any) string {
	m, ok := chunk.(map[string]any)
	if !ok {
		return ""
	}
	delta := m
	if ch, ok := m["choices"].([]any); ok {
		if len(ch) == 0 {
			return ""
		}
		c0, _ := ch[0].(map[string]any)
		delta, _ = c0["delta"].(map[string]any)
		if fr, ok := c0["finish_reason"].(string); ok && fr != "" {
			a.done = true
		}
	} else {
		if fr, ok := m["finish_reason"].(string); ok && fr != "" {
			a.done = true
		}
		if d, ok := m["done"].(bool); ok && d { // Ollama
			a.done = true
		}
		if msg, ok := m["message"].(map[string]any); ok { // Ollama chunk
			delta = msg
		}
	}
	text, _ := delta["content"].(string)
	a.content.WriteString(text)
	tcs, _ := delta["tool_calls"].([]any)
	for _, item := range tcs {
		tc, _ := item.(map[string]any)
		fn, _ := tc["function"].(map[string]any)
		name, _ := fn["name"].(string)
		id, _ := tc["id"].(string)
		var c *chatCall
		if f, ok := tc["index"].(float64); ok {
			// OpenAI: fragments of one call share its index.
			c = a.byIndex[int(f)]
			if c == nil {
				c = a.newCall()
				if a.byIndex == nil {
					a.byIndex = map[int]*chatCall{}
				}
				a.byIndex[int(f)] = c
			}
		} else if name != "" || id != "" || len(a.calls) == 0 {
			c = a.newCall() // Ollama: each call arrives whole, without an index
		} else {
			c = a.calls[len(a.calls)-1] // a bare continuation of the last call
		}
		if id != "" && c.id == "" {
			c.id = id
		}
		if name != "" && c.name == "" {
			c.name = name
			a.names[c.pos] = name
		}
		switch args := fn["arguments"].(type) {
		case string:
			c.args.WriteString(args)
		case map[string]any:
			c.argsObj = args
		}
	}
	return text
}

func (a *chatAssembler) newCall() *chatCall {
	c := &chatCall{pos: len(a.calls)}
	a.calls = append(a.calls, c)
	a.names = append(a.names, "")
	return c
}

func (a *chatAssembler) Message() map[string]any {
	msg := map[string]any{"role": "assistant"}
	if a.content.Len() > 0 {
		msg["content"] = a.content.String()
	} else {
		msg["content"] = nil
	}
	if len(a.calls) > 0 {
		tcs := make([]any, 0, len(a.calls))
		for _, c := range a.calls {
			var args any = c.args.String()
			switch {
			case c.argsObj != nil:
				args = c.argsObj
			case c.args.Len() == 0:
				args = nil // never arrived: the call fails instead of running with {}
			}
			tcs = append(tcs, map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": args}})
		}
		msg["tool_calls"] = tcs
	}
	return msg
}

func (a *chatAssembler) Done() bool { return a.done }

func (a *chatAssembler) CallNames() []string { return a.names }
