// Package budget measures what a driver sends to a model with every request:
// the text-mode system message, which inlines every tool, and in native mode
// the system message and the tool objects, in bytes and estimated tokens, with
// warnings for a listing too large for a provider or a model. It asks no model
// and sends nothing; the command line shows it as `mcs tools --budget`.
//
// It replaces the kernel's mcs.MeasureBudget (now [Measure]), mcs.Budget and
// mcs.EstimateTokens: no driver or middleware needs them, only the tools that
// show what a stack costs.
package budget

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcs-go/mcs"
)

// Limits of a prompt that [Measure] warns about by default.
const (
	// MaxNativeTools is the most tools one OpenAI request may carry: the Chat
	// Completions and Responses APIs reject a request with more than 128 tools.
	MaxNativeTools = 128
	// WarnPromptTokens is the estimated prompt size, in tokens, above which
	// Measure warns: about 64 KB sent again with every request of a
	// conversation, more than the whole context of small local models.
	WarnPromptTokens = 16000
)

// Budget is the size of what a driver sends to a model with every request, so
// that the cost can be seen before it is paid (the command line shows it as
// `mcs tools --budget`). Sizes are bytes of UTF-8 text; tokens are estimates
// (see [EstimateTokens]).
type Budget struct {
	// Model is the model the figures were measured for ("" for any).
	Model string
	// Tools is the number of tools the driver lists (for an orchestrator with
	// ToolSearch, the search tool and the tools found so far).
	Tools int
	// SystemMessageBytes is the size of the text-mode system message, which
	// inlines every tool ([mcs.Driver] SystemMessage).
	SystemMessageBytes int
	// TextTokens estimates the tokens of the text-mode system message.
	TextTokens int
	// Native reports whether the driver sends native tools to this model (its
	// NativeToolContext returned tool objects).
	Native bool
	// NativeSystemMessageBytes is the size of the native-mode system message,
	// which does not inline the tools; 0 when Native is false.
	NativeSystemMessageBytes int
	// NativeToolsBytes is the size of the tools as [mcs.FunctionTool] objects
	// in JSON: those the driver sends when Native is true, else those it would
	// send (built by [mcs.NewFunctionTool] from its listing, as BaseDriver
	// does) when the driver is also a ToolDriver; 0 when neither applies.
	NativeToolsBytes int
	// NativeTokens estimates the tokens of the native system message plus the
	// tool objects.
	NativeTokens int
	// Warnings says what exceeds MaxNativeTools or WarnPromptTokens, one
	// sentence each with what to do; nil when nothing does.
	Warnings []string
}

// EstimateTokens estimates the tokens of n bytes of prompt: one token per four
// bytes, rounded up. Tokenizers differ (English prose is about four bytes per
// token, JSON schemas nearer three), so take it as a rough figure, good to
// about ±25%; the provider's usage report is the exact count.
func EstimateTokens(n int) int {
	if n <= 0 {
		return 0
	}
	return (n + 3) / 4
}

// Measure reports the size of what d sends to model: the text-mode system
// message (SystemMessage), the native-mode system message and tool objects
// (NativeToolContext, when d implements [mcs.SupportsNativeTools]), the number
// of tools and token estimates, with Warnings for more than MaxNativeTools
// tools and for an estimate above WarnPromptTokens in either mode. It calls
// d's methods in that order, then ListTools when d is a [mcs.ToolDriver] that
// sent no native tools, and nothing else (no model is asked); an error of any
// of them is returned wrapped, with no Budget. It is safe to call concurrently
// if d is, as every driver of this module is.
func Measure(ctx context.Context, d mcs.Driver, model string) (Budget, error) {
	b := Budget{Model: model}
	msg, err := d.SystemMessage(ctx, model)
	if err != nil {
		return Budget{}, fmt.Errorf("measure budget: system message: %w", err)
	}
	b.SystemMessageBytes = len(msg)
	b.TextTokens = EstimateTokens(len(msg))

	var native []mcs.FunctionTool
	if nt, ok := d.(mcs.SupportsNativeTools); ok {
		ntc, err := nt.NativeToolContext(ctx, model)
		if err != nil {
			return Budget{}, fmt.Errorf("measure budget: native tool context: %w", err)
		}
		if ntc.Tools != nil {
			b.Native = true
			b.NativeSystemMessageBytes = len(ntc.SystemMessage)
			native = ntc.Tools
		}
	}
	td, isTD := d.(mcs.ToolDriver)
	switch {
	case b.Native:
		b.Tools = len(native)
	case isTD:
		tools, err := td.ListTools(ctx)
		if err != nil {
			return Budget{}, fmt.Errorf("measure budget: list tools: %w", err)
		}
		b.Tools = len(tools)
		native = make([]mcs.FunctionTool, len(tools))
		for i, t := range tools {
			native[i] = mcs.NewFunctionTool(t)
		}
	}
	if native != nil {
		data, err := json.Marshal(native)
		if err != nil {
			return Budget{}, fmt.Errorf("measure budget: encode the tools: %w", err)
		}
		b.NativeToolsBytes = len(data)
		b.NativeTokens = EstimateTokens(b.NativeSystemMessageBytes + len(data))
	}
	b.Warnings = b.Check(MaxNativeTools, WarnPromptTokens)
	return b, nil
}

// Check returns a warning for each limit b exceeds: more than maxTools tools
// (OpenAI rejects more than MaxNativeTools), and an estimate above maxTokens in
// text or in native mode. A limit of zero or less is not checked. Measure
// fills Warnings with Check(MaxNativeTools, WarnPromptTokens); call it with
// other limits for another provider or model.
func (b Budget) Check(maxTools, maxTokens int) []string {
	var out []string
	if maxTools > 0 && b.Tools > maxTools {
		out = append(out, fmt.Sprintf("%d tools exceed the limit of %d (OpenAI rejects more than %d tools in one request); "+
			"put the driver behind an orchestrator with ToolSearch, or publish fewer tools (for REST: IncludeTags, IncludePaths)",
			b.Tools, maxTools, MaxNativeTools))
	}
	if maxTokens > 0 && b.TextTokens > maxTokens {
		out = append(out, fmt.Sprintf("the text-mode system message is about %d tokens (%d bytes), more than %d, sent with every request; "+
			"put the driver behind an orchestrator with ToolSearch or DetailLoading, or publish fewer tools", b.TextTokens, b.SystemMessageBytes, maxTokens))
	}
	if maxTokens > 0 && b.NativeTokens > maxTokens {
		out = append(out, fmt.Sprintf("the native tools are about %d tokens (%d bytes with the system message), more than %d, sent with every request; "+
			"put the driver behind an orchestrator with ToolSearch, or publish fewer tools", b.NativeTokens, b.NativeSystemMessageBytes+b.NativeToolsBytes, maxTokens))
	}
	return out
}
