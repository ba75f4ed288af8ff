package mcstest

import (
	"context"
	"errors"

	"github.com/mcs-go/mcs"
)

// The rules of TestMiddleware.
const (
	// RuleArgsNotMutated: the middleware never modifies the arguments it is given
	// (to rewrite them it passes a new map to next).
	RuleArgsNotMutated = "args-not-mutated"
	// RulePassesNext: when the middleware calls next, it calls it once, with a
	// context that carries the caller's values, and returns next's result as it
	// came, and next's error wrapped (or a result in its place).
	RulePassesNext = "passes-next"
	// RuleAnswers: a middleware that does not call next answers the call itself:
	// a result (such as an mcs.Signal) or an error, never neither.
	RuleAnswers = "answers"
)

type kitKey struct{}

// kitResult is the result the kit's next returns; errKit is its error.
var (
	kitResult = map[string]any{"mcstest": "result"}
	errKit    = errors.New("mcstest: the tool failed")
)

// kitArgs are the arguments of the kit's calls.
func kitArgs() map[string]any {
	return map[string]any{"city": "Paris", "days": 3.0, "options": map[string]any{"units": []any{"metric"}}}
}

// TestMiddleware checks mw against the rules of a tool middleware (the Rule
// constants of this file, RuleNoPanic and RuleConcurrent): it makes calls of a
// tool through mw to a next that succeeds and to one that fails, alone and from
// several goroutines. The context of the calls carries an mcs.CallInfo naming
// the tool. It returns nil, or an *Error that lists every rule broken.
func TestMiddleware(mw mcs.ToolMiddleware) error {
	r := newReport("ToolMiddleware")
	if mw == nil {
		r.fail(RuleAnswers, "the middleware is nil")
		return r.err()
	}
	ok := callThrough(r, mw, nil, "alone")
	failOK := callThrough(r, mw, errKit, "alone, next failing")
	concurrently(goroutines, func(int) {
		if callThrough(r, mw, nil, "concurrently") != ok || callThrough(r, mw, errKit, "concurrently, next failing") != failOK {
			r.fail(RuleConcurrent, "a concurrent call ended otherwise than the same call alone")
		}
	})
	if h, isHider := mw.(mcs.ToolHider); isHider {
		r.try("HidesTool", func() { h.HidesTool(kitContext(), kitInfo()) })
	}
	return r.err()
}

func kitInfo() mcs.CallInfo {
	return mcs.CallInfo{Driver: mcs.Meta{ID: "mcstest/driver", Name: "mcstest"}, CallID: "call_1",
		Tool: mcs.Tool{Name: "get_weather", Description: "Weather for a city.", Parameters: []mcs.Parameter{
			{Name: "city", Required: true, Schema: map[string]any{"type": "string"}},
			{Name: "days", Schema: map[string]any{"type": "number"}},
			{Name: "options", Schema: map[string]any{"type": "object"}}}}}
}

func kitContext() context.Context {
	return mcs.ContextWithCallInfo(context.WithValue(context.Background(), kitKey{}, "caller"), kitInfo())
}

// callThrough makes one call through mw to a next that returns nextErr, or
// kitResult when nextErr is nil, checks the rules and reports whether next ran.
func callThrough(r *report, mw mcs.ToolMiddleware, nextErr error, when string) (nextRan bool) {
	args := kitArgs()
	calls := 0
	next := func(ctx context.Context, name string, a map[string]any) (any, error) {
		calls++
		if ctx.Value(kitKey{}) != "caller" {
			r.fail(RulePassesNext, "%s: the context next received lost the caller's values", when)
		}
		if nextErr != nil {
			return nil, nextErr
		}
		return kitResult, nil
	}
	r.try("OnExecuteTool", func() {
		res, err := mw.OnExecuteTool(kitContext(), "get_weather", args, next)
		if !equal(args, kitArgs()) {
			r.fail(RuleArgsNotMutated, "%s: the arguments became %v", when, args)
		}
		switch {
		case calls > 1:
			r.fail(RulePassesNext, "%s: next ran %d times for one call", when, calls)
		case calls == 0:
			if res == nil && err == nil {
				r.fail(RuleAnswers, "%s: next did not run, and the call has neither a result nor an error", when)
			}
		case nextErr == nil:
			if err != nil || !equal(res, kitResult) {
				r.fail(RulePassesNext, "%s: next returned %v, the middleware %v, %v", when, kitResult, res, err)
			}
		default:
			if !errors.Is(err, nextErr) && (err != nil || res == nil) {
				r.fail(RulePassesNext, "%s: next failed with %v, the middleware returned %v, %v", when, nextErr, res, err)
			}
		}
	})
	return calls > 0
}
