package csv_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs/drivers/csv"
)

// writeGenerated writes a generated file of about size bytes into dir.
func writeGenerated(tb testing.TB, dir, name string, size int64) int64 {
	tb.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := io.Copy(w, csv.NewGenerator(size))
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkSummarize summarises one column of a generated 100 MB file; the MB/s
// figure is the reading speed.
func BenchmarkSummarize(b *testing.B) {
	dir := b.TempDir()
	size := writeGenerated(b, dir, "big.csv", 100<<20)
	td, err := csv.NewToolDriver(csv.Config{Root: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer td.Close()
	args := map[string]any{"path": "big.csv", "column": "amount"}
	ctx := context.Background()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := td.ExecuteTool(ctx, "summarize_numeric_column", args); err != nil {
			b.Fatal(err)
		}
	}
}
