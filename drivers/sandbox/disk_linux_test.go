package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/internal/drivertest"
)

// fillLoop writes files of 4 MiB in the workspace until it is stopped.
const fillLoop = "i=0; while :; do head -c 4194304 /dev/zero > fill$i; i=$((i+1)); done"

// slack is how far past its budget a command may get before it is stopped: a
// few readings of the watchdog at the speed of the disk.
const slack = 24 << 20

// A command that writes files until it is stopped fills neither the host's
// disk nor more than its budget: it is killed near the budget, and the
// result says why.
func TestDiskFill(t *testing.T) {
	needBwrap(t)
	const budget = 64 << 20
	ws := newWorkspace(t)
	td := newTD(t, sandbox.Config{Workspace: ws, MaxDiskBytes: budget, Timeout: 60 * time.Second})
	start := time.Now()
	r := run(t, td, fillLoop, nil)
	if !r.DiskLimitExceeded || r.TimedOut || r.ExitCode != -1 || !strings.HasSuffix(r.Notice, "more than the limit of 64.0 MiB, and was stopped with all its processes; delete files it wrote that are not needed, or write less") {
		t.Errorf("result = %+v, want stopped for the disk limit", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the command ran %v before it was stopped", d)
	}
	t.Logf("notice %q; wrote %d bytes", r.Notice, dirBytes(t, ws))
	if n := dirBytes(t, ws); n > budget+slack {
		t.Errorf("the command wrote %d bytes, want at most the budget of %d and %d of slack", n, budget, slack)
	}
	// Within the budget, a command runs as before.
	if r := run(t, td, "head -c 1048576 /dev/zero > small && rm fill* && echo ok", nil); r.DiskLimitExceeded || r.Stdout != "ok\n" {
		t.Errorf("a command within the budget: %+v", r)
	}
}

// On a file system of its own, the free space after the attack is that of
// before less at most the budget; and when the file system is smaller than
// the budget, the floor of free space stops the command before it is full.
func TestDiskFillFreeSpace(t *testing.T) {
	needBwrap(t)
	for _, tc := range []struct {
		name       string
		size       int64 // of the file system
		budget     int64
		notice     string
		minFreeEnd int64
	}{
		{"budget", 256 << 20, 64 << 20, "more than the limit of 64.0 MiB", 256<<20 - 64<<20 - slack},
		{"floor", 128 << 20, 0, "the workspace's file system is nearly full", 1 << 20}, // the floor is 5% of 128 MiB
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := tmpfsWorkspace(t, tc.size)
			before, _, err := sandbox.DiskSpace(ws)
			if err != nil {
				t.Fatal(err)
			}
			td := newTD(t, sandbox.Config{Workspace: ws, MaxDiskBytes: tc.budget, Timeout: 60 * time.Second})
			r := run(t, td, fillLoop, nil)
			after, _, err := sandbox.DiskSpace(ws)
			if err != nil {
				t.Fatal(err)
			}
			if !r.DiskLimitExceeded || r.TimedOut || !strings.Contains(r.Notice, tc.notice) {
				t.Errorf("result = %+v, want stopped for the disk limit with %q", r, tc.notice)
			}
			t.Logf("notice %q; free before %d, after %d", r.Notice, before, after)
			if tc.budget > 0 && before-after > tc.budget+slack {
				t.Errorf("free space fell by %d bytes, more than the budget of %d and %d of slack", before-after, tc.budget, slack)
			}
			if after < tc.minFreeEnd {
				t.Errorf("free space after the attack is %d bytes, want at least %d", after, tc.minFreeEnd)
			}
		})
	}
}

// The per-file cap holds beside the watchdog, and follows MaxDiskBytes when
// that is less than MaxFileSize.
func TestDiskFileCap(t *testing.T) {
	needBwrap(t)
	const budget = 32 << 20
	ws := newWorkspace(t)
	td := newTD(t, sandbox.Config{Workspace: ws, MaxDiskBytes: budget})
	r := run(t, td, "head -c 100000000 /dev/zero > big; echo $?", nil)
	fi, err := os.Stat(filepath.Join(ws, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > budget {
		t.Errorf("the file has %d bytes, more than the cap of %d", fi.Size(), budget)
	}
	if !strings.Contains(r.Stderr, "File size limit exceeded") && !r.DiskLimitExceeded {
		t.Errorf("result = %+v, want the file size limit or the disk limit", r)
	}
}

// The floor is checked from the first reading: a command on a nearly full file
// system is stopped as soon as its writes are seen, with a notice that says
// the file system is nearly full.
func TestDiskFloor(t *testing.T) {
	needBwrap(t)
	ws := newWorkspace(t)
	td := newTD(t, sandbox.Config{Workspace: ws})
	// A file system of 100 GiB (the floor is 1 GiB) with 1.5 GiB free, which
	// falls by 600 MiB after the first reading.
	var reads atomic.Int64
	defer sandbox.SetDiskSpace(func(string) (int64, int64, error) {
		if reads.Add(1) == 1 {
			return 3 << 29, 100 << 30, nil
		}
		return 3<<29 - 600<<20, 100 << 30, nil
	})()
	r := run(t, td, "sleep 30", nil)
	if !r.DiskLimitExceeded || r.TimedOut || !strings.Contains(r.Notice, "nearly full") || !strings.Contains(r.Notice, "leaving 1 GiB free") {
		t.Errorf("result = %+v, want stopped at the floor", r)
	}
	// A command that ends between two readings, having written too much, is
	// reported too.
	var fast atomic.Int64
	restore := sandbox.SetDiskSpace(func(string) (int64, int64, error) {
		if fast.Add(1) == 1 {
			return 100 << 30, 200 << 30, nil
		}
		return 98 << 30, 200 << 30, nil
	})
	r = run(t, td, "true", nil)
	restore()
	ended := r.ExitCode == 0 && strings.Contains(r.Notice, "more than the limit of 1 GiB, before it ended")
	stopped := r.ExitCode == -1 && strings.Contains(r.Notice, "more than the limit of 1 GiB, and was stopped") // on a slow machine
	if !r.DiskLimitExceeded || !(ended || stopped) {
		t.Errorf("result = %+v, want a command over the budget reported", r)
	}
	// A file system that cannot be read, after the first reading, stops the
	// command too.
	var failing atomic.Int64
	defer sandbox.SetDiskSpace(func(string) (int64, int64, error) {
		if failing.Add(1) == 1 {
			return 100 << 30, 200 << 30, nil
		}
		return 0, 0, errors.New("input/output error")
	})()
	r = run(t, td, "sleep 30", nil)
	if !r.DiskLimitExceeded || !strings.Contains(r.Notice, "could not be read (input/output error)") {
		t.Errorf("result = %+v, want stopped for an unreadable file system", r)
	}
	_, err := td.ExecuteTool(context.Background(), "run_command", map[string]any{"command": "true"})
	if err == nil || !strings.Contains(err.Error(), "cannot read the free space of the workspace's file system: input/output error") {
		t.Errorf("error = %v, want the free space unreadable", err)
	}
}

// write_file holds to the same bounds: content longer than MaxDiskBytes, or
// that would take the file system below the floor, is refused and nothing is
// written.
func TestDiskWriteFile(t *testing.T) {
	needBwrap(t)
	ws := newWorkspace(t)
	td := newTD(t, sandbox.Config{Workspace: ws, MaxDiskBytes: 1 << 20})
	big := strings.Repeat("x", 1<<20+1)
	if _, err := drivertest.Call(t, td, "write_file", map[string]any{"path": "big.txt", "content": big}); err == nil || !strings.Contains(err.Error(), "content is 1.0 MiB, more than the 1.0 MiB a call may add to the workspace") {
		t.Errorf("write_file of %d bytes: error %v, want refused", len(big), err)
	}
	if _, err := drivertest.Call(t, td, "write_file", map[string]any{"path": "ok.txt", "content": big[:1<<20]}); err != nil {
		t.Errorf("write_file of 1 MiB: %v", err)
	}
	// 1 GiB and 512 KiB free on 100 GiB: 512 KiB may be written.
	defer sandbox.SetDiskSpace(func(string) (int64, int64, error) { return 1<<30 + 512<<10, 100 << 30, nil })()
	if _, err := drivertest.Call(t, td, "write_file", map[string]any{"path": "floor.txt", "content": big[:600<<10]}); err == nil || !strings.Contains(err.Error(), "must keep 1 GiB free") {
		t.Errorf("write_file below the floor: error %v, want refused", err)
	}
	if _, err := drivertest.Call(t, td, "write_file", map[string]any{"path": "fits.txt", "content": big[:500<<10]}); err != nil {
		t.Errorf("write_file above the floor: %v", err)
	}
	for _, name := range []string{"big.txt", "floor.txt"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

// The watchdog ends with the command, however the command ends.
func TestDiskWatchdogStops(t *testing.T) {
	needBwrap(t)
	td := newTD(t, sandbox.Config{MaxDiskBytes: 16 << 20, Timeout: time.Second})
	opt := goleak.IgnoreCurrent()
	run(t, td, "true", nil)
	run(t, td, "sleep 30", nil) // timed out
	run(t, td, fillLoop, nil)   // over the budget
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := td.ExecuteTool(ctx, "run_command", map[string]any{"command": "sleep 30"})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled command: %v", err)
	}
	goleak.VerifyNone(t, opt)
}

// dirBytes is the size of the regular files of dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tmpfsWorkspace mounts a memory file system of size bytes as a new workspace,
// so that its free space is the test's alone.
func tmpfsWorkspace(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+strconv.FormatInt(size, 10)); err != nil {
		t.Skipf("cannot mount a file system of the test's own (%v); run the tests as root to measure the free space", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	giveAway(t, dir)
	return dir
}
