package mcs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// tracer records the order in which layers see a call and its result.
type tracer struct {
	mu  sync.Mutex
	log []string
}

func (tr *tracer) add(s string) {
	tr.mu.Lock()
	tr.log = append(tr.log, s)
	tr.mu.Unlock()
}

func (tr *tracer) layer(label string) mcs.ToolMiddleware {
	return mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		tr.add(label + ">")
		res, err := next(ctx, name, args)
		tr.add(label + "<")
		return res, err
	})
}

func TestChainOrder(t *testing.T) {
	tr := &tracer{}
	terminal := func(ctx context.Context, name string, args map[string]any) (any, error) {
		tr.add("exec")
		return "ok", nil
	}
	call := mcs.Chain(terminal, tr.layer("A"), nil, tr.layer("B"), tr.layer("C"))
	res, err := call(context.Background(), "t", map[string]any{})
	if err != nil || res != "ok" {
		t.Fatalf("got %v, %v", res, err)
	}
	want := []string{"A>", "B>", "C>", "exec", "C<", "B<", "A<"}
	if diff := cmp.Diff(want, tr.log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// No middleware: the terminal itself.
	if res, _ := mcs.Chain(terminal)(context.Background(), "t", nil); res != "ok" {
		t.Errorf("empty chain returned %v", res)
	}
}

func TestMiddlewareBehaviours(t *testing.T) {
	ctx := context.Background()
	shortCircuit := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		if name == "fail" {
			return map[string]any{"skipped": true}, nil
		}
		return next(ctx, name, args)
	})
	renameTool := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		if name == "echo" {
			return next(ctx, "add", map[string]any{"a": 40.0, "b": 2.0})
		}
		return next(ctx, name, args)
	})
	catch := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		res, err := next(ctx, name, args)
		if errors.Is(err, errFail) {
			return "the backend is down, try later", nil
		}
		return res, err
	})
	tests := []struct {
		name  string
		mw    []mcs.ToolMiddleware
		reply string
		want  any
		ran   int64
	}{
		{"short-circuit", []mcs.ToolMiddleware{shortCircuit}, `{"tool":"fail"}`, map[string]any{"skipped": true}, 0},
		{"rewrite name and arguments", []mcs.ToolMiddleware{renameTool}, `{"tool":"echo","arguments":{"text":"x"}}`, 42.0, 1},
		{"catch an error", []mcs.ToolMiddleware{catch}, `{"tool":"fail"}`, "the backend is down, try later", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := &calcDriver{}
			d := mcs.NewBaseDriver(td, mcs.WithMiddleware(tt.mw...))
			r := d.ProcessLLMResponse(ctx, tt.reply)
			if !r.CallExecuted || r.CallFailed || len(r.Calls) != 1 {
				t.Fatalf("response %+v, want one successful call", r)
			}
			if diff := cmp.Diff(tt.want, r.Calls[0].Result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if td.calls.Load() != tt.ran {
				t.Errorf("tool ran %d times, want %d", td.calls.Load(), tt.ran)
			}
		})
	}
}

func TestAddMiddlewareAppendsInnermost(t *testing.T) {
	tr := &tracer{}
	d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(tr.layer("A")))
	d.AddMiddleware(tr.layer("B"), nil)
	d.AddMiddleware(tr.layer("C"))
	if _, err := d.ExecuteTool(context.Background(), "echo", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"A>", "B>", "C>", "C<", "B<", "A<"}
	if diff := cmp.Diff(want, tr.log); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := len(d.Middleware()); got != 3 {
		t.Errorf("Middleware() has %d entries, want 3", got)
	}
}

func TestExecuteToolRunsTheChain(t *testing.T) {
	deny := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		return map[string]any{"permission_denied": true}, nil
	})
	td := &calcDriver{}
	d := mcs.NewBaseDriver(td, mcs.WithMiddleware(deny))
	res, err := d.ExecuteTool(context.Background(), "fail", nil)
	if err != nil || td.calls.Load() != 0 {
		t.Fatalf("ExecuteTool bypassed the chain: res %v err %v, tool ran %d times", res, err, td.calls.Load())
	}
}

func TestMetaIsStatic(t *testing.T) {
	d := mcs.NewBaseDriver(&calcDriver{})
	before := d.Meta()
	d.AddMiddleware(mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		return next(ctx, name, args)
	}))
	after := d.Meta()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("Meta changed after AddMiddleware (-before +after):\n%s", diff)
	}
	want := []mcs.Capability{mcs.CapabilityStandalone, mcs.CapabilityOrchestratable, mcs.CapabilityNativeTools, mcs.CapabilityStreaming, mcs.CapabilityToolMiddleware}
	if diff := cmp.Diff(want, after.Capabilities); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	// The returned meta is a copy.
	after.Capabilities[0] = "mutated"
	if d.Meta().Capabilities[0] != mcs.CapabilityStandalone {
		t.Error("Meta returned shared slices")
	}
}

// TestConcurrentProcessingWhileAddingMiddleware runs 8 goroutines processing replies
// while another adds middleware; run it with -race.
func TestConcurrentProcessingWhileAddingMiddleware(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	counting := func(label string) mcs.ToolMiddleware {
		return mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			mu.Lock()
			seen[label]++
			mu.Unlock()
			return next(ctx, name, args)
		})
	}
	shared := counting("shared") // one instance serving two drivers
	d1 := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(shared))
	d2 := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(shared))
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			d := d1
			if w%2 == 1 {
				d = d2
			}
			for i := range rounds {
				r := d.ProcessLLMResponse(context.Background(), fmt.Sprintf(`{"tool":"add","arguments":{"a":%d,"b":1}}`, i))
				if !r.CallExecuted || r.Calls[0].Result != float64(i+1) {
					errs <- fmt.Errorf("worker %d round %d: %+v", w, i, r)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 50 {
			d1.AddMiddleware(counting(fmt.Sprintf("added-%d", i)))
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if seen["shared"] != workers*rounds {
		t.Errorf("shared middleware saw %d calls, want %d", seen["shared"], workers*rounds)
	}
	if got := len(d1.Middleware()); got != 51 {
		t.Errorf("d1 has %d middleware, want 51", got)
	}
	// after all additions, the next call passes through every added layer
	before := seen["added-49"]
	d1.ProcessLLMResponse(context.Background(), `{"tool":"echo"}`)
	if seen["added-49"] != before+1 {
		t.Error("the last added middleware did not run on the next call")
	}
}

func TestToolValidate(t *testing.T) {
	tests := []struct {
		tool mcs.Tool
		want string // substring; "" means valid
	}{
		{mcs.Tool{Name: "a", Description: "d"}, ""},
		{mcs.Tool{Name: "a", Title: "T"}, ""},
		{mcs.Tool{Name: "", Description: "d"}, "name is empty"},
		{mcs.Tool{Name: "a"}, "neither title nor description"},
		{mcs.Tool{Name: "a", Title: "T", Parameters: []mcs.Parameter{{Name: ""}}}, "parameter 0 has no name"},
		{mcs.Tool{Name: "a", Title: "T", Parameters: []mcs.Parameter{{Name: "x"}, {Name: "x"}}}, `parameter "x" is declared twice`},
	}
	for _, tt := range tests {
		err := tt.tool.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", tt.tool, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, mcs.ErrInvalidTool)):
			t.Errorf("%+v: error %v, want one containing %q wrapping ErrInvalidTool", tt.tool, err, tt.want)
		}
	}
	if (mcs.Tool{Title: "T"}).Summary() != "T" || (mcs.Tool{Title: "T", Description: "D"}).Summary() != "D" {
		t.Error("Summary does not fall back to the title")
	}
}

type healthy struct{ calcDriver }

func (*healthy) Healthcheck(context.Context) mcs.HealthResult {
	return mcs.HealthResult{Status: mcs.HealthOK}
}

func TestDeriveCapabilities(t *testing.T) {
	m := mcs.Meta{ID: "x", Capabilities: []mcs.Capability{"custom", mcs.CapabilityOrchestratable}}
	got := mcs.DeriveCapabilities(m, &healthy{})
	want := []mcs.Capability{"custom", mcs.CapabilityOrchestratable, mcs.CapabilityHealthcheck}
	if diff := cmp.Diff(want, got.Capabilities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(m.Capabilities) != 2 {
		t.Error("DeriveCapabilities changed its input")
	}
	if !got.HasCapability(mcs.CapabilityHealthcheck) || got.HasCapability(mcs.CapabilityStreaming) {
		t.Error("HasCapability is wrong")
	}
	if mcs.HealthStatus("bogus").Severity() != mcs.HealthUnknown.Severity() || mcs.HealthError.Severity() <= mcs.HealthWarning.Severity() {
		t.Error("Severity order is wrong")
	}
}
