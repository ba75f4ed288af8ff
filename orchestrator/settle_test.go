package orchestrator_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// provisional lists "drop" as read-only until it is settled; settled, it is
// destructive and the version goes up, as a REST driver whose tool-table cache
// lied does.
type provisional struct {
	mu      sync.Mutex
	settled bool
	settles atomic.Int32
	version atomic.Uint64
	ran     atomic.Int32
}

func (p *provisional) Meta() mcs.Meta { return mcs.Meta{ID: "test/provisional", Name: "Provisional"} }

func (p *provisional) ListTools(context.Context) ([]mcs.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := &mcs.ToolAnnotations{ReadOnly: true}
	if p.settled {
		a = &mcs.ToolAnnotations{Destructive: true}
	}
	return []mcs.Tool{{Name: "drop", Description: "Drops the table.", Annotations: a}}, nil
}

func (p *provisional) ExecuteTool(context.Context, string, map[string]any) (any, error) {
	p.ran.Add(1)
	return "dropped", nil
}

func (p *provisional) ToolsVersion() uint64 { return p.version.Load() }

func (p *provisional) SettleTools(context.Context) error {
	p.settles.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.settled {
		p.settled = true
		p.version.Add(1)
	}
	return nil
}

// The orchestrator's middleware decides on settled definitions: a provisional
// read-only hint (a REST tool-table cache's word) never reaches it, however deep
// the orchestrators nest, and settling happens once per listing.
func TestMiddlewareDecidesOnSettledDefinitions(t *testing.T) {
	for _, nested := range []bool{false, true} {
		name := "flat"
		if nested {
			name = "nested"
		}
		t.Run(name, func(t *testing.T) {
			p := &provisional{}
			var seen []*mcs.ToolAnnotations
			readOnlyOnly := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
				info, _ := mcs.CallInfoFromContext(ctx)
				seen = append(seen, info.Tool.Annotations)
				if a := info.Tool.Annotations; a == nil || !a.ReadOnly {
					return nil, errors.New("refused: not read-only")
				}
				return next(ctx, name, args)
			})
			o := orchestrator.New(nil, mcs.WithMiddleware(readOnlyOnly))
			var reg mcs.ToolDriver = p
			if nested {
				inner := orchestrator.New(nil)
				if err := inner.AddDriver("db", p); err != nil {
					t.Fatal(err)
				}
				reg = inner
			}
			if err := o.AddDriver("ops", reg); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			tools, err := o.ListTools(ctx)
			if err != nil || len(tools) != 1 || !tools[0].Annotations.ReadOnly {
				t.Fatalf("listing = %+v, %v: want the provisional read-only tool, or the test proves nothing", tools, err)
			}
			call := `{"tool": "` + tools[0].Name + `", "arguments": {}}`
			for range 2 {
				r := o.ProcessLLMResponse(ctx, call)
				if len(r.Calls) != 1 || r.Calls[0].Err == nil {
					t.Fatalf("calls = %+v: want the call refused", r.Calls)
				}
			}
			if n := p.ran.Load(); n != 0 {
				t.Errorf("the destructive tool ran %d times", n)
			}
			for _, a := range seen {
				if a == nil || a.ReadOnly || !a.Destructive {
					t.Errorf("the middleware saw %+v, want the settled (destructive) definition", a)
				}
			}
			if n := p.settles.Load(); nested && n > 3 || !nested && n != 1 {
				t.Errorf("SettleTools ran %d times for two calls", n)
			}
		})
	}
}
