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
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/tools"
)

const version = "0.1.0"

// DefaultMaxReadBytes is the number of bytes read_file returns per call when
// Config.MaxReadBytes is zero.
const DefaultMaxReadBytes = 1 << 20

// MinReadBytes is the smallest Config.MaxReadBytes: enough for any character
// however a read is cut, so that reading a text file in chunks always progresses.
const MinReadBytes = 2 * utf8.UTFMax

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
	*toolTable // the published tools
	root       *confine.Root
	cfg        Config
	limits     limits
}

// toolTable is the driver's name for [tools.Table], so that ToolDriver embeds it
// as an unexported field and takes its listing methods.
type toolTable = tools.Table

// limits bounds the listing tools and the link check of move_file; tests lower
// them.
type limits struct {
	listEntries, searchResults, searchVisits, moveEntries int
}

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
	if cfg.MaxReadBytes != 0 && cfg.MaxReadBytes < MinReadBytes {
		return nil, fmt.Errorf("filesystem: MaxReadBytes is %d; set at least %d, or 0 for the default of %d", cfg.MaxReadBytes, MinReadBytes, DefaultMaxReadBytes)
	}
	if cfg.MaxReadBytes == 0 {
		cfg.MaxReadBytes = DefaultMaxReadBytes
	}
	root, err := confine.Open(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	d := &ToolDriver{root: root, cfg: cfg, limits: limits{maxListEntries, maxSearchResults, maxSearchVisits, maxMoveEntries}}
	d.toolTable = tools.New(mcs.Meta{
		ID:       "mcs-go/filesystem",
		Name:     "Filesystem",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "filesystem", Adapter: "os", SpecFormat: "builtin"}},
	})
	for _, def := range toolDefs(cfg.MaxReadBytes) {
		if d.unavailable(def) == "" {
			def.add(d.toolTable, d, def)
		}
	}
	return d, nil
}

// ExecuteTool runs the named tool with the model-supplied args and returns a JSON
// object (map[string]any). "Not found" and "not a directory" are results. The call
// fails for an unknown or disabled tool, invalid arguments, a path refused by the
// confinement (the error wraps a *confine.Error) and file system errors; errors
// begin with the tool name. A done ctx fails the call before it starts;
// list_directory, search_files and the link check of move_file also stop when ctx
// is done, and write_file and move_file then leave the tree as it was.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if has, _ := d.toolTable.HasTool(ctx, name); !has {
		for _, def := range toolDefs(d.cfg.MaxReadBytes) {
			if def.name == name {
				return nil, fmt.Errorf("%s: %s", name, d.unavailable(def))
			}
		}
	}
	res, err := d.toolTable.ExecuteTool(ctx, name, args)
	var argErr *mcs.ArgumentsError
	if err != nil && !errors.Is(err, mcs.ErrUnknownTool) && !errors.As(err, &argErr) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, err
}

// unavailable says why def is not published, or "" when it is.
func (d *ToolDriver) unavailable(def *toolDef) string {
	switch {
	case def.writes && d.cfg.ReadOnly:
		return "not available: the file system is read-only; only " + strings.Join(d.names(), ", ") + " can be used"
	case def.name == "delete_file" && !d.cfg.AllowDelete:
		return "not available: deleting files is not enabled for this file system"
	}
	return ""
}

// names lists the published tools in order.
func (d *ToolDriver) names() []string {
	list, _ := d.toolTable.ListTools(context.Background())
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.Name
	}
	return out
}

// Close releases the root directory. Calls after Close fail.
func (d *ToolDriver) Close() error { return d.root.Close() }

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

// outcome is how a tool ends on err, met on path (see [confine.Outcome]).
func outcome(path string, err error) (any, error) {
	return confine.Outcome(path, err, "call list_directory on the parent directory to see what exists")
}
