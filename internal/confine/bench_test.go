package confine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs/internal/confine"
)

// BenchmarkResolve resolves a five-element path with one link, the typical cost
// added to every file tool call.
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", "c", "d"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("a", "b"), filepath.Join(dir, "l")); err != nil {
		b.Fatal(err)
	}
	r, err := confine.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Resolve("l/c/d/file.txt"); err != nil {
			b.Fatal(err)
		}
	}
}
