// Package filesystem is an MCS driver for the files under one root directory.
//
// The model can list directories, read files (text, or base64 for binary files),
// search by glob pattern and inspect entries; unless the driver is read-only it can
// also write files (atomically), create directories, move entries and, when
// [Config.AllowDelete] is set, delete them.
//
// Every access goes through an [os.Root] opened on [Config.Root]. A path that would
// leave the root is refused and the call fails, with an error that says why: ".."
// above the root, an absolute path outside it (including a sibling such as
// /data-evil for the root /data), a symbolic link that leads outside (even one
// created, or a directory swapped for one, after the driver was built), a NUL byte
// or another control character, a backslash, a path longer than 4096 bytes.
// Results report paths relative to the root, never absolute host paths.
//
// move_file also keeps symbolic links from leading out: a relative link target is
// followed from where the link lies, so moving a link to another depth changes
// where it leads. A move is refused, and nothing is moved, when a symbolic link
// it would carry (the source itself, or one at any depth below a source
// directory) would lead outside the root from its new place; relative targets are
// judged lexically from there, absolute ones must lie inside the root. A source
// directory with more than 100,000 entries at all levels is refused unchecked.
//
// A missing path ("not found") and a file where a directory was expected ("not a
// directory") are results the model can read, not failed calls:
//
//	{"path": "notes.txt", "error": "not found", "hint": "..."}
package filesystem

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/filetools"
)

const version = "0.1.0"

// DefaultMaxReadBytes is the number of bytes read_file returns per call when
// Config.MaxReadBytes is zero.
const DefaultMaxReadBytes = filetools.DefaultMaxReadBytes

// MinReadBytes is the smallest Config.MaxReadBytes: enough for any character
// however a read is cut, so that reading a text file in chunks always progresses.
const MinReadBytes = filetools.MinReadBytes

// Config configures a filesystem driver. It is plain data.
type Config struct {
	// Root is the directory the tools may access; it must exist. Required.
	Root string
	// ReadOnly publishes only the reading tools (list_directory, read_file,
	// search_files, file_info) and refuses the others.
	ReadOnly bool
	// MaxReadBytes is the most read_file returns per call; a longer file is cut and
	// the result gives the offset to continue from. Zero means DefaultMaxReadBytes;
	// other values below MinReadBytes are an error.
	MaxReadBytes int64
	// AllowDelete publishes delete_file (unless ReadOnly).
	AllowDelete bool
}

// ToolDriver is the technical half of the filesystem driver: it lists and executes
// the file tools over one confined root. It is safe for concurrent use. It holds
// the root directory open until Close.
//
// It publishes, in this order, list_directory, read_file, search_files, file_info,
// then, unless read-only, write_file, make_directory, move_file and, with
// AllowDelete, delete_file. Its Meta, ListTools, HasTool, ToolDefinition and
// ToolsVersion are those of the [tools.Table] that holds them: the Meta has ID
// "mcs-go/filesystem", binding {filesystem, os, builtin} and capability
// orchestratable; a listing is a copy and never fails; the version does not change
// after NewToolDriver.
type ToolDriver struct {
	*fileTools // the published tools
}

// fileTools is the driver's name for the shared tool table, so that ToolDriver
// embeds it as an unexported field and takes its methods.
type fileTools = filetools.Driver

var (
	_ mcs.ToolDriver                     = (*ToolDriver)(nil)
	_ mcs.ToolLookup                     = (*ToolDriver)(nil)
	_ mcs.ToolDefiner                    = (*ToolDriver)(nil)
	_ interface{ ToolsVersion() uint64 } = (*ToolDriver)(nil)
)

// NewToolDriver opens cfg.Root and returns the tool driver. It fails when Root is
// not set or is not an existing directory, or when MaxReadBytes is neither 0 nor
// at least MinReadBytes.
func NewToolDriver(cfg Config) (*ToolDriver, error) {
	if err := filetools.CheckMaxReadBytes("filesystem", cfg.MaxReadBytes); err != nil {
		return nil, err
	}
	root, err := confine.Open(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	ft := filetools.New(filetools.Local(root), filetools.Config{ReadOnly: cfg.ReadOnly, MaxReadBytes: cfg.MaxReadBytes, AllowDelete: cfg.AllowDelete}, mcs.Meta{
		ID:       "mcs-go/filesystem",
		Name:     "Filesystem",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "filesystem", Adapter: "os", SpecFormat: "builtin"}},
	})
	return &ToolDriver{fileTools: ft}, nil
}

// ExecuteTool runs the named tool with the model-supplied args and returns a JSON
// object (map[string]any). "Not found" and "not a directory" are results. The call
// fails for an unknown or disabled tool, invalid arguments, a path refused by the
// confinement (the error wraps a *confine.Error) and file system errors; errors
// begin with the tool name. A done ctx fails the call before it starts;
// list_directory, search_files and the link check of move_file also stop when ctx
// is done, and write_file and move_file then leave the tree as it was.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	return d.fileTools.ExecuteTool(ctx, name, args)
}

// Close releases the root directory. Calls after Close fail.
func (d *ToolDriver) Close() error { return d.fileTools.Close() }

// Driver is the complete filesystem driver: the [ToolDriver] with the LLM-facing
// half of [mcs.BaseDriver] (prompts, response processing, middleware). It is safe
// for concurrent use.
type Driver struct {
	*mcs.BaseDriver
	tools *ToolDriver
}

var _ mcs.Driver = (*Driver)(nil)

// New returns a Driver over a new ToolDriver for cfg, configured by opts. It fails
// as NewToolDriver does.
func New(cfg Config, opts ...mcs.Option) (*Driver, error) {
	td, err := NewToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{BaseDriver: mcs.NewBaseDriver(td, opts...), tools: td}, nil
}

// Close releases the root directory. Calls after Close fail.
func (d *Driver) Close() error { return d.tools.Close() }
