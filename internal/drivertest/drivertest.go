// Package drivertest helps test the built-in drivers over a confined root: it
// calls tools as a model would, checks outcomes against table test cases, and runs
// the escape attempts of package confinetest against a driver. The rules every
// tool driver keeps (listing, lookups, meta, error vocabulary) are checked by the
// conformance kit, package mcstest; this package holds what is particular to the
// built-in drivers.
//
// The helpers report through the testing.TB they are given and, as its Fatal
// methods require, must be called from the goroutine running the test;
// RunConcurrently is the one that starts goroutines of its own.
package drivertest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/mcstest"
)

// Open returns newDriver(cfg), stopping the test when it fails, and closes the
// driver when the test ends.
func Open[C any, D io.Closer](tb testing.TB, newDriver func(C) (D, error), cfg C) D {
	tb.Helper()
	d, err := newDriver(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

// OpenDriver is [Open] for the constructor of a complete driver, called without
// options.
func OpenDriver[C any, D io.Closer](tb testing.TB, newDriver func(C, ...mcs.Option) (D, error), cfg C) D {
	tb.Helper()
	return Open(tb, func(cfg C) (D, error) { return newDriver(cfg) }, cfg)
}

// CheckMeta checks the data sheets of a built-in driver: td.Meta() must equal want
// with the one capability orchestratable, and d.Meta(), the complete driver over
// such a tool driver, must add what [mcs.BaseDriver] adds: every LLM, and the
// capabilities standalone, native tools, streaming and tool middleware.
func CheckMeta(tb testing.TB, td mcs.ToolDriver, d mcs.Driver, want mcs.Meta) {
	tb.Helper()
	want.Capabilities = []mcs.Capability{mcs.CapabilityOrchestratable}
	if diff := cmp.Diff(want, td.Meta()); diff != "" {
		tb.Errorf("ToolDriver.Meta (-want +got):\n%s", diff)
	}
	want.SupportedLLMs = []string{"*"}
	// The tool driver's own flag comes first, then BaseDriver's.
	want.Capabilities = []mcs.Capability{mcs.CapabilityOrchestratable, mcs.CapabilityStandalone, mcs.CapabilityNativeTools, mcs.CapabilityStreaming, mcs.CapabilityToolMiddleware}
	if diff := cmp.Diff(want, d.Meta()); diff != "" {
		tb.Errorf("Driver.Meta (-want +got):\n%s", diff)
	}
}

// CheckTools checks that td lists the tools named want, in this order, and runs
// td through the conformance kit (valid, unique and stable tools that the lookups
// agree with, an honest meta, the error vocabulary), without probes.
func CheckTools(tb testing.TB, td mcs.ToolDriver, want []string) {
	tb.Helper()
	tools, err := td.ListTools(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		tb.Errorf("tools (-want +got):\n%s", diff)
	}
	if err := mcstest.TestToolDriver(td); err != nil {
		tb.Error(err)
	}
}

// Call executes the tool name of td with args and returns its result as decoded
// JSON, so that results compare as the model sees them (numbers are float64). It
// fails tb when a failed call also returns a result, and stops the test when the
// result is not a JSON object.
func Call(tb testing.TB, td mcs.ToolDriver, name string, args map[string]any) (map[string]any, error) {
	tb.Helper()
	res, err := td.ExecuteTool(context.Background(), name, args)
	if err != nil {
		if res != nil {
			tb.Errorf("%s returned a result with an error: %v", name, res)
		}
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		tb.Fatalf("%s: result is not JSON: %v", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%s: result is not a JSON object: %s", name, b)
	}
	return m, nil
}

// MustCall is [Call] for a call that must succeed: an error stops the test.
func MustCall(tb testing.TB, td mcs.ToolDriver, name string, args map[string]any) map[string]any {
	tb.Helper()
	m, err := Call(tb, td, name, args)
	if err != nil {
		tb.Fatalf("%s(%v): %v", name, args, err)
	}
	return m
}

// Expect makes the call of [Call] and checks its outcome against a table test
// case. When wantErr is set, the call must fail with an error that contains it.
// Otherwise the call must succeed, or the test stops, and when want is not nil the
// result must equal it. got is the result; ok reports whether the call succeeded
// as it should, so that the caller can check more.
func Expect(tb testing.TB, td mcs.ToolDriver, name string, args, want map[string]any, wantErr string) (got map[string]any, ok bool) {
	tb.Helper()
	got, err := Call(tb, td, name, args)
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			tb.Errorf("error = %v, want it to contain %q", err, wantErr)
		}
		return nil, false
	}
	if err != nil {
		tb.Fatal(err)
	}
	if want != nil {
		if diff := cmp.Diff(want, got); diff != "" {
			tb.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	return got, true
}

// ToolCall is one call of a tool.
type ToolCall struct {
	Tool string
	Args map[string]any
	// Writes marks a call that may change the tree. RunEscapeSuite skips it for
	// the paths that name files of the host system.
	Writes bool
}

// Payload is the content that writing calls of an escape suite write. An error or
// a result that shows it reveals a write that should have been refused.
const Payload = "pwned"

// RunEscapeSuite runs, in a subtest for every case of env.Cases and after the
// case's Setup, each of the calls calls(path) against td, where path is the
// hostile path of the case. Every call must fail with a *confine.Error, and neither
// the error nor the result may show [confinetest.Secret] or [Payload]. Writing
// calls are skipped for the paths that name files of the host system. Last, the
// tree outside the root must be unchanged.
func RunEscapeSuite(t *testing.T, env *confinetest.Env, td mcs.ToolDriver, calls func(path string) []ToolCall) {
	t.Helper()
	for _, tc := range env.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			if tc.Setup != nil {
				tc.Setup(t)
			}
			for _, c := range calls(tc.Path) {
				if c.Writes && tc.System {
					continue
				}
				res, err := td.ExecuteTool(context.Background(), c.Tool, c.Args)
				var ce *confine.Error
				if !errors.As(err, &ce) {
					t.Errorf("%s(%q): result %v, error %v; want a refused path", c.Tool, c.Args, res, err)
					continue
				}
				b, _ := json.Marshal(res)
				if msg := err.Error() + string(b); strings.Contains(msg, confinetest.Secret) || strings.Contains(msg, Payload) {
					t.Errorf("%s(%q) leaks: %s", c.Tool, c.Args, msg)
				}
			}
		})
	}
	env.CheckOutside(t)
}

// RunSwap checks the defence against a directory swapped for a symbolic link
// between two calls. The model reply before, processed by d, must execute its
// call; then env.SwapDir replaces the directory "swap" with a link to the outside,
// and each reply of after must fail its one call with a *confine.Error of
// KindSymlink and a retry prompt that names the link. Last, the tree outside the
// root must be unchanged.
func RunSwap(t *testing.T, env *confinetest.Env, d mcs.Driver, before string, after ...string) {
	t.Helper()
	ctx := context.Background()
	if resp := d.ProcessLLMResponse(ctx, before); !resp.CallExecuted || resp.CallFailed {
		t.Fatalf("%s before the swap: %+v", before, resp)
	}
	env.SwapDir(t)
	for _, reply := range after {
		resp := d.ProcessLLMResponse(ctx, reply)
		if resp.CallExecuted || !resp.CallFailed || len(resp.Calls) != 1 {
			t.Errorf("%s after the swap: %+v", reply, resp)
			continue
		}
		var ce *confine.Error
		if !errors.As(resp.Calls[0].Err, &ce) || ce.Kind != confine.KindSymlink {
			t.Errorf("%s: error %v, want a refused symbolic link", reply, resp.Calls[0].Err)
		}
		if !strings.Contains(resp.RetryPrompt, `the symbolic link "swap" leads outside the root directory`) {
			t.Errorf("%s: retry prompt does not explain: %q", reply, resp.RetryPrompt)
		}
	}
	env.CheckOutside(t)
}

// RunConcurrently starts n goroutines at once against td; goroutine i makes the
// calls calls(i), in order. It fails tb for every call that fails, and returns
// when all goroutines are done.
func RunConcurrently(tb testing.TB, td mcs.ToolDriver, n int, calls func(i int) []ToolCall) {
	tb.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for _, c := range calls(i) {
				if _, err := td.ExecuteTool(context.Background(), c.Tool, c.Args); err != nil {
					tb.Errorf("goroutine %d: %s: %v", i, c.Tool, err)
				}
			}
		})
	}
	wg.Wait()
}
