package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/pkg/sftp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/filetools"
)

// DefaultMaxReadBytes is the number of bytes read_file returns per call when
// SFTPConfig.MaxReadBytes is zero.
const DefaultMaxReadBytes = filetools.DefaultMaxReadBytes

// SFTPConfig configures the sftp driver: the files under one directory of a
// remote host. It is plain data.
type SFTPConfig struct {
	Conn
	// Root is the absolute path, on the host, of the directory the tools may
	// access. Required.
	Root string
	// ReadOnly publishes only the reading tools (list_directory, read_file,
	// search_files, file_info).
	ReadOnly bool
	// MaxReadBytes is the most read_file returns per call; zero means
	// DefaultMaxReadBytes.
	MaxReadBytes int64
	// AllowDelete publishes delete_file (unless ReadOnly).
	AllowDelete bool
}

// SFTPToolDriver is the technical half of the sftp driver: the tools of the
// filesystem driver (drivers/filesystem), with the same names, arguments,
// results and confinement, over SFTP under SFTPConfig.Root. It is safe for
// concurrent use; it connects on first use, and again after the connection
// breaks.
//
// Every model-supplied path is checked as by the filesystem driver: ".."
// above the root, absolute paths outside it and symbolic links that lead out
// of it (followed one by one on the host) are refused with a
// *confine.Error, before anything is read or written. Unlike a local
// directory, SFTP cannot pin the directory while a call works: a link
// swapped in by someone else on the host during a call is not caught.
type SFTPToolDriver struct {
	*fileTools
	tree *sftpTree
}

type fileTools = filetools.Driver

var (
	_ mcs.ToolDriver  = (*SFTPToolDriver)(nil)
	_ mcs.ToolLookup  = (*SFTPToolDriver)(nil)
	_ mcs.ToolDefiner = (*SFTPToolDriver)(nil)
)

// NewSFTPToolDriver checks cfg and returns the driver; it does not connect. It
// fails as NewToolDriver does, and when Root is not an absolute path or
// MaxReadBytes is neither 0 nor at least 8.
func NewSFTPToolDriver(cfg SFTPConfig) (*SFTPToolDriver, error) {
	if err := filetools.CheckMaxReadBytes("sftp", cfg.MaxReadBytes); err != nil {
		return nil, err
	}
	if !path.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("sftp: Root %q is not an absolute path; set it to the directory on the host, such as \"/srv/data\"", cfg.Root)
	}
	cl, err := newClient(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("sftp: %w", err)
	}
	t := &sftpTree{base: path.Clean(cfg.Root), client: cl}
	t.Root = confine.OnFS(t.base, linkFS{t})
	ft := filetools.New(t, filetools.Config{ReadOnly: cfg.ReadOnly, MaxReadBytes: cfg.MaxReadBytes, AllowDelete: cfg.AllowDelete}, mcs.Meta{
		ID:       "mcs-go/sftp",
		Name:     "SFTP",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "filesystem", Adapter: "sftp", SpecFormat: "builtin"}},
	})
	return &SFTPToolDriver{fileTools: ft, tree: t}, nil
}

// ExecuteTool runs the named tool, as the filesystem driver's ExecuteTool
// does; a host that cannot be reached fails the call.
func (d *SFTPToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if _, err := d.tree.sftp(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return d.fileTools.ExecuteTool(ctx, name, args)
}

// Close closes the connection. Calls after Close fail.
func (d *SFTPToolDriver) Close() error { return d.tree.Close() }

// SFTPDriver is the complete sftp driver: the [SFTPToolDriver] with the
// LLM-facing half of [mcs.BaseDriver]. It is safe for concurrent use.
type SFTPDriver struct {
	*mcs.BaseDriver
	tools *SFTPToolDriver
}

var _ mcs.Driver = (*SFTPDriver)(nil)

// NewSFTP returns an SFTPDriver over a new SFTPToolDriver for cfg, configured
// by opts. It fails as NewSFTPToolDriver does.
func NewSFTP(cfg SFTPConfig, opts ...mcs.Option) (*SFTPDriver, error) {
	td, err := NewSFTPToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &SFTPDriver{BaseDriver: mcs.NewBaseDriver(td, opts...), tools: td}, nil
}

// Close closes the connection.
func (d *SFTPDriver) Close() error { return d.tools.Close() }

// sftpTree is the filetools.Tree of a directory on the host. Errors name
// root-relative paths only.
type sftpTree struct {
	*confine.Root
	base   string
	client *client

	mu   sync.Mutex
	c    *sftp.Client
	done bool
}

// sftp returns the SFTP client, connecting when there is none (or the
// connection broke), and checks on a new connection that the root is a
// directory.
func (t *sftpTree) sftp(ctx context.Context) (*sftp.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil, errors.New("the driver is closed")
	}
	if t.c != nil {
		return t.c, nil
	}
	sc, err := t.client.get(ctx)
	if err != nil {
		return nil, err
	}
	c, err := sftp.NewClient(sc, sftp.UseConcurrentReads(true))
	if err != nil {
		t.client.drop(sc)
		if sc, err = t.client.get(ctx); err != nil {
			return nil, err
		}
		if c, err = sftp.NewClient(sc, sftp.UseConcurrentReads(true)); err != nil {
			t.client.drop(sc)
			return nil, fmt.Errorf("start SFTP on %s: %w", t.client.addr, err)
		}
	}
	fi, err := c.Stat(t.base)
	switch {
	case err != nil:
		c.Close()
		return nil, fmt.Errorf("the root directory %q on %s: %w", t.base, t.client.addr, err)
	case !fi.IsDir():
		c.Close()
		return nil, fmt.Errorf("the root directory %q on %s is not a directory", t.base, t.client.addr)
	}
	t.c = c
	go func() {
		c.Wait()
		t.mu.Lock()
		if t.c == c {
			t.c = nil
		}
		t.mu.Unlock()
	}()
	return c, nil
}

// conn returns the client for a tree operation, connecting within the dial
// timeout when needed.
func (t *sftpTree) conn() (*sftp.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), t.client.cfg.Timeout)
	defer cancel()
	return t.sftp(ctx)
}

// full is the path on the host of the root-relative rel.
func (t *sftpTree) full(rel string) string { return path.Join(t.base, rel) }

// pathErr wraps an SFTP error in a *fs.PathError on the root-relative rel.
func pathErr(op, rel string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: rel, Err: err}
}

// linkFS is what the confine.Root of the tree reads.
type linkFS struct{ t *sftpTree }

func (l linkFS) Lstat(name string) (fs.FileInfo, error) {
	c, err := l.t.conn()
	if err != nil {
		return nil, err
	}
	fi, err := c.Lstat(l.t.full(name))
	return fi, pathErr("lstat", name, err)
}

func (l linkFS) Stat(name string) (fs.FileInfo, error) {
	c, err := l.t.conn()
	if err != nil {
		return nil, err
	}
	fi, err := c.Stat(l.t.full(name))
	return fi, pathErr("stat", name, err)
}

func (l linkFS) Readlink(name string) (string, error) {
	c, err := l.t.conn()
	if err != nil {
		return "", err
	}
	target, err := c.ReadLink(l.t.full(name))
	return target, pathErr("readlink", name, err)
}

func (t *sftpTree) OpenRegular(rel string) (filetools.ReadableFile, fs.FileInfo, error) {
	c, err := t.conn()
	if err != nil {
		return nil, nil, err
	}
	fi, err := t.Stat(rel)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRegular(fi, rel); err != nil {
		return nil, nil, err
	}
	f, err := c.Open(t.full(rel))
	if err != nil {
		return nil, nil, pathErr("open", rel, err)
	}
	if fi, err = f.Stat(); err == nil {
		err = checkRegular(fi, rel)
	}
	if err != nil {
		f.Close()
		return nil, nil, pathErr("open", rel, err)
	}
	return f, fi, nil
}

func checkRegular(fi fs.FileInfo, rel string) error {
	switch {
	case fi.IsDir():
		return &fs.PathError{Op: "open", Path: rel, Err: confine.ErrIsDirectory}
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "open", Path: rel, Err: confine.ErrNotRegular}
	}
	return nil
}

func (t *sftpTree) OpenDir(rel string) (filetools.Directory, error) {
	entries, err := t.readDir(rel)
	if err != nil {
		return nil, err
	}
	return &dirList{entries: entries}, nil
}

// readDir reads the entries of the directory rel, sorted by name, without
// following links.
func (t *sftpTree) readDir(rel string) ([]fs.DirEntry, error) {
	c, err := t.conn()
	if err != nil {
		return nil, err
	}
	fi, err := t.Stat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: confine.ErrNotDirectory}
	}
	infos, err := c.ReadDir(t.full(rel))
	if err != nil {
		return nil, pathErr("readdir", rel, err)
	}
	out := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		out[i] = fs.FileInfoToDirEntry(fi)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// dirList hands out the entries of a directory read at once.
type dirList struct{ entries []fs.DirEntry }

func (d *dirList) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.entries))
	out := d.entries[:k:k]
	d.entries = d.entries[k:]
	return out, nil
}

func (d *dirList) Close() error { return nil }

// FS returns the tree as an fs.FS for fs.WalkDir: ReadDir lists without
// following links, Stat follows them.
func (t *sftpTree) FS() fs.FS { return walkFS{t} }

type walkFS struct{ t *sftpTree }

func (w walkFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: errors.ErrUnsupported}
}

func (w walkFS) Stat(name string) (fs.FileInfo, error) { return w.t.Stat(name) }

func (w walkFS) ReadDir(name string) ([]fs.DirEntry, error) { return w.t.readDir(name) }

func (t *sftpTree) MkdirAll(rel string, _ fs.FileMode) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	return pathErr("mkdir", rel, c.MkdirAll(t.full(rel)))
}

func (t *sftpTree) OpenFile(rel string, flag int, perm fs.FileMode) (filetools.WritableFile, error) {
	c, err := t.conn()
	if err != nil {
		return nil, err
	}
	f, err := c.OpenFile(t.full(rel), flag)
	if err != nil {
		var se *sftp.StatusError
		if flag&os.O_EXCL != 0 && errors.As(err, &se) {
			if _, serr := c.Lstat(t.full(rel)); serr == nil {
				err = fs.ErrExist
			}
		}
		return nil, pathErr("open", rel, err)
	}
	if flag&os.O_CREATE != 0 {
		if err := f.Chmod(perm); err != nil {
			f.Close()
			return nil, pathErr("chmod", rel, err)
		}
	}
	return sftpFile{f, rel}, nil
}

// sftpFile is a remote file open for writing.
type sftpFile struct {
	*sftp.File
	rel string
}

func (f sftpFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, pathErr("write", f.rel, err)
}

func (f sftpFile) Chmod(mode fs.FileMode) error { return pathErr("chmod", f.rel, f.File.Chmod(mode)) }

// Sync asks the server to write the file to its disk, when it can
// (fsync@openssh.com); a server that cannot is not an error.
func (f sftpFile) Sync() error {
	err := f.File.Sync()
	var se *sftp.StatusError
	if errors.As(err, &se) && se.FxCode() == sftp.ErrSSHFxOpUnsupported {
		return nil
	}
	return pathErr("sync", f.rel, err)
}

func (f sftpFile) Close() error { return pathErr("close", f.rel, f.File.Close()) }

// Rename replaces to when it exists (posix-rename@openssh.com), as a local
// rename does; without that extension the server refuses an existing to.
func (t *sftpTree) Rename(from, to string) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	if _, ok := c.HasExtension("posix-rename@openssh.com"); ok {
		err = c.PosixRename(t.full(from), t.full(to))
	} else {
		err = c.Rename(t.full(from), t.full(to))
	}
	return pathErr("rename", from, err)
}

func (t *sftpTree) Remove(rel string) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	fi, err := c.Lstat(t.full(rel))
	if err != nil {
		return pathErr("remove", rel, err)
	}
	if fi.IsDir() {
		err = c.RemoveDirectory(t.full(rel))
		if err != nil {
			if entries, rerr := c.ReadDir(t.full(rel)); rerr == nil && len(entries) > 0 {
				err = fs.ErrExist // as a local remove of a full directory reports it
			}
		}
	} else {
		err = c.Remove(t.full(rel))
	}
	return pathErr("remove", rel, err)
}

// Close closes the SFTP client and the connection.
func (t *sftpTree) Close() error {
	t.mu.Lock()
	t.done = true
	c := t.c
	t.c = nil
	t.mu.Unlock()
	var err error
	if c != nil {
		err = c.Close()
	}
	return errors.Join(err, t.client.close())
}

var _ filetools.Tree = (*sftpTree)(nil)
