package rest

import (
	"context"
	"testing"
)

// BenchmarkLoadGitHub loads a GitHub-shaped description and lists its tools,
// once per iteration, from a fresh driver.
func BenchmarkLoadGitHub(b *testing.B) {
	for _, tc := range []struct {
		name  string
		shape githubShape
	}{{"771ops", githubLike}, {"1200ops", githubLarge}} {
		b.Run(tc.name, func(b *testing.B) {
			data := githubDoc(b, tc.shape)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			ctx := context.Background()
			for b.Loop() {
				td, err := NewToolDriver(Config{Spec: data})
				if err != nil {
					b.Fatal(err)
				}
				tools, err := td.ListTools(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if len(tools) != tc.shape.ops {
					b.Fatalf("%d tools, want %d", len(tools), tc.shape.ops)
				}
			}
			b.ReportMetric(float64(len(data))/1e6, "MB-doc")
		})
	}
}
