//go:build unix

package rest

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

// cacheEntryPath is where cfg's driver looks for the cache entry of its spec.
func cacheEntryPath(t *testing.T, cfg Config) string {
	t.Helper()
	norm, _, _, err := normalize(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := newToolCache(norm)
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return c.entry(cfg.Spec, norm).path
}

// TestAttackCacheFIFOHangsListTools: a FIFO planted at a cache entry's path
// would block the open of the entry until someone writes to it; the driver
// does not wait for it and lists the document's tools.
func TestAttackCacheFIFOHangsListTools(t *testing.T) {
	doc := fixture(t, "petstore.yaml")
	want, _ := listFrom(t, Config{Spec: doc, NoCache: true})
	cfg := Config{Spec: doc, CacheDir: t.TempDir()}
	path := cacheEntryPath(t, cfg)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	td := mustToolDriver(t, cfg)
	type result struct {
		tools []mcs.Tool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		tools, err := td.ListTools(context.Background())
		done <- result{tools, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		if diff := cmp.Diff(want, r.tools); diff != "" {
			t.Errorf("listing (-document +got):\n%s", diff)
		}
	case <-time.After(30 * time.Second): // a guard against hanging the test binary, not a measurement
		// Release the blocked open with a writer that closes at once.
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("ListTools blocked on a FIFO at the cache entry's path")
	}
}

// TestAttackCacheSymlinkIsNotFollowed: a symbolic link at a cache entry's path,
// to a planted listing elsewhere, is not followed.
func TestAttackCacheSymlinkIsNotFollowed(t *testing.T) {
	doc := fixture(t, "petstore.yaml")
	want, _ := listFrom(t, Config{Spec: doc, NoCache: true})
	// A valid, planted entry in another directory of the same user.
	elsewhere := Config{Spec: doc, CacheDir: t.TempDir()}
	planted := forge(t, elsewhere, func(cf *cacheFile) { cf.Tools[0].Description = "planted" })
	cfg := Config{Spec: doc, CacheDir: t.TempDir()}
	if err := os.Symlink(planted, cacheEntryPath(t, cfg)); err != nil {
		t.Fatal(err)
	}
	got, fromCache := listFrom(t, cfg)
	if fromCache {
		t.Error("the listing came from a cache entry behind a symbolic link")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("listing (-document +got):\n%s", diff)
	}
}
