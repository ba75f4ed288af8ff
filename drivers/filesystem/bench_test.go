package filesystem_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/drivers/filesystem"
)

// BenchmarkReadFile reads a 64 KiB text file through the tool.
func BenchmarkReadFile(b *testing.B) {
	dir := b.TempDir()
	content := strings.Repeat("hello, world\n", 64<<10/13)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	td, err := filesystem.NewToolDriver(filesystem.Config{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer td.Close()
	args := map[string]any{"path": "f.txt"}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := td.ExecuteTool(context.Background(), "read_file", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMoveDirectory moves a directory of 1,000 files and 10 symbolic links
// back and forth between two depths: the cost of checking where the links lead
// once moved, with the rename.
func BenchmarkMoveDirectory(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "a", "d")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10 {
		if err := os.Symlink(fmt.Sprintf("f%04d", i), filepath.Join(src, fmt.Sprintf("l%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	td, err := filesystem.NewToolDriver(filesystem.Config{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer td.Close()
	there := map[string]any{"from": "a/d", "to": "b/c/d"}
	back := map[string]any{"from": "b/c/d", "to": "a/d"}
	b.ReportAllocs()
	for b.Loop() {
		for _, args := range []map[string]any{there, back} {
			if _, err := td.ExecuteTool(context.Background(), "move_file", args); err != nil {
				b.Fatal(err)
			}
		}
	}
}
