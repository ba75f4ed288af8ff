package budget_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/budget"
)

// manyTools lists n tools with one parameter each.
type manyTools struct {
	n   int
	err error
}

func (m manyTools) Meta() mcs.Meta { return mcs.Meta{ID: "test/many"} }

func (m manyTools) ListTools(context.Context) ([]mcs.Tool, error) {
	if m.err != nil {
		return nil, m.err
	}
	out := make([]mcs.Tool, m.n)
	for i := range out {
		out[i] = mcs.Tool{Name: fmt.Sprintf("tool_%03d", i), Description: "Does thing number " + fmt.Sprint(i) + ".",
			Parameters: []mcs.Parameter{{Name: "id", Required: true}}}
	}
	return out, nil
}

func (manyTools) ExecuteTool(context.Context, string, map[string]any) (any, error) { return "ok", nil }

func TestMeasure(t *testing.T) {
	ctx := context.Background()
	native := mcs.WithNativeTools(func(string) bool { return true })
	tests := []struct {
		name     string
		d        mcs.Driver
		tools    int
		native   bool
		warnings []string // substrings, one per warning
	}{
		{"few tools, text only", mcs.NewBaseDriver(manyTools{n: 3}), 3, false, nil},
		{"few tools, native", mcs.NewBaseDriver(manyTools{n: 3}, native), 3, true, nil},
		{"too many tools for OpenAI", mcs.NewBaseDriver(manyTools{n: 129}, native), 129, true, []string{"129 tools exceed the limit of 128"}},
		{"too large a prompt", mcs.NewBaseDriver(manyTools{n: 1000}), 1000, false,
			[]string{"1000 tools exceed", "text-mode system message is about", "native tools are about"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := budget.Measure(ctx, tc.d, "gpt-test")
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := tc.d.SystemMessage(ctx, "gpt-test")
			if b.Model != "gpt-test" || b.Tools != tc.tools || b.Native != tc.native || b.SystemMessageBytes != len(msg) {
				t.Errorf("budget %+v", b)
			}
			if b.TextTokens != budget.EstimateTokens(len(msg)) {
				t.Errorf("TextTokens %d", b.TextTokens)
			}
			// The native tools are measured whether or not they are sent.
			ntc, _ := mcs.NewBaseDriver(manyTools{n: tc.tools}, native).NativeToolContext(ctx, "")
			data, _ := json.Marshal(ntc.Tools)
			if b.NativeToolsBytes != len(data) {
				t.Errorf("NativeToolsBytes %d, want %d", b.NativeToolsBytes, len(data))
			}
			if tc.native && b.NativeSystemMessageBytes != len(ntc.SystemMessage) {
				t.Errorf("NativeSystemMessageBytes %d", b.NativeSystemMessageBytes)
			}
			if len(b.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", b.Warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(b.Warnings[i], w) {
					t.Errorf("warning %q lacks %q", b.Warnings[i], w)
				}
			}
		})
	}
	if _, err := budget.Measure(ctx, mcs.NewBaseDriver(manyTools{err: errors.New("spec down")}), ""); err == nil || !strings.Contains(err.Error(), "spec down") {
		t.Errorf("error %v", err)
	}
}

func TestEstimateTokens(t *testing.T) {
	for n, want := range map[int]int{0: 0, -1: 0, 1: 1, 4: 1, 5: 2, 8000: 2000} {
		if got := budget.EstimateTokens(n); got != want {
			t.Errorf("EstimateTokens(%d) = %d, want %d", n, got, want)
		}
	}
}

// ExampleMeasure shows what 200 tools cost before a model is asked.
func ExampleMeasure() {
	d := mcs.NewBaseDriver(manyTools{n: 200}, mcs.WithNativeTools(func(string) bool { return true }))
	b, err := budget.Measure(context.Background(), d, "gpt-4o")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d tools, native=%v, about %d tokens of tools\n", b.Tools, b.Native, b.NativeTokens)
	for _, w := range b.Warnings {
		fmt.Println("warning:", w[:strings.Index(w, ";")])
	}
	// Output:
	// 200 tools, native=true, about 8900 tokens of tools
	// warning: 200 tools exceed the limit of 128 (OpenAI rejects more than 128 tools in one request)
}
