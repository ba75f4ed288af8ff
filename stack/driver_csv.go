package stack

import (
	"context"
	"math"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/csv"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "csv",
		Summary: "the CSV files under one directory (root, max_rows)",
		Decode:  decodeCSV,
	})
}

var _ DriverConfig = (*csvDriver)(nil)

type csvDriver struct{ cfg csv.Config }

// decodeCSV reads a [[driver]] table of type "csv":
//
//	root = "./tables"        # relative to the stack file
//	max_rows = 1000
func decodeCSV(t *Table, _ string) DriverConfig {
	d := &csvDriver{}
	d.cfg.Root = t.Path("root")
	if !t.Has("root") {
		t.Errorf("", "has no root; add root = \"./tables\" (the directory of the CSV files)")
	}
	d.cfg.MaxRows = int(t.Int("max_rows", 1, math.MaxInt32))
	return d
}

func (d *csvDriver) ToolDriver(context.Context, *Builder) (mcs.ToolDriver, error) {
	return csv.NewToolDriver(d.cfg)
}

func (d *csvDriver) Driver(_ context.Context, _ *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	return csv.New(d.cfg, opts...)
}
