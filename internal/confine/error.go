package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Kind says why a path was refused.
type Kind string

// The reasons a path is refused. Every one of them makes the call fail: nothing is
// read or written.
const (
	KindEmpty     Kind = "empty"      // the path is the empty string
	KindNUL       Kind = "nul"        // the path contains a NUL byte
	KindControl   Kind = "control"    // the path contains another control character
	KindTooLong   Kind = "too_long"   // the path is longer than MaxPathLen bytes
	KindBackslash Kind = "backslash"  // the path contains a backslash
	KindParent    Kind = "parent"     // ".." segments lead above the root
	KindOutside   Kind = "outside"    // an absolute path (or volume name) outside the root
	KindSymlink   Kind = "symlink"    // a symbolic link on the path leads outside the root
	KindLinkLoop  Kind = "link_loop"  // too many levels of symbolic links
	KindRootEntry Kind = "root_entry" // the operation would replace or remove the root itself
	KindMovedLink Kind = "moved_link" // a moved symbolic link would lead outside the root from its new place
)

// Error reports a path that was refused because it is malformed or would leave the
// root. It is the error of every confinement violation, so a caller can tell a
// refused path (errors.As with *Error) from a path that does not exist
// (errors.Is with fs.ErrNotExist). Its text never contains an absolute host path
// other than one the caller supplied.
type Error struct {
	// Path is the path as it was supplied.
	Path string
	// Kind says why the path was refused.
	Kind Kind
	// Link is the root-relative path of the symbolic link that leads outside the
	// root or into a loop, or, for KindMovedLink, of the link that would lead
	// outside once moved (where it lies before the move); empty for the other
	// kinds.
	Link string
	// Err is the underlying error, if any.
	Err error
}

// Error returns a message that names the path, says what is wrong with it and what
// to do instead.
func (e *Error) Error() string {
	return fmt.Sprintf("path %s refused: %s", displayPath(e.Path), e.reason())
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) reason() string {
	switch e.Kind {
	case KindEmpty:
		return `it is empty; give a path relative to the root, such as "notes.txt", or "." for the root itself`
	case KindNUL:
		return "it contains a NUL byte; remove it"
	case KindControl:
		return "it contains a control character; file names here must be printable"
	case KindTooLong:
		return fmt.Sprintf("it is %d bytes long, more than the limit of %d bytes", len(e.Path), MaxPathLen)
	case KindBackslash:
		return `it contains a backslash; separate directories with "/"`
	case KindParent:
		return `its ".." segments lead above the root directory; use a path inside the root, relative to it`
	case KindOutside:
		return "it is an absolute path outside the root directory; use a path relative to the root"
	case KindSymlink:
		if e.Link != "" {
			return fmt.Sprintf("the symbolic link %q leads outside the root directory; only files inside the root are accessible", e.Link)
		}
		return "a symbolic link on it leads outside the root directory; only files inside the root are accessible"
	case KindLinkLoop:
		return fmt.Sprintf("it passes through more than %d symbolic links (a link loop?) at %q", maxLinks, e.Link)
	case KindMovedLink:
		return fmt.Sprintf("once moved, the symbolic link %q would lead outside the root directory, because its relative target is followed from its new place; nothing was moved: choose a destination from which the link still leads inside the root, or leave the link where it is", e.Link)
	case KindRootEntry:
		return "it names the root directory itself, which cannot be replaced, moved or removed; name an entry inside it"
	}
	return string(e.Kind)
}

// displayPath quotes p for a message, shortening a very long path so that the
// message stays readable.
func displayPath(p string) string {
	const keep = 64
	if len(p) <= 2*keep {
		return fmt.Sprintf("%q", p)
	}
	return fmt.Sprintf("%q...%q (%d bytes)", p[:keep], p[len(p)-keep:], len(p))
}

// Errors reported by [Root.OpenRegular] and [Root.OpenDir] for an existing entry
// of the wrong type. They are wrapped in a *fs.PathError whose Path is
// root-relative.
var (
	ErrIsDirectory  = errors.New("is a directory")
	ErrNotRegular   = errors.New("not a regular file (a device, socket or named pipe)")
	ErrNotDirectory = errors.New("not a directory")
)

// Classify returns err unchanged unless it is the error with which *os.Root refuses a
// path that escapes it (which can happen when the file system changes between the
// check of a path and its use): a *fs.PathError, or the *os.LinkError of a rename,
// that becomes an *Error of KindSymlink for path. A nil err gives nil.
func Classify(err error, path string) error {
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	var pe *fs.PathError
	var le *os.LinkError
	if (errors.As(err, &pe) && isEscape(pe.Err)) || (errors.As(err, &le) && isEscape(le.Err)) {
		return &Error{Path: path, Kind: KindSymlink, Err: err}
	}
	return err
}

// isEscape reports whether err is the error of *os.Root for a path that leaves it;
// the os package does not export it, so its text is compared.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "escapes from parent")
}

// IsNotExist reports whether err says that a path does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// IsNotDir reports whether err says that an element of a path is a file where a
// directory should be.
func IsNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// Outcome is how a tool ends on err, met on the root-relative path: a path that
// does not exist, or that has a file where a directory should be, gives a result
// the model can read and act on, {"path", "error", "hint"} (notFoundHint for a
// missing path); every other error, a confinement violation included, fails the
// call unchanged.
func Outcome(path string, err error, notFoundHint string) (any, error) {
	var ce *Error
	switch {
	case errors.As(err, &ce):
		return nil, err
	case IsNotExist(err):
		return map[string]any{"path": path, "error": "not found", "hint": notFoundHint}, nil
	case IsNotDir(err):
		return map[string]any{"path": path, "error": "not a directory", "hint": "an element of the path is a file, not a directory"}, nil
	}
	return nil, err
}
