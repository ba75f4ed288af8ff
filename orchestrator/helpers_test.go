package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// fake is an in-memory tool driver whose tools, listing error and health can be
// changed while it is registered. A call returns "<name>:<tool>".
type fake struct {
	name string

	mu       sync.Mutex
	tools    []mcs.Tool
	listErr  error
	executed []string
}

var _ mcs.ToolDriver = (*fake)(nil)

func newFake(name string, tools ...string) *fake {
	f := &fake{name: name}
	f.setTools(tools...)
	return f
}

func (f *fake) setTools(tools ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools = nil
	for _, t := range tools {
		f.tools = append(f.tools, mcs.Tool{
			Name:        t,
			Description: t + " of " + f.name,
			Parameters:  []mcs.Parameter{{Name: "id", Description: "an id"}},
		})
	}
}

func (f *fake) setListErr(err error) {
	f.mu.Lock()
	f.listErr = err
	f.mu.Unlock()
}

func (f *fake) Meta() mcs.Meta {
	return mcs.Meta{
		ID:           "test/" + f.name,
		Name:         f.name,
		Bindings:     []mcs.Binding{{Capability: "memory", Adapter: "test", SpecFormat: "none"}},
		Capabilities: []mcs.Capability{mcs.CapabilityOrchestratable, "special"},
	}
}

func (f *fake) ListTools(context.Context) ([]mcs.Tool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	return slices.Clone(f.tools), nil
}

func (f *fake) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.ContainsFunc(f.tools, func(t mcs.Tool) bool { return t.Name == name }) {
		return nil, fmt.Errorf("%s has no tool %q", f.name, name)
	}
	f.executed = append(f.executed, name)
	return f.name + ":" + name, nil
}

// healthy is a fake with a healthcheck.
type healthy struct {
	*fake
	check func(ctx context.Context) mcs.HealthResult
}

var _ mcs.SupportsHealthcheck = healthy{}

func (h healthy) Healthcheck(ctx context.Context) mcs.HealthResult { return h.check(ctx) }

func status(s mcs.HealthStatus, detail string) func(context.Context) mcs.HealthResult {
	return func(context.Context) mcs.HealthResult { return mcs.HealthResult{Status: s, Detail: detail} }
}

// textCall writes a text tool call as a model would.
func textCall(t testing.TB, name string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"tool": name, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	return "Let me check.\n" + string(b)
}

// process sends a text call for name to d.
func process(t testing.TB, d mcs.Driver, name string) mcs.Response {
	t.Helper()
	return d.ProcessLLMResponse(context.Background(), textCall(t, name, nil))
}

// results returns the results of resp's calls, errors as "error: ...".
func results(resp mcs.Response) []string {
	var out []string
	for _, c := range resp.Calls {
		if c.Err != nil {
			out = append(out, "error: "+c.Err.Error())
			continue
		}
		out = append(out, fmt.Sprint(c.Result))
	}
	return out
}

// toolNames lists d's tool names.
func toolNames(t testing.TB, d mcs.ToolDriver) []string {
	t.Helper()
	tools, err := d.ListTools(context.Background())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return names(tools)
}

func names(tools []mcs.Tool) []string {
	out := []string{}
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// build returns an orchestrator over strategy with the drivers added in order.
func build(t testing.TB, strategy orchestrator.Strategy, drivers ...any) *orchestrator.Orchestrator {
	t.Helper()
	o := orchestrator.New(strategy)
	for i := 0; i < len(drivers); i += 2 {
		if err := o.AddDriver(drivers[i].(string), drivers[i+1].(mcs.ToolDriver)); err != nil {
			t.Fatalf("AddDriver(%q): %v", drivers[i], err)
		}
	}
	return o
}

// recorder is a middleware that records the names it sees.
type recorder struct {
	mu    sync.Mutex
	names []string
}

func (r *recorder) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	r.mu.Lock()
	r.names = append(r.names, name)
	r.mu.Unlock()
	return next(ctx, name, args)
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.names)
}
