package clone

import (
	"encoding/json"
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
