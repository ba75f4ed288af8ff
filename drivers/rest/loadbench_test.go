package rest

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkLoadGitHub loads a GitHub-shaped description and lists its tools,
// once per iteration, from a fresh driver: cold (no cache) and warm (the
// tool-table cache holds the listing). cpu-ms/op is the process's user and
// system CPU time per iteration, which a loaded machine inflates less than
// the wall time.
func BenchmarkLoadGitHub(b *testing.B) {
	for _, tc := range []struct {
		name  string
		shape githubShape
	}{{"771ops", githubLike}, {"1200ops", githubLarge}} {
		for _, warm := range []bool{false, true} {
			name := tc.name + "/cold"
			if warm {
				name = tc.name + "/warm"
			}
			b.Run(name, func(b *testing.B) {
				data := githubDoc(b, tc.shape)
				cfg := Config{Spec: data, NoCache: true}
				if warm {
					cfg = Config{Spec: data, CacheDir: b.TempDir()}
					if _, fromCache := listFrom(b, cfg); fromCache {
						b.Fatal("the cache was not empty")
					}
				}
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				ctx := context.Background()
				cpu := cpuTime()
				for b.Loop() {
					td, err := NewToolDriver(cfg)
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
					if warm && td.spec.Load().cached == nil {
						b.Fatal("the warm start did not use the cache")
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(len(data))/1e6, "MB-doc")
			})
		}
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSameName loads documents whose operations all share one name; the
// cost per operation must stay flat from 1,000 to 20,000 operations.
func BenchmarkSameName(b *testing.B) {
	for _, n := range []int{1_000, 5_000, 20_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			data := sameNameDoc(n)
			b.ReportAllocs()
			ctx := context.Background()
			cpu := cpuTime()
			for b.Loop() {
				td, err := NewToolDriver(Config{Spec: data, NoCache: true})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := td.ListTools(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/operation")
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N)/float64(n), "cpu-ns/operation")
		})
	}
}
