package mcs

// The Google Gemini wire format.

import (
	"strings"
)

type geminiFormat struct{}

func (geminiFormat) Format() string { return "gemini" }

func (geminiFormat) Match(r Output) bool {
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

func (geminiFormat) Extract(r Output) []ToolCall {
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
func (geminiFormat) History(r Output, calls []CallRecord) []map[string]any {
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
	responses := make([]any, 0, len(calls))
	next := 0 // outcomes are an ordered subsequence of callParts
	for _, o := range calls {
		fc := map[string]any{"name": o.Name, "args": nonNil(o.Arguments)}
		fr := map[string]any{"name": o.Name}
		if o.ID != "" {
			fc["id"] = o.ID
			fr["id"] = o.ID
		}
		part := map[string]any{}
		for ; next < len(callParts); next++ {
			orig, _ := callParts[next]["functionCall"].(map[string]any)
			if orig["name"] == o.Name && str(orig["id"]) == o.ID {
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

func (a *geminiAssembler) CallNames() []string { return a.names }
