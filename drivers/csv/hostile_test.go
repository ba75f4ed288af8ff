package csv_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/drivers/csv"
)

// resultLimit is the most bytes a CSV tool's result or error takes.
const resultLimit = 1 << 20

// hostileCSV writes a file of about 3 MiB built to swell in JSON: a header of
// ten thousand names of '<' (each byte is six in JSON, "\u003c"), and three
// rows of nearly 1 MiB of '<' and '"'.
func hostileCSV(t *testing.T, dir string) {
	t.Helper()
	var sb strings.Builder
	names := make([]string, 10_000)
	for i := range names {
		names[i] = strings.Repeat("<", 95) + strconv.Itoa(i)
	}
	sb.WriteString(strings.Join(names, ","))
	sb.WriteString("\n")
	cell := `"` + strings.Repeat(`<""`, 330_000) + `"` // 330,000 '<' and '"' inside quotes
	for i := range 3 {
		sb.WriteString(strconv.Itoa(i) + "," + cell + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "hostile.csv"), []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAttackHostileCSVSwellsResults: a file of 3 MiB made to swell in JSON
// (describe_csv used to return 9 MB from one), and a tree of files with long
// names, get results and errors of at most 1 MiB from every tool, each cut
// result saying so.
func TestAttackHostileCSVSwellsResults(t *testing.T) {
	dir := t.TempDir()
	hostileCSV(t, dir)
	// Files with long names: 700 paths of about 2,000 bytes.
	deep := dir
	for i := range 7 {
		deep = filepath.Join(deep, strings.Repeat(string(rune('a'+i)), 240))
	}
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 700 {
		name := strings.Repeat("<", 230) + strconv.Itoa(i) + ".csv"
		if err := os.WriteFile(filepath.Join(deep, name), []byte("a\n1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	td := newTD(t, csv.Config{Root: dir, MaxRows: 1000})
	first := strings.Repeat("<", 95) + "0"
	zero := 0
	for _, tc := range []struct {
		tool string
		args map[string]any
		cut  bool // the result is cut and must say so
	}{
		{"list_csv_files", nil, true},
		{"describe_csv", map[string]any{"path": "hostile.csv"}, true},
		{"read_csv_head", map[string]any{"path": "hostile.csv", "limit": zero}, true},
		{"filter_csv_rows", map[string]any{"path": "hostile.csv", "column": first, "value": "<", "operator": "contains", "limit": zero}, true},
		{"summarize_numeric_column", map[string]any{"path": "hostile.csv", "column": first}, false},
		{"summarize_numeric_column", map[string]any{"path": "hostile.csv", "column": "missing"}, false},
		{"filter_csv_rows", map[string]any{"path": "hostile.csv", "column": strings.Repeat(`"`, 2<<20), "value": strings.Repeat(`"`, 2<<20)}, false},
		{"read_csv_head", map[string]any{"path": strings.Repeat("<", 2<<20) + ".csv"}, false},
	} {
		res, err := td.ExecuteTool(context.Background(), tc.tool, tc.args)
		if err != nil {
			if n := len(err.Error()); n > resultLimit {
				t.Errorf("%s %v: the error takes %d bytes, more than %d", tc.tool, tc.args["column"], n, resultLimit)
			}
			continue
		}
		data, merr := json.Marshal(res)
		if merr != nil {
			t.Fatal(merr)
		}
		if len(data) > resultLimit {
			t.Errorf("%s: the result takes %d bytes, more than %d", tc.tool, len(data), resultLimit)
		}
		if m, ok := res.(map[string]any); ok && tc.cut {
			if n, _ := m["notice"].(string); m["truncated"] != true || !strings.Contains(n, "larger than 1 MiB") {
				t.Errorf("%s: the cut result does not say so: notice %q", tc.tool, n)
			}
		}
	}
}
