package mcs_test

import (
	"testing"

	"github.com/mcs-go/mcs"
)

func TestCloneArgsIsDeepAndIndependent(t *testing.T) {
	in := map[string]any{
		"city":  "Paris",
		"n":     3.0,
		"tags":  []any{"a", map[string]any{"k": "v"}},
		"inner": map[string]any{"list": []any{1.0, 2.0}},
		"none":  nil,
	}
	out := mcs.CloneArgs(in)
	out["city"] = "Rome"
	out["tags"].([]any)[1].(map[string]any)["k"] = "changed"
	out["inner"].(map[string]any)["list"].([]any)[0] = 9.0
	out["added"] = true
	if in["city"] != "Paris" || in["tags"].([]any)[1].(map[string]any)["k"] != "v" ||
		in["inner"].(map[string]any)["list"].([]any)[0] != 1.0 || len(in) != 5 {
		t.Fatalf("changing the copy changed the original: %v", in)
	}
	if mcs.CloneArgs(nil) != nil {
		t.Fatal("CloneArgs(nil) is not nil")
	}
}

// BenchmarkCloneArgs copies the arguments of a typical call: scalars only, and with
// one nested object.
func BenchmarkCloneArgs(b *testing.B) {
	flat := map[string]any{"city": "Paris"}
	nested := map[string]any{"city": "Paris", "units": "metric", "days": 3.0,
		"where": map[string]any{"lat": 48.85, "lon": 2.35}}
	for _, c := range []struct {
		name string
		args map[string]any
	}{{"flat", flat}, {"nested", nested}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if mcs.CloneArgs(c.args) == nil {
					b.Fatal("nil copy")
				}
			}
		})
	}
}
