// Package filetools is the tool table of the file drivers: list_directory,
// read_file, search_files, file_info, write_file, make_directory, move_file and
// delete_file over a [Tree], a confined directory that may be local
// (drivers/filesystem, [Local]) or remote (the SFTP driver of drivers/ssh).
// Both publish the same tools with the same descriptions, results, errors and
// confinement, and pass the same confinement tests (package filetoolstest).
package filetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/tools"
)

// DefaultMaxReadBytes is the number of bytes read_file returns per call when
// Config.MaxReadBytes is zero.
const DefaultMaxReadBytes = 1 << 20

// MinReadBytes is the smallest Config.MaxReadBytes: enough for any character
// however a read is cut, so that reading a text file in chunks always progresses.
const MinReadBytes = 2 * utf8.UTFMax

// Tree is a directory the tools are confined to. Paths given to its methods
// are root-relative and slash-separated, as returned by Resolve and
// ResolveNoFollow; the methods' errors pass through [confine.Classify] and
// [Tree.HidePath] where they could show an absolute path.
type Tree interface {
	// Clean, Resolve, ResolveNoFollow, CheckMovedLink, HidePath, Lstat and
	// Stat are those of [confine.Root].
	Clean(p string) (string, error)
	Resolve(p string) (string, error)
	ResolveNoFollow(p string) (string, error)
	CheckMovedLink(p, link, at string) error
	HidePath(err error) error
	Lstat(rel string) (fs.FileInfo, error)
	Stat(rel string) (fs.FileInfo, error)
	// OpenRegular and OpenDir are those of [confine.Root]: they open only a
	// regular file, only a directory.
	OpenRegular(rel string) (ReadableFile, fs.FileInfo, error)
	OpenDir(rel string) (Directory, error)
	// FS is the tree as an fs.FS for fs.WalkDir, which must not follow links.
	FS() fs.FS
	MkdirAll(rel string, perm fs.FileMode) error
	// OpenFile opens a file for writing with os.OpenFile's flags.
	OpenFile(rel string, flag int, perm fs.FileMode) (WritableFile, error)
	Rename(from, to string) error
	Remove(rel string) error
	Close() error
}

// ReadableFile is a file open for reading.
type ReadableFile interface {
	io.ReaderAt
	io.Closer
}

// Directory is a directory open for reading its entries.
type Directory interface {
	ReadDir(n int) ([]fs.DirEntry, error)
	Close() error
}

// WritableFile is a file open for writing.
type WritableFile interface {
	io.Writer
	Chmod(mode fs.FileMode) error
	Sync() error
	Close() error
}

// Local is the Tree of a local directory, through its confine.Root.
func Local(r *confine.Root) Tree { return localTree{r} }

type localTree struct{ *confine.Root }

func (t localTree) OpenRegular(rel string) (ReadableFile, fs.FileInfo, error) {
	f, fi, err := t.Root.OpenRegular(rel)
	if err != nil {
		return nil, nil, err
	}
	return f, fi, nil
}

func (t localTree) OpenDir(rel string) (Directory, error) {
	f, err := t.Root.OpenDir(rel)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (t localTree) MkdirAll(rel string, perm fs.FileMode) error {
	return confine.Classify(t.OS().MkdirAll(filepath.FromSlash(rel), perm), rel)
}

func (t localTree) OpenFile(rel string, flag int, perm fs.FileMode) (WritableFile, error) {
	f, err := t.OS().OpenFile(filepath.FromSlash(rel), flag, perm)
	if err != nil {
		return nil, err // the caller classifies
	}
	return f, nil
}

func (t localTree) Rename(from, to string) error {
	return t.OS().Rename(filepath.FromSlash(from), filepath.FromSlash(to))
}

func (t localTree) Remove(rel string) error { return t.OS().Remove(filepath.FromSlash(rel)) }

// Config configures the tools. It is plain data.
type Config struct {
	// ReadOnly publishes only the reading tools.
	ReadOnly bool
	// MaxReadBytes is the most read_file returns per call; zero means
	// DefaultMaxReadBytes.
	MaxReadBytes int64
	// AllowDelete publishes delete_file (unless ReadOnly).
	AllowDelete bool
}

// Limits bound the listing tools and the link check of move_file; tests lower
// them.
type Limits struct {
	ListEntries, SearchResults, SearchVisits, MoveEntries int
}

// Driver is the tool table over one tree. It is safe for concurrent use. Its
// fields are unexported, so that a driver embedding it exports only methods.
type Driver struct {
	*table
	tree   Tree
	cfg    Config
	limits Limits
}

// table is the name of the embedded tools.Table, unexported.
type table = tools.Table

// SetLimits lowers the limits of d, so that tests need few files. Call it
// before the first call.
func SetLimits(d *Driver, l Limits) { d.limits = l }

// GetLimits returns the limits of d.
func GetLimits(d *Driver) Limits { return d.limits }

// New returns the tools over tree, published in order under meta. cfg must be
// checked: MaxReadBytes 0 or at least MinReadBytes.
func New(tree Tree, cfg Config, meta mcs.Meta) *Driver {
	if cfg.MaxReadBytes == 0 {
		cfg.MaxReadBytes = DefaultMaxReadBytes
	}
	d := &Driver{tree: tree, cfg: cfg, limits: Limits{maxListEntries, maxSearchResults, maxSearchVisits, maxMoveEntries}}
	d.table = tools.New(meta)
	for _, def := range toolDefs(cfg.MaxReadBytes) {
		if d.unavailable(def) == "" {
			def.add(d.table, d, def)
		}
	}
	return d
}

// CheckMaxReadBytes checks a configured MaxReadBytes; prefix names the driver.
func CheckMaxReadBytes(prefix string, n int64) error {
	if n != 0 && n < MinReadBytes {
		return fmt.Errorf("%s: MaxReadBytes is %d; set at least %d, or 0 for the default of %d", prefix, n, MinReadBytes, DefaultMaxReadBytes)
	}
	return nil
}

// ExecuteTool runs the named tool (see the drivers' documentation).
func (d *Driver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if has, _ := d.table.HasTool(ctx, name); !has {
		for _, def := range toolDefs(d.cfg.MaxReadBytes) {
			if def.name == name {
				return nil, fmt.Errorf("%s: %s", name, d.unavailable(def))
			}
		}
	}
	res, err := d.table.ExecuteTool(ctx, name, args)
	var argErr *mcs.ArgumentsError
	if err != nil && !errors.Is(err, mcs.ErrUnknownTool) && !errors.As(err, &argErr) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, err
}

// unavailable says why def is not published, or "" when it is.
func (d *Driver) unavailable(def *toolDef) string {
	switch {
	case def.writes && d.cfg.ReadOnly:
		return "not available: the file system is read-only; only " + strings.Join(d.names(), ", ") + " can be used"
	case def.name == "delete_file" && !d.cfg.AllowDelete:
		return "not available: deleting files is not enabled for this file system"
	}
	return ""
}

// names lists the published tools in order.
func (d *Driver) names() []string {
	list, _ := d.table.ListTools(context.Background())
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.Name
	}
	return out
}

// Close closes the tree. Calls after Close fail.
func (d *Driver) Close() error { return d.tree.Close() }

// outcome is how a tool ends on err, met on path (see [confine.Outcome]).
func outcome(path string, err error) (any, error) {
	return confine.Outcome(path, err, "call list_directory on the parent directory to see what exists")
}
