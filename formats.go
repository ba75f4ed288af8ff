package mcs

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The built-in wire formats. Each is stateless and safe for concurrent use.

// ChatCompletionsFormat returns the OpenAI Chat Completions format (also used by
// Ollama, vLLM and most OpenAI-compatible servers): an assistant message with a
// "tool_calls" key. Arguments may be JSON text (OpenAI) or an object (Ollama). A
// message that carries the key is never parsed as text.
func ChatCompletionsFormat() ExtractionStrategy { return chatFormat{} }

// ResponsesFormat returns the OpenAI Responses API format: {"output":[items]} with
// "function_call" items.
func ResponsesFormat() ExtractionStrategy { return responsesFormat{} }

// AnthropicFormat returns the Anthropic Messages format: an assistant message whose
// content blocks include "tool_use" blocks.
func AnthropicFormat() ExtractionStrategy { return anthropicFormat{} }

// GeminiFormat returns the Google Gemini format: {"role":"model","parts":[...]} with
// "functionCall" parts.
func GeminiFormat() ExtractionStrategy { return geminiFormat{} }

// DefaultExtractionStrategies returns the default chain over ps: Chat Completions,
// Responses, Anthropic Messages, Gemini, then text.
func DefaultExtractionStrategies(ps PromptStrategy) []ExtractionStrategy {
	return []ExtractionStrategy{chatFormat{}, responsesFormat{}, anthropicFormat{}, geminiFormat{}, TextFormat(ps)}
}

// ResultText renders a tool result as the text the model reads: a string as is,
// []byte and json.RawMessage as their text, an error value as its message, anything
// else as compact JSON (or, when it cannot be encoded, as fmt.Sprint prints it).
func ResultText(v any) string {
	switch r := v.(type) {
	case string:
		return r
	case []byte:
		return string(r)
	case json.RawMessage:
		return string(r)
	case error:
		return r.Error()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func outcomeText(o CallOutcome) string {
	if o.Err != nil {
		return o.Err.Error()
	}
	return ResultText(o.Result)
}

// argumentsJSON renders arguments as JSON text, as the OpenAI formats carry them.
func argumentsJSON(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// decodeArguments reads a native call's arguments: a JSON object, JSON text holding
// an object, or nothing (meaning {}).
func decodeArguments(tool, field string, v any) (map[string]any, error) {
	switch a := v.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return a, nil
	case string:
		if strings.TrimSpace(a) == "" {
			return map[string]any{}, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(a), &m); err != nil {
			return nil, fmt.Errorf("%w: the %s of the call to %q are not valid JSON: %v", ErrMalformedCall, field, tool, err)
		}
		if m == nil {
			return nil, &ArgumentsError{Tool: tool, Field: field, Got: "null"}
		}
		return m, nil
	default:
		return nil, &ArgumentsError{Tool: tool, Field: field, Got: jsonTypeName(v)}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// ---- Chat Completions ----

type chatFormat struct{}

func (chatFormat) Format() string { return "openai-chat" }

func (chatFormat) Match(r Reply) bool {
	if r.Message == nil {
		return false
	}
	_, ok := r.Message["tool_calls"]
	return ok
}

func (chatFormat) Extract(r Reply) []ToolCall {
	list, _ := r.Message["tool_calls"].([]any)
	calls := make([]ToolCall, 0, len(list))
	for _, item := range list {
		tc, _ := item.(map[string]any)
		fn, _ := tc["function"].(map[string]any)
		name, ok := fn["name"].(string)
		if !ok || name == "" {
			continue // not a call
		}
		args, err := decodeArguments(name, "arguments", fn["arguments"])
		calls = append(calls, ToolCall{ID: str(tc["id"]), Name: name, Arguments: args, Err: err})
	}
	return calls
}

func (chatFormat) History(r Reply, outcomes []CallOutcome) []map[string]any {
	tcs := make([]any, 0, len(outcomes))
	for _, o := range outcomes {
		tcs = append(tcs, map[string]any{
			"id":   o.Call.ID,
			"type": "function",
			"function": map[string]any{
				"name":      o.Call.Name,
				"arguments": argumentsJSON(o.Call.Arguments),
			},
		})
	}
	var content any
	if c, ok := r.Message["content"]; ok && c != "" {
		content = c
	}
	msgs := make([]map[string]any, 0, len(outcomes)+1)
	msgs = append(msgs, map[string]any{"role": "assistant", "content": content, "tool_calls": tcs})
	for _, o := range outcomes {
		msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": o.Call.ID, "content": outcomeText(o)})
	}
	return msgs
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
			if c.argsObj != nil {
				args = c.argsObj
			}
			tcs = append(tcs, map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": args}})
		}
		msg["tool_calls"] = tcs
	}
	return msg
}

func (a *chatAssembler) Done() bool { return a.done }

func (a *chatAssembler) Forming() []string { return a.names }

// ---- Responses API ----

type responsesFormat struct{}

func (responsesFormat) Format() string { return "openai-responses" }

func (responsesFormat) Match(r Reply) bool {
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

func (responsesFormat) Extract(r Reply) []ToolCall {
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
		args, err := decodeArguments(name, "arguments", m["arguments"])
		calls = append(calls, ToolCall{ID: id, Name: name, Arguments: args, Err: err})
	}
	return calls
}

// History returns the output items that are not function calls (messages, and
// reasoning items, which reasoning models need back with the calls that followed
// them), then per owned call its function_call item (with the item id the model
// gave it) and its function_call_output.
func (responsesFormat) History(r Reply, outcomes []CallOutcome) []map[string]any {
	msgs := make([]map[string]any, 0, 2*len(outcomes)+1)
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
	for _, o := range outcomes {
		call := map[string]any{"type": "function_call", "call_id": o.Call.ID, "name": o.Call.Name, "arguments": argumentsJSON(o.Call.Arguments)}
		if id := itemIDs[o.Call.ID]; id != "" {
			call["id"] = id
		}
		msgs = append(msgs, call, map[string]any{"type": "function_call_output", "call_id": o.Call.ID, "output": outcomeText(o)})
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
			out = append(out, map[string]any{"type": "function_call", "id": it.id, "call_id": it.callID, "name": it.name, "arguments": it.args.String()})
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

func (a *responsesAssembler) Forming() []string { return a.names }

// ---- Anthropic Messages ----

type anthropicFormat struct{}

func (anthropicFormat) Format() string { return "anthropic-messages" }

func (anthropicFormat) Match(r Reply) bool {
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

func (anthropicFormat) Extract(r Reply) []ToolCall {
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

func (anthropicFormat) History(r Reply, outcomes []CallOutcome) []map[string]any {
	var content []any
	blocks, _ := r.Message["content"].([]any)
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && (m["type"] == "text" || m["type"] == "thinking" || m["type"] == "redacted_thinking") {
			content = append(content, m)
		}
	}
	results := make([]any, 0, len(outcomes))
	for _, o := range outcomes {
		content = append(content, map[string]any{"type": "tool_use", "id": o.Call.ID, "name": o.Call.Name, "input": nonNil(o.Call.Arguments)})
		res := map[string]any{"type": "tool_result", "tool_use_id": o.Call.ID, "content": outcomeText(o)}
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
				if json.Unmarshal([]byte(b.json.String()), &m) == nil && m != nil {
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

func (a *anthropicAssembler) Forming() []string { return a.names }

// ---- Gemini ----

type geminiFormat struct{}

func (geminiFormat) Format() string { return "gemini" }

func (geminiFormat) Match(r Reply) bool {
	if r.Message == nil {
		return false
	}
	parts, ok := r.Message["parts"].([]any)
	if !ok {
		return false
	}
	for _, p := range parts {
		if hasKey(p, "functionCall") {
			return true
		}
	}
	return false
}

func (geminiFormat) Extract(r Reply) []ToolCall {
	parts, _ := r.Message["parts"].([]any)
	var calls []ToolCall
	for _, p := range parts {
		m, _ := p.(map[string]any)
		fc, ok := m["functionCall"].(map[string]any)
		if !ok {
			continue
		}
		name, ok := fc["name"].(string)
		if !ok || name == "" {
			continue
		}
		args, err := decodeArguments(name, "args", fc["args"])
		calls = append(calls, ToolCall{ID: str(fc["id"]), Name: name, Arguments: args, Err: err})
	}
	return calls
}

// History returns the model turn with its parts that are not calls (text and
// thoughts) and one functionCall part per owned call, which keeps the fields of the
// part the model wrote (a thoughtSignature, which Gemini requires back), then the
// user turn with one functionResponse per call.
func (geminiFormat) History(r Reply, outcomes []CallOutcome) []map[string]any {
	var parts []any
	var callParts []map[string]any
	src, _ := r.Message["parts"].([]any)
	for _, p := range src {
		pm, ok := p.(map[string]any)
		switch {
		case !ok:
		case hasKey(pm, "functionCall"):
			callParts = append(callParts, pm)
		default:
			parts = append(parts, pm)
		}
	}
	responses := make([]any, 0, len(outcomes))
	next := 0 // outcomes are an ordered subsequence of callParts
	for _, o := range outcomes {
		fc := map[string]any{"name": o.Call.Name, "args": nonNil(o.Call.Arguments)}
		fr := map[string]any{"name": o.Call.Name}
		if o.Call.ID != "" {
			fc["id"] = o.Call.ID
			fr["id"] = o.Call.ID
		}
		part := map[string]any{}
		for ; next < len(callParts); next++ {
			orig, _ := callParts[next]["functionCall"].(map[string]any)
			if orig["name"] == o.Call.Name && str(orig["id"]) == o.Call.ID {
				for k, v := range callParts[next] {
					part[k] = v
				}
				next++
				break
			}
		}
		part["functionCall"] = fc
		parts = append(parts, part)
		if o.Err != nil {
			fr["response"] = map[string]any{"error": o.Err.Error()}
		} else {
			fr["response"] = map[string]any{"result": ResultText(o.Result)}
		}
		responses = append(responses, map[string]any{"functionResponse": fr})
	}
	return []map[string]any{
		{"role": "model", "parts": parts},
		{"role": "user", "parts": responses},
	}
}

func (geminiFormat) MatchChunk(chunk any) bool {
	m, ok := chunk.(map[string]any)
	if !ok {
		return false
	}
	_, c := m["candidates"]
	_, p := m["parts"]
	return c || p
}

func (geminiFormat) NewAssembler() Assembler { return &geminiAssembler{} }

type geminiAssembler struct {
	parts []any       // *geminiText or a part as it came
	text  *geminiText // the text part being extended
	names []string
	done  bool
}

// geminiText is a run of text parts merged into one: answer text, or the model's
// thoughts (never displayed), with the last thought signature that came with it.
type geminiText struct {
	b         strings.Builder
	thought   bool
	signature string
}

func (a *geminiAssembler) Add(chunk any) string {
	m, ok := chunk.(map[string]any)
	if !ok {
		return ""
	}
	content := m
	if cands, ok := m["candidates"].([]any); ok {
		if len(cands) == 0 {
			return ""
		}
		c0, _ := cands[0].(map[string]any)
		content, _ = c0["content"].(map[string]any)
		if fr, ok := c0["finishReason"].(string); ok && fr != "" {
			a.done = true
		}
	}
	parts, _ := content["parts"].([]any)
	var out strings.Builder
	for _, p := range parts {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if t, ok := pm["text"].(string); ok {
			thought := pm["thought"] == true
			if a.text == nil || a.text.thought != thought {
				a.text = &geminiText{thought: thought}
				a.parts = append(a.parts, a.text)
			}
			a.text.b.WriteString(t)
			if sig := str(pm["thoughtSignature"]); sig != "" {
				a.text.signature = sig
			}
			if !thought {
				out.WriteString(t)
			}
			continue
		}
		a.parts = append(a.parts, pm) // a call keeps its thoughtSignature
		a.text = nil
		if fc, ok := pm["functionCall"].(map[string]any); ok {
			a.names = append(a.names, str(fc["name"]))
		}
	}
	return out.String()
}

func (a *geminiAssembler) Message() map[string]any {
	parts := make([]any, 0, len(a.parts))
	for _, p := range a.parts {
		t, ok := p.(*geminiText)
		if !ok {
			parts = append(parts, p)
			continue
		}
		part := map[string]any{"text": t.b.String()}
		if t.thought {
			part["thought"] = true
		}
		if t.signature != "" {
			part["thoughtSignature"] = t.signature
		}
		parts = append(parts, part)
	}
	return map[string]any{"role": "model", "parts": parts}
}

func (a *geminiAssembler) Done() bool { return a.done }

func (a *geminiAssembler) Forming() []string { return a.names }
