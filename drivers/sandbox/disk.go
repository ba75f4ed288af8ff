package sandbox

import (
	"fmt"
	"sync"
	"time"
)

// The watchdog's pace. It reads the free space of the workspace's file system
// (statfs(2), a microsecond or two) at intervals chosen so that a command
// writing at diskWriteRate cannot cross its budget between two readings: far
// from the budget it reads every maxDiskPoll, near it every minDiskPoll. A
// command that writes faster than diskWriteRate may overshoot by its speed
// times the interval; RLIMIT_FSIZE still caps each file.
const (
	diskWriteRate = 4 << 30 // bytes per second
	minDiskPoll   = 2 * time.Millisecond
	maxDiskPoll   = 100 * time.Millisecond
)

// diskFloor is the free space a command may never take the workspace's file
// system below: 5% of its size, at most 1 GiB.
func diskFloor(size int64) int64 { return min(size/20, 1<<30) }

// diskSpace reports the space of the file system that holds dir, in bytes:
// what an unprivileged user may still write, and its size. It is a variable so
// that tests may replace it.
var diskSpace = statDisk

// diskBudget is what may still be added to the workspace's file system now:
// at most limit, and never so much that less than the floor is left free. It
// also returns the free space, and which of the two bounds it is.
func diskBudget(dir string, limit int64) (budget, free int64, byFloor bool, err error) {
	free, size, err := diskSpace(dir)
	if err != nil {
		return 0, 0, false, fmt.Errorf("cannot read the free space of the workspace's file system: %w", err)
	}
	floor := diskFloor(size)
	if room := max(free-floor, 0); room < limit {
		return room, free, true, nil
	}
	return limit, free, false, nil
}

// diskWatch is the watchdog of one command: it measures how much the free
// space of the workspace's file system falls while the command runs, and
// closes abort when the fall crosses the budget. Its goroutine ends when
// finish is called.
type diskWatch struct {
	dir     string
	budget  int64 // bytes the command may add
	limit   int64 // Config.MaxDiskBytes
	free0   int64 // free space when the command started
	byFloor bool  // the budget is the room above the floor, not the limit

	abort chan struct{} // closed when the budget is crossed
	stop  chan struct{} // closed by finish
	done  chan struct{} // closed when the goroutine has ended

	mu       sync.Mutex
	used     int64 // the largest fall seen
	exceeded bool
	err      error
}

// watchDisk reads the free space of dir once and starts the watchdog of a
// command that may add limit bytes to it. It fails when the free space cannot
// be read.
func watchDisk(dir string, limit int64) (*diskWatch, error) {
	budget, free, byFloor, err := diskBudget(dir, limit)
	if err != nil {
		return nil, err
	}
	w := &diskWatch{
		dir: dir, budget: budget, limit: limit, free0: free, byFloor: byFloor,
		abort: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go w.loop()
	return w, nil
}

func (w *diskWatch) loop() {
	defer close(w.done)
	t := time.NewTimer(w.interval(0))
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		used, over := w.check(false)
		if over {
			close(w.abort)
			return
		}
		t.Reset(w.interval(used))
	}
}

// interval is how long the command may write at diskWriteRate before it could
// cross the budget, having used used bytes of it.
func (w *diskWatch) interval(used int64) time.Duration {
	left := float64(max(w.budget-used, 0))
	d := time.Duration(left / diskWriteRate * float64(time.Second))
	return min(max(d, minDiskPoll), maxDiskPoll)
}

// check reads the free space once and records the fall. A reading that
// fails stops the command, unless it is the last, after the command.
func (w *diskWatch) check(last bool) (used int64, over bool) {
	free, _, err := diskSpace(w.dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && last {
		return w.used, w.exceeded
	}
	if err != nil {
		// The file system went away or cannot be read: the bound cannot be
		// kept, so the command is stopped.
		w.err, w.exceeded = err, true
		return w.used, true
	}
	w.used = max(w.used, w.free0-free)
	w.exceeded = w.exceeded || w.used > w.budget
	return w.used, w.exceeded
}

// finish stops the watchdog, waits for its goroutine, takes a last reading and
// reports whether the command crossed its budget, with a notice that says so.
func (w *diskWatch) finish() (exceeded bool, notice string) {
	close(w.stop)
	<-w.done
	w.check(true)
	w.mu.Lock()
	defer w.mu.Unlock()
	stopped := "and was stopped with all its processes"
	select {
	case <-w.abort:
	default:
		stopped = "before it ended" // between two readings
	}
	switch {
	case !w.exceeded:
		return false, ""
	case w.err != nil:
		return true, fmt.Sprintf("the free space of the workspace's file system could not be read (%v), so the command was stopped", w.err)
	case w.byFloor:
		return true, fmt.Sprintf("the workspace's file system is nearly full: the command used %s, more than the %s that could be written while leaving %s free, %s; delete files to make room",
			byteSize(w.used), byteSize(w.budget), byteSize(w.free0-w.budget), stopped)
	}
	return true, fmt.Sprintf("the command added %s to the workspace's file system, more than the limit of %s, %s; delete files it wrote that are not needed, or write less",
		byteSize(w.used), byteSize(w.limit), stopped)
}

// byteSize formats n bytes for a notice.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
