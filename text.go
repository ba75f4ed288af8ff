package mcs

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// TextFormat returns the plain-text wire format over ps (nil means the default
// prompt strategy): calls are written into the reply's text in ps's dialect. It
// matches plain text, and native messages that carry no native call, whose text
// content it decodes. It is also the format a BaseDriver uses to decode text calls
// while streaming.
//
// With the built-in JSON codec a call is a complete top-level JSON object whose
// tool-name field (the first of ps's tool-name aliases present in it) holds a
// non-empty string; when that field is not the first alias, the object must also
// have an arguments field, or hold nothing else and stand in a code fence, so that
// a quoted record such as {"id":5,"name":"Bella"} is data. The object may sit in
// prose or in a code fence, and is repaired (fences, trailing commas, single
// quotes, bare keys, Python literals, comments, then the codec's healing rules)
// when it is not strict JSON.
func TextFormat(ps PromptStrategy) StreamingFormat {
	if ps == nil {
		ps = DefaultPromptStrategy()
	}
	return textFormat{ps: ps}
}

type textFormat struct{ ps PromptStrategy }

func (textFormat) Format() string { return "text" }

func (textFormat) Match(Output) bool { return true }

// Extract returns every call of the text in order, including the calls that named a
// tool but cannot run as written (Err set: not JSON even after repair, two tool
// names, never closed), so that a reply gives the same outcome whole and streamed.
func (f textFormat) Extract(r Output) []ToolCall {
	if r.Text == "" {
		return nil
	}
	dec := f.ps.NewDecoder()
	calls := dec.Finish(r.Text)
	if bad := dec.Malformed(); len(bad) > 0 {
		calls = append(calls, bad...)
		sort.SliceStable(calls, func(i, j int) bool { return calls[i].Start < calls[j].Start })
	}
	return calls
}

func (f textFormat) History(r Output, calls []CallRecord) []map[string]any {
	msgs := make([]map[string]any, 0, len(calls)+1)
	msgs = append(msgs, map[string]any{"role": "assistant", "content": r.Text})
	for _, o := range calls {
		msgs = append(msgs, f.ps.ResultMessage(o.ToolCall, outcomeText(o), o.Err != nil))
	}
	return msgs
}

func (textFormat) MatchChunk(chunk any) bool {
	_, ok := chunk.(string)
	return ok
}

func (textFormat) NewAssembler() Assembler { return &textAssembler{} }

// textAssembler collects a plain-text stream. Text has no end signal of its own:
// the stream ends with StreamBuffer.Finish.
type textAssembler struct {
	b strings.Builder
}

func (a *textAssembler) Add(chunk any) string {
	s, _ := chunk.(string)
	a.b.WriteString(s)
	return s
}

func (a *textAssembler) Message() map[string]any {
	return map[string]any{"role": "assistant", "content": a.b.String()}
}

func (a *textAssembler) Done() bool { return false }

func (a *textAssembler) CallNames() []string { return nil }

// NewOutput turns a model output into an Output. A string is text. A map is a native
// message; a Chat Completions envelope ({"choices":[{"message":...}]}), a Gemini
// envelope ({"candidates":[{"content":...}]}) and an Ollama envelope
// ({"message":...}) are unwrapped to their first message. A map without any key of
// a built-in format (a text call the caller decoded, or a format only a user's
// format knows) is the Message, and its JSON is the Text. []byte and
// json.RawMessage are decoded when they hold a JSON object or a JSON string and are
// text otherwise. An Output or *Output is used as is. Any other value is marshalled to
// JSON and decoded.
func NewOutput(response any) Output {
	switch v := response.(type) {
	case Output:
		return v
	case *Output:
		if v == nil {
			return Output{}
		}
		return *v
	}
	in := normalize(response)
	switch in.kind {
	case inputNil:
		return Output{}
	case inputText:
		return Output{Text: in.text}
	case inputMap:
		if !isNativeMessage(in.obj) {
			// A bare object, such as a text call the caller decoded, or a message of a
			// format only a user knows: its JSON is the text.
			b, err := json.Marshal(in.obj)
			if err != nil {
				return Output{Message: in.obj}
			}
			return Output{Message: in.obj, Text: string(b)}
		}
		return replyFromMap(in.obj)
	}
	if in.text == "" {
		return Output{}
	}
	return replyFromBytes([]byte(in.text))
}

// NewReply is the former name of [NewOutput].
//
// Deprecated: use NewOutput.
func NewReply(response any) Output { return NewOutput(response) }

func replyFromBytes(b []byte) Output {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		var m map[string]any
		if unmarshalJSON(t, &m) == nil {
			if !isNativeMessage(m) {
				return Output{Message: m, Text: string(b)}
			}
			return replyFromMap(m)
		}
	}
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			return Output{Text: s}
		}
	}
	return Output{Text: string(b)}
}

// isNativeMessage reports whether m has the keys of a provider message or envelope.
func isNativeMessage(m map[string]any) bool {
	for _, k := range [...]string{"role", "content", "tool_calls", "output", "parts", "choices", "candidates", "message"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func replyFromMap(m map[string]any) Output {
	if ch, ok := m["choices"].([]any); ok && len(ch) > 0 {
		if c0, ok := ch[0].(map[string]any); ok {
			if msg, ok := c0["message"].(map[string]any); ok {
				m = msg
			}
		}
	} else if cands, ok := m["candidates"].([]any); ok && len(cands) > 0 {
		if c0, ok := cands[0].(map[string]any); ok {
			if content, ok := c0["content"].(map[string]any); ok {
				m = content
			}
		}
	} else if msg, ok := m["message"].(map[string]any); ok && m["role"] == nil {
		m = msg // Ollama's /api/chat envelope
	}
	return Output{Message: m, Text: messageText(m)}
}

// isTextBlock reports whether a content block or part is answer text: typed "text"
// or "output_text", or untyped. Thinking and reasoning blocks (which some servers
// also give a "text" field) are the model thinking aloud: a call written there
// never runs.
func isTextBlock(m map[string]any) bool {
	switch t := m["type"].(type) {
	case nil:
		return true
	case string:
		return t == "text" || t == "output_text"
	}
	return false
}

// messageText collects the answer text of a native message in any built-in shape;
// reasoning (Anthropic thinking blocks, Responses reasoning items, Gemini thought
// parts, typed reasoning parts) is left out.
func messageText(m map[string]any) string {
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, blk := range c {
			bm, _ := blk.(map[string]any)
			if t, ok := bm["text"].(string); ok && isTextBlock(bm) {
				b.WriteString(t)
			}
		}
		return b.String()
	}
	if out, ok := m["output"].([]any); ok {
		var b strings.Builder
		for _, item := range out {
			im, _ := item.(map[string]any)
			if im["type"] != "message" {
				continue
			}
			parts, _ := im["content"].([]any)
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				if t, ok := pm["text"].(string); ok && isTextBlock(pm) {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	if parts, ok := m["parts"].([]any); ok {
		var b strings.Builder
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok && pm["thought"] != true {
				b.WriteString(t)
			}
		}
		return b.String()
	}
	return ""
}
