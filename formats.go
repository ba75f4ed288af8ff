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
func ChatCompletionsFormat() StreamingFormat { return chatFormat{} }

// ResponsesFormat returns the OpenAI Responses API format: {"output":[items]} with
// "function_call" items.
func ResponsesFormat() StreamingFormat { return responsesFormat{} }

// AnthropicFormat returns the Anthropic Messages format: an assistant message whose
// content blocks include "tool_use" blocks.
func AnthropicFormat() StreamingFormat { return anthropicFormat{} }

// GeminiFormat returns the Google Gemini format: {"role":"model","parts":[...]} with
// "functionCall" parts.
func GeminiFormat() StreamingFormat { return geminiFormat{} }

// DefaultFormats returns the default chain over ps (nil means the default prompt
// strategy): Chat Completions, Responses, Anthropic Messages, Gemini, then text.
// Every one of them streams. The slice is the caller's.
func DefaultFormats(ps PromptStrategy) []WireFormat {
	return []WireFormat{chatFormat{}, responsesFormat{}, anthropicFormat{}, geminiFormat{}, TextFormat(ps)}
}

// DefaultExtractionStrategies returns the default chain over ps, as
// [DefaultFormats] does.
//
// Deprecated: use DefaultFormats.
func DefaultExtractionStrategies(ps PromptStrategy) []ExtractionStrategy {
	return []ExtractionStrategy{chatFormat{}, responsesFormat{}, anthropicFormat{}, geminiFormat{}, TextFormat(ps)}
}

// defaultStreaming is the default chain as streaming formats.
func defaultStreaming(ps PromptStrategy) []StreamingFormat {
	return []StreamingFormat{chatFormat{}, responsesFormat{}, anthropicFormat{}, geminiFormat{}, TextFormat(ps)}
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

// outcomeValue is outcomeText as an interface value; a string result is passed on
// as the value it already is, without boxing it again.
func outcomeValue(o CallRecord) any {
	if o.Err == nil {
		if _, ok := o.Result.(string); ok {
			return o.Result
		}
	}
	return outcomeText(o)
}

func outcomeText(o CallRecord) string {
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
	return string(appendArguments(make([]byte, 0, 64), args))
}

// appendArguments appends args as JSON to b: by the reflection-free encoder when it
// can, by encoding/json otherwise, and {} for what cannot be encoded at all.
func appendArguments(b []byte, args map[string]any) []byte {
	if out, ok := appendJSON(b, args, 0); ok {
		return out
	}
	enc, err := json.Marshal(args)
	if err != nil {
		return append(b, "{}"...)
	}
	return append(b, enc...)
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
		if m, ok := decodeObjectText(a); ok {
			return m, nil
		}
		var m map[string]any
		if err := unmarshalJSON([]byte(a), &m); err != nil {
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

// missingArguments is the error of a native call whose arguments are null: in a
// stream, arguments that never arrived.
func missingArguments(tool string) error {
	return fmt.Errorf("%w: the arguments of the call to %q never arrived (null); send them as a JSON object, {} when there are none", ErrMalformedCall, tool)
}
