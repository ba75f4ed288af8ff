package csv_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs/drivers/csv"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/mcstest"
)

// TestConformance runs the tool driver and the complete driver through the
// conformance kit.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte("name,n\na,1\nb,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	probes := []mcstest.Probe{
		{Tool: "describe_csv", Args: map[string]any{"path": "d.csv"}},
		{Tool: "read_csv_head", Args: map[string]any{"path": "d.csv", "limit": 1.0}},
		{Tool: "summarize_numeric_column", Args: map[string]any{"path": "d.csv", "column": "n"}},
		{Tool: "read_csv_head", Args: map[string]any{"path": "d.csv", "limit": "many"}, Invalid: true},
		{Tool: "describe_csv", Args: map[string]any{}, Invalid: true},
	}
	td := drivertest.Open(t, csv.NewToolDriver, csv.Config{Root: dir})
	if err := mcstest.TestToolDriver(td, probes...); err != nil {
		t.Error(err)
	}
	d := drivertest.OpenDriver(t, csv.New, csv.Config{Root: dir})
	if err := mcstest.TestToolDriver(d, probes...); err != nil {
		t.Error(err)
	}
}
