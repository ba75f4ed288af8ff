package sandbox_test

import (
	"slices"
	"testing"
	"time"

	"github.com/mcs-go/mcs/drivers/sandbox"
)

// BenchmarkRunTrue runs the command "true" in bwrap, reporting the median and
// the 99th percentile of a call.
func BenchmarkRunTrue(b *testing.B) {
	td := newTD(b, sandbox.Config{})
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if r := run(b, td, "true", nil); r.ExitCode != 0 {
			b.Fatalf("result %+v", r)
		}
		times = append(times, time.Since(start))
	}
	reportPercentiles(b, times)
}

// BenchmarkTimeoutTree times a timeout of 1 s on a tree of 50 sleeping
// processes, until every one has ended.
func BenchmarkTimeoutTree(b *testing.B) {
	td := newTD(b, sandbox.Config{Timeout: time.Second, MaxProcesses: 200})
	times := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if r := run(b, td, "for i in $(seq 50); do sleep 1000 & done; wait", nil); !r.TimedOut {
			b.Fatalf("result %+v", r)
		}
		times = append(times, time.Since(start))
	}
	reportPercentiles(b, times)
}

func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[(len(times)*99)/100].Microseconds())/1000, "p99-ms")
}
