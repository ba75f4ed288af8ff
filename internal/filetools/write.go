package filetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"

	"github.com/mcs-go/mcs/internal/confine"
)

// writeAtomic replaces the file at the resolved path rel with data: it writes a
// temporary file in the same directory, syncs it and renames it over rel, so that
// readers see the old content or the new one, never a part. Missing parent
// directories are created. An existing file keeps its permissions; a new one gets
// 0644 less the umask, as with os.WriteFile. created reports that no file was
// there before.
func (d *Driver) writeAtomic(ctx context.Context, rel string, data []byte) (created bool, err error) {
	perm := fs.FileMode(0o644)
	keepPerm := false
	switch fi, err := d.tree.Lstat(rel); {
	case err == nil && fi.IsDir():
		return false, fmt.Errorf("%q is a directory; write to a file path inside it", rel)
	case err == nil && !fi.Mode().IsRegular():
		return false, fmt.Errorf("%q is not a regular file and cannot be written", rel)
	case err == nil:
		perm, keepPerm = fi.Mode().Perm(), true
	case confine.IsNotExist(err):
		created = true
	case confine.IsNotDir(err):
		// a parent is a file; mkdirAll below says so
	default:
		return false, err
	}
	dir := path.Dir(rel)
	if err := d.mkdirAll(dir); err != nil {
		return false, err
	}
	tmp, f, err := d.createTemp(dir, perm)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			d.tree.Remove(tmp)
		}
	}()
	_, werr := f.Write(data)
	if werr == nil && keepPerm {
		werr = f.Chmod(perm) // exactly the old permissions, whatever the umask
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("write %q: %w", rel, d.tree.HidePath(werr))
	}
	if err := ctx.Err(); err != nil {
		return false, context.Cause(ctx)
	}
	if err := d.tree.Rename(tmp, rel); err != nil {
		return false, fmt.Errorf("write %q: %w", rel, confine.Classify(err, rel))
	}
	return created, nil
}

// createTemp creates a new, empty temporary file in the directory dir, with the
// permissions perm less the umask.
func (d *Driver) createTemp(dir string, perm fs.FileMode) (string, WritableFile, error) {
	for range 10 {
		name := path.Join(dir, fmt.Sprintf(".mcs-write-%016x.tmp", rand.Uint64()))
		f, err := d.tree.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil {
			return name, f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", nil, fmt.Errorf("create a temporary file in %q: %w", dir, confine.Classify(err, dir))
		}
	}
	return "", nil, fmt.Errorf("create a temporary file in %q: too many name collisions", dir)
}
