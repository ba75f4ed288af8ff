package orchestrator_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

// static is a tool driver with fixed tools and a constant result.
type static struct{ tools []mcs.Tool }

func (static) Meta() mcs.Meta { return mcs.Meta{ID: "bench/static"} }

func (s static) ListTools(context.Context) ([]mcs.Tool, error) { return s.tools, nil }

func (static) ExecuteTool(context.Context, string, map[string]any) (any, error) { return "ok", nil }

func staticDriver(n int) static {
	s := static{}
	for i := range n {
		s.tools = append(s.tools, mcs.Tool{
			Name:        fmt.Sprintf("t%d", i),
			Description: "A benchmark tool.",
			Parameters:  []mcs.Parameter{{Name: "id", Required: true}},
		})
	}
	return s
}

// benchOrchestrator registers n drivers of 10 tools each, labelled d0000, d0001, ...
// and returns it with a text call to a tool of the middle driver.
func benchOrchestrator(b *testing.B, n int) (*orchestrator.Orchestrator, string, string) {
	b.Helper()
	o := orchestrator.New(nil)
	d := staticDriver(10)
	entries := make([]orchestrator.Entry, n)
	for i := range entries {
		entries[i] = orchestrator.Entry{Label: fmt.Sprintf("d%04d", i), Driver: d}
	}
	if err := o.AddDrivers(context.Background(), entries...); err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("d%04d__t5", n/2)
	return o, name, `{"tool":"` + name + `","arguments":{"id":"42"}}`
}

// BenchmarkDispatch measures one text call through ProcessLLMResponse (extraction,
// ownership, middleware chain, routing, history) with 10 and 1,000 registered
// drivers of 10 tools each. The kernel case is a plain BaseDriver over one such
// driver, for the share of the cost that does not depend on the orchestrator.
func BenchmarkDispatch(b *testing.B) {
	ctx := context.Background()
	b.Run("kernel", func(b *testing.B) {
		d := mcs.NewBaseDriver(staticDriver(10))
		call := `{"tool":"t5","arguments":{"id":"42"}}`
		b.ReportAllocs()
		for b.Loop() {
			if r := d.ProcessLLMResponse(ctx, call); !r.CallExecuted {
				b.Fatalf("%+v", r)
			}
		}
	})
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("drivers=%d", n), func(b *testing.B) {
			o, _, call := benchOrchestrator(b, n)
			if r := o.ProcessLLMResponse(ctx, call); !r.CallExecuted { // warm the cache
				b.Fatalf("%+v", r)
			}
			b.ReportAllocs()
			for b.Loop() {
				if r := o.ProcessLLMResponse(ctx, call); !r.CallExecuted {
					b.Fatalf("%+v", r)
				}
			}
		})
	}
}

// BenchmarkRoute measures the orchestrator's own part of a call: the ownership
// lookup and the routing of ExecuteTool, without the kernel's text extraction.
func BenchmarkRoute(b *testing.B) {
	ctx := context.Background()
	args := map[string]any{"id": "42"}
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("drivers=%d", n), func(b *testing.B) {
			o, name, _ := benchOrchestrator(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.ExecuteTool(ctx, name, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAddDriver measures registering one more driver (and removing it again)
// next to 10 and 1,000 drivers: AddDriver checks the whole proposed listing, so it
// costs time linear in the number of tools.
func BenchmarkAddDriver(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("drivers=%d", n), func(b *testing.B) {
			o, _, _ := benchOrchestrator(b, n)
			d := staticDriver(10)
			b.ReportAllocs()
			for b.Loop() {
				if err := o.AddDriver("extra", d); err != nil {
					b.Fatal(err)
				}
				o.RemoveDriver("extra")
			}
		})
	}
}
