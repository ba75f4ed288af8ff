package rest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rssSpecEnv names the document a child process of BenchmarkLoadPeakRSS
// loads.
const rssSpecEnv = "MCS_REST_RSS_SPEC"

// TestPeakRSSChild is the child of BenchmarkLoadPeakRSS: it loads the file
// named by MCS_REST_RSS_SPEC and lists its tools. Without it, it skips.
func TestPeakRSSChild(t *testing.T) {
	path := os.Getenv(rssSpecEnv)
	if path == "" {
		t.Skip("runs only as the child of BenchmarkLoadPeakRSS")
	}
	td := mustToolDriver(t, Config{SpecURL: path, NoCache: true})
	tools, err := td.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 {
		t.Fatal("no tools")
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("%s%s\n", peakMarker, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")))
		}
	}
}

// peakMarker starts the child's report of its peak resident set in KiB.
const peakMarker = "PEAK-RSS-KIB="

// BenchmarkLoadPeakRSS runs the test binary as a child that loads the 13 MB
// description from a file and lists its tools, and reports the child's peak
// resident set size (VmHWM, which the exec resets, so the parent's memory is
// not counted), next to that of a child that loads a small document (the
// binary's own footprint).
func BenchmarkLoadPeakRSS(b *testing.B) {
	dir := b.TempDir()
	large := filepath.Join(dir, "large.json")
	if err := os.WriteFile(large, githubDoc(b, githubLarge), 0o600); err != nil {
		b.Fatal(err)
	}
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, jsonFixture(b, "petstore.yaml"), 0o600); err != nil {
		b.Fatal(err)
	}
	peak := func(path string) float64 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestPeakRSSChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), rssSpecEnv+"="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, peakMarker); ok {
				kib, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatal(err)
				}
				return kib / 1024
			}
		}
		b.Skipf("the child reported no peak:\n%s", out)
		return 0
	}
	var largePeak, smallPeak float64
	for b.Loop() {
		largePeak = max(largePeak, peak(large))
		smallPeak = max(smallPeak, peak(small))
	}
	b.ReportMetric(largePeak, "MiB-peak-rss-13MB")
	b.ReportMetric(smallPeak, "MiB-peak-rss-small")
}
