package sandbox

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The watchdog reads the free space about ten times a second far from the
// budget, more often near it, and not at all once finished.
func TestDiskWatchPace(t *testing.T) {
	tests := []struct {
		name     string
		free     int64 // after the first reading
		min, max int64 // readings in one second
	}{
		{"idle, far from the budget", 100 << 30, 9, 11},
		{"near the budget", 100<<30 - 1023<<20, 400, 501},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var reads atomic.Int64
				defer SetDiskSpace(func(string) (int64, int64, error) {
					if reads.Add(1) == 1 {
						return 100 << 30, 1 << 40, nil
					}
					return tc.free, 1 << 40, nil
				})()
				w, err := watchDisk("/workspace", 1<<30)
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second) // fake time, in the bubble
				synctest.Wait()
				n := reads.Load() - 1
				if exceeded, notice := w.finish(); exceeded {
					t.Fatalf("exceeded: %s", notice)
				}
				if n < tc.min || n > tc.max {
					t.Errorf("%d readings in a second, want %d to %d", n, tc.min, tc.max)
				}
				after := reads.Load()
				time.Sleep(time.Second)
				if got := reads.Load(); got != after {
					t.Errorf("%d readings after finish", got-after)
				}
			})
		})
	}
}
