package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// baseDriver is what the runner reads of a *mcs.BaseDriver (or a driver that
// embeds one) to give it native tools it was not built for.
type baseDriver interface {
	mcs.ToolDriver
	FunctionDescription(ctx context.Context, model string) (string, error)
	Options() mcs.Options
	PromptStrategy() mcs.PromptStrategy
}

// nativeContext returns the native system message and tools for model: the
// driver's own NativeToolContext when it gives tools, else, for a BaseDriver built
// without mcs.WithNativeTools, the context that option would give; any other case
// is an error wrapping ErrNoNativeTools.
func (r *Runner) nativeContext(ctx context.Context, model string) (mcs.NativeToolContext, error) {
	nd, ok := r.d.(mcs.SupportsNativeTools)
	if !ok {
		return mcs.NativeToolContext{}, fmt.Errorf("%w for model %q: the driver %T does not implement mcs.SupportsNativeTools; build it on mcs.BaseDriver, or leave runner.WithNativeTools out to use the text protocol",
			ErrNoNativeTools, model, r.d)
	}
	nc, err := nd.NativeToolContext(ctx, model)
	if err != nil {
		return nc, fmt.Errorf("driver native tool context: %w", err)
	}
	if nc.Tools != nil {
		return nc, nil
	}
	bd, ok := r.d.(baseDriver)
	if !ok {
		if td, ok := r.d.(mcs.ToolDriver); ok {
			if tools, err := td.ListTools(ctx); err == nil && len(tools) == 0 {
				return nc, nil // nothing to send
			}
		}
		return nc, fmt.Errorf("%w for model %q: the driver's NativeToolContext gave no tools; let it give them for this model, or leave runner.WithNativeTools out to use the text protocol",
			ErrNoNativeTools, model)
	}
	opts := bd.Options()
	if opts.NativeTools != nil {
		return nc, fmt.Errorf("%w for model %q: the driver's mcs.WithNativeTools predicate refuses the model; let it accept the model, or leave runner.WithNativeTools out to use the text protocol",
			ErrNoNativeTools, model)
	}
	return nativeOf(ctx, bd, opts, model, nc.SystemMessage)
}

// nativeOf builds the native context of a BaseDriver built without
// mcs.WithNativeTools, as that option would: the native system message of its
// prompt codec followed by what the driver adds to its text system message (the
// tool driver's instructions), or its own system message (mcs.WithSystemMessage);
// every tool as an mcs.FunctionTool. text is the driver's text system message.
func nativeOf(ctx context.Context, bd baseDriver, opts mcs.Options, model, text string) (mcs.NativeToolContext, error) {
	tools, err := bd.ListTools(ctx)
	if err != nil {
		return mcs.NativeToolContext{}, fmt.Errorf("driver native tool context: list tools: %w", err)
	}
	out := make([]mcs.FunctionTool, len(tools))
	for i, t := range tools {
		if err := t.Validate(); err != nil {
			return mcs.NativeToolContext{}, fmt.Errorf("driver native tool context: %w", err)
		}
		out[i] = mcs.NewFunctionTool(t)
	}
	sys := opts.SystemMessage
	if sys == "" {
		ps := bd.PromptStrategy()
		fd, err := bd.FunctionDescription(ctx, model)
		if err != nil {
			return mcs.NativeToolContext{}, fmt.Errorf("driver native tool context: %w", err)
		}
		extra, ok := strings.CutPrefix(text, ps.SystemMessage(fd))
		if !ok {
			return mcs.NativeToolContext{}, fmt.Errorf("%w for model %q: the driver's system message is its own, so its native one cannot be told; build the driver with mcs.WithNativeTools, or leave runner.WithNativeTools out to use the text protocol",
				ErrNoNativeTools, model)
		}
		sys = ps.NativeSystemMessage() + extra
	}
	return mcs.NativeToolContext{SystemMessage: sys, Tools: out}, nil
}
