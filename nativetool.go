package mcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FunctionTool is one tool as native tool calling sends it to a provider: an
// OpenAI function tool. Its JSON is
//
//	{"function":{"description":...,"name":...,"parameters":{...}},"type":"function"}
//
// (json.Marshal writes the keys in that order), which the Chat Completions API
// takes as it is and the provider adapters convert into their own tool shape.
// [NewFunctionTool] builds it from a [Tool]; [NativeToolContext.Tools] holds it.
type FunctionTool struct {
	// Name is the tool's name, the one the model calls.
	Name string
	// Description is what the model reads about the tool ([Tool.Summary]).
	Description string
	// Parameters is the JSON Schema object of the arguments ([ToolSchema]).
	Parameters map[string]any
}

// NewFunctionTool returns t as a native function tool: its name, its
// [Tool.Summary] as the description and [ToolSchema] as the parameters. The
// schema is a new map, never shared with t. It does not validate t.
func NewFunctionTool(t Tool) FunctionTool {
	return FunctionTool{Name: t.Name, Description: t.Summary(), Parameters: ToolSchema(t)}
}

// functionToolJSON is the wire shape of a FunctionTool, its fields in the
// order json.Marshal sorts the keys of the equivalent map.
type functionToolJSON struct {
	Function functionJSON `json:"function"`
	Type     string       `json:"type"`
}

type functionJSON struct {
	Description string         `json:"description"`
	Name        string         `json:"name"`
	Parameters  map[string]any `json:"parameters"`
}

// MarshalJSON encodes f as {"function":{"description","name","parameters"},
// "type":"function"}: json.Marshal, and a json.Encoder with or without
// SetEscapeHTML, give the same bytes for f as for the equivalent
// map[string]any (keys sorted; nil Parameters is null). It writes HTML
// characters unescaped and leaves escaping them to the caller's encoder, which
// escapes them by default. The error is the encoder's for a parameter value it
// cannot encode.
func (f FunctionTool) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(functionToolJSON{
		Function: functionJSON{Description: f.Description, Name: f.Name, Parameters: f.Parameters},
		Type:     "function",
	})
	if err != nil {
		return nil, fmt.Errorf("function tool %q: %w", f.Name, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// UnmarshalJSON decodes the shape MarshalJSON writes: an object whose "type"
// is "function" and whose "function" object holds "name", "description" and
// "parameters" (each optional; other keys are ignored). JSON null leaves f
// unchanged, as it does for any value; any other JSON that is not such an
// object is an error, and f is left unchanged.
func (f *FunctionTool) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var w struct {
		Function *functionJSON `json:"function"`
		Type     string        `json:"type"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("function tool: %w", err)
	}
	if w.Type != "function" {
		return fmt.Errorf(`function tool: type is %q, want "function"`, w.Type)
	}
	if w.Function == nil {
		return errors.New(`function tool: no "function" object`)
	}
	*f = FunctionTool{Name: w.Function.Name, Description: w.Function.Description, Parameters: w.Function.Parameters}
	return nil
}

var (
	_ json.Marshaler   = FunctionTool{}
	_ json.Unmarshaler = (*FunctionTool)(nil)
)
