package mcstest

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
)

// The rules of TestToolDriver.
const (
	// RuleMetaHonest: Meta names the driver (a non-empty ID), is the same on every
	// call, and its capability flags are exactly the contracts a type assertion
	// finds (see mcs.DeriveCapabilities).
	RuleMetaHonest = "meta-honest"
	// RuleListing: ListTools succeeds, and lists valid tools (Tool.Validate) of
	// unique names in the same order on every call.
	RuleListing = "listing"
	// RuleLookupAgrees: mcs.HasTool and mcs.ToolDefinition (and so the driver's
	// ToolLookup and ToolDefiner, when it has them) agree with ListTools, for the
	// tools it lists and for a name it does not.
	RuleLookupAgrees = "lookup-agrees"
	// RuleUnknownTool: a call of a tool the driver does not publish fails with an
	// error that wraps mcs.ErrUnknownTool, and no result.
	RuleUnknownTool = "unknown-tool"
	// RuleArgumentsError: a probe marked Invalid fails with an *mcs.ArgumentsError.
	RuleArgumentsError = "arguments-error"
	// RuleProbe: a probe not marked Invalid succeeds; a failed call returns no
	// result.
	RuleProbe = "probe"
	// RuleArgsUnchanged: the driver never modifies the arguments of a call.
	RuleArgsUnchanged = "args-unchanged"
	// RuleContext: with a canceled context, ListTools and the probes return
	// promptly, either as they would have or with an error that wraps
	// context.Canceled.
	RuleContext = "ctx"
)

// unknownTool is a tool name no driver publishes.
const unknownTool = "mcstest_no_such_tool"

// Probe is one call TestToolDriver makes of a tool the driver publishes.
// Probes also run from several goroutines at once: choose calls that can.
type Probe struct {
	Tool string
	Args map[string]any
	// Invalid marks arguments the tool must refuse with an *mcs.ArgumentsError.
	Invalid bool
}

// TestToolDriver checks td against the rules of a tool driver (the Rule
// constants of this file, RuleNoPanic and RuleConcurrent) and makes the calls of
// probes. It returns nil, or an *Error that lists every rule broken.
func TestToolDriver(td mcs.ToolDriver, probes ...Probe) error {
	r := newReport("ToolDriver")
	if td == nil {
		r.fail(RuleMetaHonest, "the driver is nil")
		return r.err()
	}
	ctx := context.Background()
	var meta mcs.Meta
	if r.try("Meta", func() { meta = td.Meta() }) {
		checkMeta(r, td, meta)
	}
	tools, listed := listTools(r, ctx, td)
	if listed {
		checkListing(r, ctx, td, tools)
	}
	r.try("ExecuteTool of an unknown tool", func() {
		res, err := td.ExecuteTool(ctx, unknownTool, map[string]any{})
		if !errors.Is(err, mcs.ErrUnknownTool) {
			r.fail(RuleUnknownTool, "ExecuteTool(%q) = %v, %v; want an error that wraps mcs.ErrUnknownTool", unknownTool, res, err)
		} else if res != nil {
			r.fail(RuleUnknownTool, "ExecuteTool(%q) returned the result %v with its error", unknownTool, res)
		}
	})
	outcomes := make([]bool, len(probes))
	for i, p := range probes {
		outcomes[i] = runProbe(r, ctx, td, p)
	}
	checkCanceled(r, td, probes)
	checkToolDriverConcurrent(r, td, tools, listed, probes, outcomes)
	return r.err()
}

func checkMeta(r *report, td mcs.ToolDriver, meta mcs.Meta) {
	if meta.ID == "" {
		r.fail(RuleMetaHonest, "Meta().ID is empty")
	}
	r.try("Meta", func() {
		if again := td.Meta(); !equal(meta, again) {
			r.fail(RuleMetaHonest, "Meta() changed between two calls: %+v, then %+v", meta, again)
		}
	})
	_, isDriver := td.(mcs.Driver)
	_, isNative := td.(mcs.SupportsNativeTools)
	_, isStreaming := td.(mcs.SupportsStreaming)
	_, isMiddleware := td.(mcs.SupportsToolMiddleware)
	_, isHealth := td.(mcs.SupportsHealthcheck)
	for _, c := range []struct {
		flag       mcs.Capability
		implements bool
	}{
		{mcs.CapabilityStandalone, isDriver},
		{mcs.CapabilityOrchestratable, true},
		{mcs.CapabilityNativeTools, isNative},
		{mcs.CapabilityStreaming, isStreaming},
		{mcs.CapabilityToolMiddleware, isMiddleware},
		{mcs.CapabilityHealthcheck, isHealth},
	} {
		if meta.HasCapability(c.flag) != c.implements {
			r.fail(RuleMetaHonest, "Meta says %s=%t, the type assertion says %t", c.flag, meta.HasCapability(c.flag), c.implements)
		}
	}
}

func listTools(r *report, ctx context.Context, td mcs.ToolDriver) (tools []mcs.Tool, ok bool) {
	r.try("ListTools", func() {
		var err error
		if tools, err = td.ListTools(ctx); err != nil {
			r.fail(RuleListing, "ListTools: %v", err)
			return
		}
		ok = true
	})
	return tools, ok
}

func names(tools []mcs.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func checkListing(r *report, ctx context.Context, td mcs.ToolDriver, tools []mcs.Tool) {
	seen := map[string]bool{}
	for _, t := range tools {
		if err := t.Validate(); err != nil {
			r.fail(RuleListing, "tool %q is not valid: %v", t.Name, err)
		}
		if seen[t.Name] {
			r.fail(RuleListing, "tool %q is listed twice", t.Name)
		}
		seen[t.Name] = true
	}
	if again, ok := listTools(r, ctx, td); ok && !equal(names(tools), names(again)) {
		r.fail(RuleListing, "ListTools changed between two calls: %q, then %q", names(tools), names(again))
	}
	for _, t := range tools {
		r.try("mcs.HasTool", func() {
			if has, err := mcs.HasTool(ctx, td, t.Name); !has || err != nil {
				r.fail(RuleLookupAgrees, "HasTool(%q) = %t, %v for a listed tool", t.Name, has, err)
			}
		})
		r.try("mcs.ToolDefinition", func() {
			def, ok, err := mcs.ToolDefinition(ctx, td, t.Name)
			switch {
			case !ok || err != nil:
				r.fail(RuleLookupAgrees, "ToolDefinition(%q) = ok %t, %v for a listed tool", t.Name, ok, err)
			case def.Name != t.Name || def.Description != t.Description || !equal(def.Parameters, t.Parameters):
				r.fail(RuleLookupAgrees, "ToolDefinition(%q) differs from the listed tool", t.Name)
			}
		})
	}
	if seen[unknownTool] {
		return
	}
	r.try("mcs.HasTool", func() {
		if has, err := mcs.HasTool(ctx, td, unknownTool); has || err != nil {
			r.fail(RuleLookupAgrees, "HasTool(%q) = %t, %v for a tool that is not listed", unknownTool, has, err)
		}
	})
	r.try("mcs.ToolDefinition", func() {
		if _, ok, err := mcs.ToolDefinition(ctx, td, unknownTool); ok || err != nil {
			r.fail(RuleLookupAgrees, "ToolDefinition(%q) = ok %t, %v for a tool that is not listed", unknownTool, ok, err)
		}
	})
}

// runProbe makes the call of p and reports whether it succeeded.
func runProbe(r *report, ctx context.Context, td mcs.ToolDriver, p Probe) (succeeded bool) {
	args := mcs.CloneArgs(p.Args)
	r.try("ExecuteTool("+p.Tool+")", func() {
		res, err := td.ExecuteTool(ctx, p.Tool, args)
		if !equal(args, p.Args) {
			r.fail(RuleArgsUnchanged, "ExecuteTool(%q) modified its arguments: %v, now %v", p.Tool, p.Args, args)
		}
		if err != nil && res != nil {
			r.fail(RuleProbe, "ExecuteTool(%q) returned the result %v with its error %v", p.Tool, res, err)
		}
		switch {
		case p.Invalid:
			if _, ok := errors.AsType[*mcs.ArgumentsError](err); !ok {
				r.fail(RuleArgumentsError, "ExecuteTool(%q, %v) = %v; want an *mcs.ArgumentsError", p.Tool, p.Args, err)
			}
		case err != nil:
			r.fail(RuleProbe, "ExecuteTool(%q, %v): %v", p.Tool, p.Args, err)
		}
		succeeded = err == nil
	})
	return succeeded
}

// canceledWait is how long a call with a canceled context may take.
const canceledWait = 10 * time.Second

func checkCanceled(r *report, td mcs.ToolDriver, probes []Probe) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(what string, call func() error) {
		done := make(chan error, 1)
		go func() {
			var err error
			r.try(what, func() { err = call() })
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, mcs.ErrUnknownTool) {
				if _, ok := errors.AsType[*mcs.ArgumentsError](err); !ok {
					r.fail(RuleContext, "%s with a canceled context: %v does not wrap context.Canceled", what, err)
				}
			}
		case <-time.After(canceledWait):
			r.fail(RuleContext, "%s with a canceled context did not return within %v", what, canceledWait)
		}
	}
	check("ListTools", func() error { _, err := td.ListTools(ctx); return err })
	for _, p := range probes {
		if p.Invalid {
			continue
		}
		check("ExecuteTool("+p.Tool+")", func() error { _, err := td.ExecuteTool(ctx, p.Tool, mcs.CloneArgs(p.Args)); return err })
	}
}

// goroutines is how many goroutines the concurrency checks start.
const goroutines = 8

func checkToolDriverConcurrent(r *report, td mcs.ToolDriver, tools []mcs.Tool, listed bool, probes []Probe, outcomes []bool) {
	ctx := context.Background()
	want := names(tools)
	concurrently(goroutines, func(int) {
		r.try("Meta", func() { td.Meta() })
		r.try("ListTools", func() {
			got, err := td.ListTools(ctx)
			if listed && (err != nil || !equal(names(got), want)) {
				r.fail(RuleConcurrent, "concurrent ListTools = %q, %v; want %q", names(got), err, want)
			}
		})
		for i, p := range probes {
			r.try("ExecuteTool("+p.Tool+")", func() {
				_, err := td.ExecuteTool(ctx, p.Tool, mcs.CloneArgs(p.Args))
				if (err == nil) != outcomes[i] {
					r.fail(RuleConcurrent, "concurrent ExecuteTool(%q): error %v; alone it %s", p.Tool, err, map[bool]string{true: "succeeded", false: "failed"}[outcomes[i]])
				}
			})
		}
	})
}

// oneLine shortens s for a violation's detail.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
