package csv_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs/drivers/csv"
)

// Every CSV tool only reads.
func TestAnnotations(t *testing.T) {
	d, err := csv.NewToolDriver(csv.Config{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	list, _ := d.ListTools(context.Background())
	for _, tool := range list {
		if a := tool.Annotations; a == nil || !a.ReadOnly || a.Destructive {
			t.Errorf("%s: annotations = %+v, want read-only", tool.Name, a)
		}
	}
}
