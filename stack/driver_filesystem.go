package stack

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/filesystem"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "filesystem",
		Summary: "the files under one directory (root, read_only, allow_delete, max_read_bytes)",
		Decode:  decodeFilesystem,
	})
}

var _ DriverConfig = (*filesystemDriver)(nil)

type filesystemDriver struct{ cfg filesystem.Config }

// decodeFilesystem reads a [[driver]] table of type "filesystem":
//
//	root = "./data"          # relative to the stack file
//	read_only = true
//	allow_delete = false
//	max_read_bytes = 1048576
func decodeFilesystem(t *Table, _ string) DriverConfig {
	d := &filesystemDriver{}
	d.cfg.Root = t.Path("root")
	if !t.Has("root") {
		t.Errorf("", "has no root; add root = \"./data\" (the directory the tools may use)")
	}
	d.cfg.ReadOnly = t.Bool("read_only")
	d.cfg.AllowDelete = t.Bool("allow_delete")
	d.cfg.MaxReadBytes = t.Int("max_read_bytes", filesystem.MinReadBytes, 1<<30)
	return d
}

func (d *filesystemDriver) ToolDriver(context.Context, *Builder) (mcs.ToolDriver, error) {
	return filesystem.NewToolDriver(d.cfg)
}

func (d *filesystemDriver) Driver(_ context.Context, _ *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	return filesystem.New(d.cfg, opts...)
}
