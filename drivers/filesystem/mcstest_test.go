package filesystem_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/mcstest"
)

// TestConformance runs the tool driver and the complete driver through the
// conformance kit. The probes only read: the kit makes them from several
// goroutines at once.
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	probes := []mcstest.Probe{
		{Tool: "read_file", Args: map[string]any{"path": "a.txt"}},
		{Tool: "list_directory", Args: map[string]any{"path": "."}},
		{Tool: "file_info", Args: map[string]any{"path": "a.txt"}},
		{Tool: "read_file", Args: map[string]any{"path": 7.0}, Invalid: true},
		{Tool: "read_file", Args: map[string]any{}, Invalid: true},
	}
	td := drivertest.Open(t, filesystem.NewToolDriver, filesystem.Config{Root: dir})
	if err := mcstest.TestToolDriver(td, probes...); err != nil {
		t.Error(err)
	}
	d := drivertest.OpenDriver(t, filesystem.New, filesystem.Config{Root: dir})
	if err := mcstest.TestToolDriver(d, probes...); err != nil {
		t.Error(err)
	}
}
