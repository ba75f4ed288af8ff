//go:build unix

package confine_test

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcs-go/mcs/internal/confine"
)

func TestOpenRefusesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r := openRoot(t, dir)
	// Without the check the open would wait for a writer forever.
	_, _, err := r.OpenRegular("pipe")
	if !errors.Is(err, confine.ErrNotRegular) {
		t.Errorf("OpenRegular(pipe) error = %v, want ErrNotRegular", err)
	}
	if _, err := r.OpenDir("pipe"); !errors.Is(err, confine.ErrNotDirectory) {
		t.Errorf("OpenDir(pipe) error = %v, want ErrNotDirectory", err)
	}
}
