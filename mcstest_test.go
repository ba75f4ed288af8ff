package mcs_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/tools"
)

type weatherIn struct {
	City string `json:"city"`
}

// TestKernelConformsToTheKit runs the kernel's own implementations through the
// conformance kit: BaseDriver, every built-in wire format, the default prompt
// codec and a pass-through middleware.
func TestKernelConformsToTheKit(t *testing.T) {
	table := tools.New(mcs.Meta{ID: "test/weather", Name: "Weather", Version: "1"})
	tools.Add(table, "get_weather", "Weather for a city.", func(_ context.Context, in weatherIn) (string, error) {
		return "sunny in " + in.City, nil
	})
	probes := []mcstest.Probe{
		{Tool: "get_weather", Args: map[string]any{"city": "Paris"}},
		{Tool: "get_weather", Args: map[string]any{"city": 1.0}, Invalid: true},
	}
	for name, td := range map[string]mcs.ToolDriver{
		"BaseDriver":                     mcs.NewBaseDriver(table),
		"BaseDriver with its middleware": mcs.NewBaseDriver(table, mcs.WithMiddleware(passThrough())),
	} {
		if err := mcstest.TestToolDriver(td, probes...); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	evs := []event{textEv("Let me see."), callEv("c1", "echo", `{"text":"n"}`), callEv("c2", "web_search", `{"q":"go"}`)}
	names := []string{"echo", "web_search"}
	formats := []struct {
		f      mcs.StreamingFormat
		whole  map[string]any
		chunks []string
	}{
		{mcs.ChatCompletionsFormat(), map[string]any{"role": "assistant", "content": "Let me see.", "tool_calls": []any{
			map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"n"}`}},
			map[string]any{"id": "c2", "type": "function", "function": map[string]any{"name": "web_search", "arguments": `{"q":"go"}`}}}},
			chatChunks(evs)},
		{mcs.ResponsesFormat(), map[string]any{"output": []any{
			map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "Let me see."}}},
			map[string]any{"type": "function_call", "call_id": "c1", "name": "echo", "arguments": `{"text":"n"}`},
			map[string]any{"type": "function_call", "call_id": "c2", "name": "web_search", "arguments": `{"q":"go"}`}}},
			responsesChunks(evs)},
		{mcs.AnthropicFormat(), map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Let me see."},
			map[string]any{"type": "tool_use", "id": "c1", "name": "echo", "input": map[string]any{"text": "n"}},
			map[string]any{"type": "tool_use", "id": "c2", "name": "web_search", "input": map[string]any{"q": "go"}}}},
			anthropicChunks(evs)},
		{mcs.GeminiFormat(), map[string]any{"role": "model", "parts": []any{
			map[string]any{"text": "Let me see."},
			map[string]any{"functionCall": map[string]any{"id": "c1", "name": "echo", "args": map[string]any{"text": "n"}}},
			map[string]any{"functionCall": map[string]any{"id": "c2", "name": "web_search", "args": map[string]any{"q": "go"}}}}},
			geminiChunks(evs)},
	}
	for _, tt := range formats {
		textOnly := []event{textEv("Just text.")}
		var only []string
		switch tt.f.Format() {
		case mcs.ChatCompletionsFormat().Format():
			only = chatChunks(textOnly)
		case mcs.ResponsesFormat().Format():
			only = responsesChunks(textOnly)
		case mcs.AnthropicFormat().Format():
			only = anthropicChunks(textOnly)
		default:
			only = geminiChunks(textOnly)
		}
		err := mcstest.TestWireFormat(tt.f,
			mcstest.Sample{Output: tt.whole, Chunks: anys(tt.chunks), Calls: names},
			mcstest.Sample{Chunks: anys(only), Calls: []string{}})
		if err != nil {
			t.Errorf("%s: %v", tt.f.Format(), err)
		}
	}

	texts := []string{
		`Let me look. {"tool": "get_weather", "arguments": {"city": "Paris"}} One moment.`,
		"Fenced:\n```json\n{\"tool\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\nand after.",
		`Two: {"tool": "a", "arguments": {}} {"tool": "b", "arguments": {"x": [1, 2, {"y": "}"}]}}`,
		`Broken: {"tool": "get_weather", "arguments": {"city": } and on`,
		`<think>{"tool": "hidden"}</think> Prose with {braces} and "quotes" {"not": "a call"}.`,
		`Unclosed at the end: {"tool": "get_weather", "arguments": {"city": "Oslo"`,
	}
	for _, ps := range []mcs.PromptStrategy{mcs.DefaultPromptStrategy()} {
		if err := mcstest.TestPromptStrategy(ps, texts...); err != nil {
			t.Error(err)
		}
	}
	samples := make([]mcstest.Sample, len(texts))
	for i, text := range texts {
		samples[i] = mcstest.Sample{Output: text}
	}
	if err := mcstest.TestWireFormat(mcs.TextFormat(nil), samples...); err != nil {
		t.Errorf("text: %v", err)
	}
	if err := mcstest.TestMiddleware(passThrough()); err != nil {
		t.Error(err)
	}
}
