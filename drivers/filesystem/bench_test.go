package filesystem_test

import (
	"context"
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
