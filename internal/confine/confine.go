// Package confine keeps model-supplied paths inside one root directory.
//
// Every access goes through an [os.Root], which refuses to leave the directory it
// was opened on, even through symbolic links and even when the tree changes
// between calls. On top of it, [Root.Clean] refuses malformed and escaping paths
// before anything touches the file system (NUL bytes, control characters, paths
// longer than [MaxPathLen], backslashes, ".." above the root, absolute paths outside
// it, sibling-prefix paths such as /data-evil for the root /data), and
// [Root.Resolve] follows symbolic links inside the root so that a link leading out
// is reported as such, with a clear *[Error], instead of a bare "permission" error.
// [Root.CheckMovedLink] tells whether a symbolic link that is about to be moved
// would still lead inside the root from its new place, since a relative link
// target changes meaning with the depth of the link.
//
// Paths handed to and returned by this package are slash-separated and relative to
// the root ("." is the root itself), so a result never shows an absolute host path.
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// MaxPathLen is the longest path, in bytes, that [Root.Clean] accepts.
const MaxPathLen = 4096

// maxLinks is the number of symbolic links a resolution may pass through, as on
// Linux.
const maxLinks = 40

// Root is a directory that model-supplied paths are confined to. It is safe for
// concurrent use; it holds an open directory handle until Close.
type Root struct {
	root  *os.Root // nil for a Root over another file system (OnFS)
	fsys  LinkFS
	bases []string // absolute paths of the root (as given, and with links evaluated)
}

// LinkFS is what a Root reads of the tree below it to resolve paths: the
// entries, and the content of symbolic links. Names are root-relative and
// slash-separated ("." is the root); errors for a missing entry match
// fs.ErrNotExist.
type LinkFS interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// osLinkFS is the LinkFS of an *os.Root.
type osLinkFS struct{ r *os.Root }

func (o osLinkFS) Lstat(name string) (fs.FileInfo, error) { return o.r.Lstat(filepath.FromSlash(name)) }
func (o osLinkFS) Stat(name string) (fs.FileInfo, error)  { return o.r.Stat(filepath.FromSlash(name)) }
func (o osLinkFS) Readlink(name string) (string, error) {
	return o.r.Readlink(filepath.FromSlash(name))
}

// OnFS returns a Root over a tree that is not a local directory, such as one
// on a remote host: base is its absolute slash path there, and fsys reads it.
// Clean, Resolve, ResolveNoFollow, CheckMovedLink, Lstat, Stat and HidePath
// work as for a local Root, with the same errors; OS, FS, OpenRegular and
// OpenDir are not available (OS and FS return nil, the others fail). Unlike a
// local Root, nothing keeps the tree from changing between a check and the
// operation that follows it: the guarantee is that of the checks.
func OnFS(base string, fsys LinkFS) *Root {
	return &Root{fsys: fsys, bases: []string{path.Clean(base)}}
}

// Open opens dir as a Root. dir must name an existing directory; a relative dir is
// taken relative to the working directory. The error says what is wrong with dir.
func Open(dir string) (*Root, error) {
	if dir == "" {
		return nil, errors.New("root directory is not set; set Root to the directory the tools may access")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("root directory %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("root directory %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("root directory %q is not a directory", dir)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("open root directory %q: %w", dir, err)
	}
	bases := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		bases = append(bases, real)
	}
	return &Root{root: r, fsys: osLinkFS{r}, bases: bases}, nil
}

// OS returns the underlying *os.Root, nil for a Root made by OnFS. Give it only
// paths returned by Resolve or ResolveNoFollow (converted with
// filepath.FromSlash), and pass its errors through [Classify].
func (r *Root) OS() *os.Root { return r.root }

// FS returns a file system rooted at the root, nil for a Root made by OnFS;
// fs.WalkDir over it never follows symbolic links found in directories.
func (r *Root) FS() fs.FS {
	if r.root == nil {
		return nil
	}
	return r.root.FS()
}

// Close releases the directory handle. Calls after Close fail.
func (r *Root) Close() error {
	if r.root == nil {
		return nil
	}
	return r.root.Close()
}

// errNotLocal is the error of the methods that need a local root.
var errNotLocal = errors.New("not a local directory")

// Clean checks a model-supplied path and returns it cleaned, slash-separated and
// relative to the root ("." for the root itself). It does not touch the file system.
//
// Relative paths are relative to the root; an absolute path is accepted only when it
// lies inside the root (as configured, or with its symbolic links evaluated). The
// error is an *Error for an empty path, a NUL byte or another control character, a
// path longer than MaxPathLen, a backslash, ".." segments that lead above the root,
// and an absolute path or volume name outside the root.
func (r *Root) Clean(p string) (string, error) {
	if p == "" {
		return "", &Error{Path: p, Kind: KindEmpty}
	}
	if len(p) > MaxPathLen {
		return "", &Error{Path: p, Kind: KindTooLong}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == 0:
			return "", &Error{Path: p, Kind: KindNUL}
		case c < 0x20 || c == 0x7f:
			return "", &Error{Path: p, Kind: KindControl}
		case c == '\\':
			return "", &Error{Path: p, Kind: KindBackslash}
		}
	}
	if isAbs(p) {
		rel, ok := r.relative(p)
		if !ok {
			return "", &Error{Path: p, Kind: KindOutside}
		}
		return rel, nil
	}
	c := path.Clean(p)
	if escapes(c) {
		return "", &Error{Path: p, Kind: KindParent}
	}
	return c, nil
}

// isAbs reports whether the slash path p is absolute or has a volume name, on
// this system or as a Unix path.
func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || filepath.IsAbs(filepath.FromSlash(p)) || filepath.VolumeName(filepath.FromSlash(p)) != ""
}

// escapes reports whether a cleaned relative slash path leads above its base.
func escapes(clean string) bool {
	return clean == ".." || strings.HasPrefix(clean, "../")
}

// relative maps an absolute host path to a cleaned root-relative slash path; ok is
// false when it lies outside the root. The comparison is on whole path elements, so
// /data-evil is not inside /data.
func (r *Root) relative(abs string) (rel string, ok bool) {
	a := filepath.Clean(filepath.FromSlash(abs))
	if !filepath.IsAbs(a) {
		return "", false
	}
	for _, base := range r.bases {
		if a == base {
			return ".", true
		}
		prefix := base
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		if strings.HasPrefix(a, prefix) {
			return filepath.ToSlash(a[len(prefix):]), true
		}
	}
	return "", false
}

// Resolve cleans p (see Clean) and follows the symbolic links on it, the last
// element included, returning the root-relative path of the entry it designates,
// free of links. A path that does not exist (yet) is resolved as far as it exists
// and completed lexically, so that it can be created. The error is an *Error when
// p is refused by Clean, when a link leads outside the root (KindSymlink) or when
// more than 40 links are passed (KindLinkLoop); other errors come from the file
// system.
//
// Resolve is a check, not a guarantee: the tree may change before the path is used.
// Operations on the result go through [Root.OS], which refuses to leave the root
// whatever happens in between.
func (r *Root) Resolve(p string) (string, error) {
	return r.resolve(p, true)
}

// ResolveNoFollow is Resolve without following a symbolic link in the last element,
// for operations on a link itself (remove, rename). Such a link must still point
// inside the root: a link that leads outside (KindSymlink) or into a loop
// (KindLinkLoop) is refused, whatever the operation; a link whose target is
// missing is accepted.
func (r *Root) ResolveNoFollow(p string) (string, error) {
	return r.resolve(p, false)
}

func (r *Root) resolve(p string, followLast bool) (string, error) {
	c, err := r.Clean(p)
	if err != nil {
		return "", err
	}
	if c == "." {
		return c, nil
	}
	todo := strings.Split(c, "/")
	var done []string
	links := 0
	lastLink := ""
	for len(todo) > 0 {
		elem := todo[0]
		todo = todo[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", &Error{Path: p, Kind: KindSymlink, Link: lastLink}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := joinElems(done, elem)
		fi, err := r.fsys.Lstat(cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				if slices.Contains(todo, "..") {
					// A link target such as "missing/../x": the system would fail on
					// the missing element, and so do we.
					cause := error(fs.ErrNotExist)
					if errors.Is(err, syscall.ENOTDIR) {
						cause = syscall.ENOTDIR
					}
					return "", &fs.PathError{Op: "resolve", Path: cur, Err: cause}
				}
				// Nothing below a missing entry can be a link: finish lexically, so
				// that the path can be created.
				return path.Join(append([]string{cur}, todo...)...), nil
			}
			return "", Classify(err, p)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, elem)
			continue
		}
		last := len(todo) == 0
		if last && !followLast {
			// Operate on the link itself, but only on a link that stays inside.
			if _, err := r.resolve(cur, true); err != nil {
				var ce *Error
				if errors.As(err, &ce) {
					return "", &Error{Path: p, Kind: ce.Kind, Link: ce.Link, Err: ce.Err}
				}
				return "", err
			}
			return cur, nil
		}
		links++
		if links > maxLinks {
			return "", &Error{Path: p, Kind: KindLinkLoop, Link: cur}
		}
		target, err := r.fsys.Readlink(cur)
		if err != nil {
			return "", Classify(err, p)
		}
		lastLink = cur
		target = filepath.ToSlash(target)
		if isAbs(target) {
			rel, ok := r.relative(target)
			if !ok {
				return "", &Error{Path: p, Kind: KindSymlink, Link: cur}
			}
			done = done[:0]
			target = rel
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// CheckMovedLink checks the symbolic link at the resolved root-relative path link,
// which a move of the model-supplied path p (the link itself, or a directory
// holding it) would place at the resolved root-relative path at. It returns nil
// when the link would still lead inside the root from there. The file system is
// only read (the link's content), never changed.
//
// The target is judged lexically. An absolute target must lie inside the root
// (as configured, or with its symbolic links evaluated), wherever the link lies;
// otherwise the error is an *Error of KindSymlink. A relative target is followed
// from the directory of at, its ".." segments taken as the removal of the
// preceding element; when it leads above the root the error is an *Error of
// KindMovedLink. Entries the target names need not exist, and links the target
// passes through are not followed: each of them is checked where it lies. Errors
// reading the link come from the file system, with root-relative paths.
//
// CheckMovedLink is safe for concurrent use.
func (r *Root) CheckMovedLink(p, link, at string) error {
	target, err := r.fsys.Readlink(link)
	if err != nil {
		return Classify(r.HidePath(err), p)
	}
	target = filepath.ToSlash(target)
	if isAbs(target) {
		if _, ok := r.relative(target); !ok {
			return &Error{Path: p, Kind: KindSymlink, Link: link}
		}
		return nil
	}
	if escapes(path.Join(path.Dir(at), target)) {
		return &Error{Path: p, Kind: KindMovedLink, Link: link}
	}
	return nil
}

func joinElems(done []string, elem string) string {
	if len(done) == 0 {
		return elem
	}
	return strings.Join(done, "/") + "/" + elem
}

// Lstat returns the FileInfo of the resolved root-relative path rel without
// following a final symbolic link. Errors pass through [Classify].
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	fi, err := r.fsys.Lstat(rel)
	return fi, Classify(err, rel)
}

// Stat returns the FileInfo of the resolved root-relative path rel. Errors pass
// through [Classify].
func (r *Root) Stat(rel string) (fs.FileInfo, error) {
	fi, err := r.fsys.Stat(rel)
	return fi, Classify(err, rel)
}

// OpenRegular opens the resolved root-relative path rel for reading, only when it
// is a regular file. A directory gives a *fs.PathError wrapping ErrIsDirectory, a
// device, socket or named pipe one wrapping ErrNotRegular (such a file is never
// opened for long, and never read); a missing file an error for which
// errors.Is(err, fs.ErrNotExist) holds. The returned FileInfo is that of the open
// file.
func (r *Root) OpenRegular(rel string) (*os.File, fs.FileInfo, error) {
	if r.root == nil {
		return nil, nil, errNotLocal
	}
	name := filepath.FromSlash(rel)
	fi, err := r.root.Stat(name)
	if err != nil {
		return nil, nil, Classify(err, rel)
	}
	if err := checkRegular(fi, rel); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK: should the file be swapped for a named pipe after the check, the
	// open does not wait for a writer.
	f, err := r.root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, Classify(err, rel)
	}
	fi, err = f.Stat()
	if err == nil {
		err = checkRegular(fi, rel)
	}
	if err != nil {
		f.Close()
		return nil, nil, r.HidePath(err)
	}
	return f, fi, nil
}

// OpenDir opens the resolved root-relative path rel for reading its entries, only
// when it is a directory. Another existing entry gives a *fs.PathError wrapping
// ErrNotDirectory (it is not opened, or, when it replaced the directory after the
// check, closed at once: a named pipe is never waited on); a missing one an error
// for which errors.Is(err, fs.ErrNotExist) holds.
func (r *Root) OpenDir(rel string) (*os.File, error) {
	if r.root == nil {
		return nil, errNotLocal
	}
	name := filepath.FromSlash(rel)
	fi, err := r.root.Stat(name)
	if err != nil {
		return nil, Classify(err, rel)
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: ErrNotDirectory}
	}
	// O_NONBLOCK: should the directory be swapped for a named pipe after the
	// check, the open does not wait for a writer.
	f, err := r.root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, Classify(err, rel)
	}
	fi, err = f.Stat()
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "open", Path: rel, Err: ErrNotDirectory}
	}
	if err != nil {
		f.Close()
		return nil, r.HidePath(err)
	}
	return f, nil
}

// HidePath returns err with its path made root-relative when err is a
// *fs.PathError on an entry inside the root. The methods of a file opened through
// the root (Read, ReadDir, Write, Stat...) report its absolute host path; their
// errors pass through HidePath before a model sees them. Other errors, io.EOF and
// nil included, are returned unchanged.
func (r *Root) HidePath(err error) error {
	pe, ok := err.(*fs.PathError)
	if !ok {
		return err
	}
	rel, ok := r.relative(pe.Path)
	if !ok {
		return err
	}
	return &fs.PathError{Op: pe.Op, Path: rel, Err: pe.Err}
}

func checkRegular(fi fs.FileInfo, rel string) error {
	switch {
	case fi.IsDir():
		return &fs.PathError{Op: "open", Path: rel, Err: ErrIsDirectory}
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "open", Path: rel, Err: ErrNotRegular}
	}
	return nil
}
