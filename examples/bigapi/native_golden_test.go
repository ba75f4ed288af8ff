package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestNativeToolsGolden pins the JSON of the native tools of the whole bigapi
// listing (1,103 tools behind Namespacing) as a BaseDriver gives them to a
// provider adapter: json.Marshal of NativeToolContext.Tools must stay the same
// bytes, whatever type holds them. The golden file is gzipped (the JSON is
// about 950 KB, mostly repeated schema text).
func TestNativeToolsGolden(t *testing.T) {
	ctx := context.Background()
	a, err := newAPIs(1000, "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	full, err := newStack(a, orchestrator.Namespacing())
	if err != nil {
		t.Fatal(err)
	}
	d := mcs.NewBaseDriver(full, mcs.WithNativeTools(func(string) bool { return true }))
	nc, err := d.NativeToolContext(ctx, "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	if len(nc.Tools) != 1103 {
		t.Fatalf("%d native tools, want 1103", len(nc.Tools))
	}
	got, err := json.Marshal(nc.Tools)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "native_tools.golden.json.gz")
	if *update {
		writeGzip(t, path, got)
		return
	}
	want := readGzip(t, path)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("native tools JSON differs from %s at byte %d of %d (want %d):\n got …%s…\nwant …%s…",
			path, i, len(got), len(want), window(got, i), window(want, i))
	}
}

// window returns up to 80 bytes of b around i.
func window(b []byte, i int) []byte {
	lo, hi := max(i-40, 0), min(i+40, len(b))
	if lo > hi {
		return nil
	}
	return b[lo:hi]
}

// writeGzip writes data gzipped to path, creating its directory.
func writeGzip(t *testing.T, path string, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readGzip returns the gunzipped content of path.
func readGzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("read golden file: %v (run go test -args -update to create it)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("read golden file %s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("read golden file %s: %v", path, err)
	}
	return data
}
