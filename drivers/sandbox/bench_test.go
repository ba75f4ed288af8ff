package sandbox_test

import (
	"slices"
	"syscall"
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

// BenchmarkDiskWatchdog is what the disk watchdog adds to every command: one
// reading of the free space, its goroutine and timer, stopping them and a
// last reading. Compare with BenchmarkRunTrue.
func BenchmarkDiskWatchdog(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		finish, err := sandbox.WatchDisk(dir, sandbox.DefaultMaxDiskBytes)
		if err != nil {
			b.Fatal(err)
		}
		if exceeded, notice := finish(); exceeded {
			b.Fatalf("an idle watchdog reports: %s", notice)
		}
	}
}

// BenchmarkDiskWatchdogIdle runs "sleep 1" and reports the CPU time this
// process spent on it: starting and waiting for the sandbox, and the disk
// watchdog's readings, about ten a second far from the budget.
func BenchmarkDiskWatchdogIdle(b *testing.B) {
	td := newTD(b, sandbox.Config{})
	var cpu time.Duration
	for b.Loop() {
		before := processCPU(b)
		if r := run(b, td, "sleep 1", nil); r.ExitCode != 0 {
			b.Fatalf("result %+v", r)
		}
		cpu += processCPU(b) - before
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/s")
}

// processCPU is the CPU time, user and system, this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
