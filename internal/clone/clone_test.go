package clone

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClone(t *testing.T) {
	type point struct{ X int }
	p := &point{1}
	tests := []struct {
		name string
		in   any
	}{
		{"nil", nil},
		{"scalars", []any{"s", true, 1.5, 2, json.Number("3")}},
		{"nested", map[string]any{"a": []any{map[string]any{"b": []any{1.0}}}}},
		{"typed maps and slices", map[string][]string{"k": {"v"}}},
		{"nil typed map", map[string]int(nil)},
		{"nil slice", []any(nil)},
		{"array of slices", [2][]int{{1}, {2}}},
		{"slice of interfaces holding nil", []any{nil, map[string]any(nil)}},
		{"pointer shared", []*point{p}},
		{"raw", json.RawMessage(`{"a":1}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Value(tt.in)
			if diff := cmp.Diff(tt.in, got); diff != "" {
				t.Errorf("clone differs (-in +got):\n%s", diff)
			}
		})
	}
	if got := Value([]*point{p}).([]*point); got[0] != p {
		t.Error("pointers must be shared, not copied")
	}
	// An array of one pointer is stored directly in an interface.
	if got := Value([1]*point{p}).([1]*point); got[0] != p {
		t.Errorf("array of one pointer: got %p, want %p", got[0], p)
	}
	if got := Args(map[string]any{"a": [1]*point{p}})["a"].([1]*point); got[0] != p {
		t.Errorf("nested array of one pointer: got %p, want %p", got[0], p)
	}
	if Args(nil) != nil {
		t.Error("Args(nil) != nil")
	}
}

func TestCloneOfACycleTerminates(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	s := []any{nil}
	s[0] = s
	got := Args(m)
	depth := 0
	for cur := got; ; depth++ {
		next, ok := cur["self"].(map[string]any)
		if !ok {
			t.Fatalf("cycle broken at depth %d", depth)
		}
		if len(next) == 1 && depth > MaxDepth+5 {
			break
		}
		cur = next
	}
	_ = Value(s) // must return, not overflow the stack
	type loop map[string]loop
	l := loop{}
	l["x"] = l
	_ = Value(l)
}

// TestSelfReferenceTwiceIsBounded: a map that holds itself under two keys would
// take 2^MaxDepth copies without the node budget.
func TestSelfReferenceTwiceIsBounded(t *testing.T) {
	m := map[string]any{}
	m["a"] = m
	m["b"] = m
	out := Args(m)
	if out == nil || out["a"] == nil {
		t.Fatal("the copy lost the entries")
	}
	// Count the distinct maps the copy made: at most the budget.
	seen := map[uintptr]bool{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		x, ok := v.(map[string]any)
		if !ok || depth > MaxDepth+1 {
			return
		}
		p := reflect.ValueOf(x).Pointer()
		if seen[p] {
			return
		}
		seen[p] = true
		for _, e := range x {
			walk(e, depth+1)
		}
	}
	walk(out, 0)
	if len(seen) > MaxNodes+1 {
		t.Errorf("the copy made %d maps, budget %d", len(seen), MaxNodes)
	}
}
