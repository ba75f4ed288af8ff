// Package confinetest builds directory trees for the tests of code confined to a
// root: small trees of files and links ([Tree], [Symlink]), and a hostile tree
// with the table of escape attempts that every driver confined to a root must
// refuse ([New], [Env.Cases]). The same table runs against internal/confine and
// against each driver, so that a driver cannot lose a protection of package
// confine.
package confinetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/internal/confine"
)

// Tree writes files into a new temporary directory of tb and returns the
// directory. The keys are slash-separated paths relative to it and the values their
// content; a key ending in "/" makes an empty directory. Missing parent directories
// are created.
func Tree(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	writeFiles(tb, dir, files)
	return dir
}

// writeFiles writes files, as Tree describes them, into dir.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// Symlink creates the symbolic link name (slash-separated, relative to dir), whose
// content is target, as given. It skips the test where symbolic links cannot be
// created.
func Symlink(tb testing.TB, dir, name, target string) {
	tb.Helper()
	if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		if runtime.GOOS == "windows" {
			tb.Skipf("symbolic links unavailable: %v", err)
		}
		tb.Fatal(err)
	}
}

// Secret is the content of every file outside the root. A result or an error that
// contains it proves an escape.
const Secret = "TOP-SECRET-OUTSIDE"

// Env is a temporary tree:
//
//	Base/ (six levels below a temporary directory)
//	  root/                  the root drivers are built over
//	    notes.txt            "hello\n"
//	    data.csv             "name,qty\napple,3\npear,5\n"
//	    sub/inner.csv        "a,b\n1,2\n"
//	    swap/ok.csv          replaced by a link to outside/ by SwapDir
//	    link_in -> notes.txt
//	    link_in_abs -> <Root>/notes.txt
//	    link_out_file -> ../outside/secret.csv
//	    link_out_abs -> <Outside>/secret.csv
//	    link_out_dir -> ../outside
//	    sub/link_up -> ../../outside
//	    dotdot -> ..
//	    chain1 -> chain2 -> chain3 -> ../outside/secret.csv
//	    loop_a -> loop_b -> loop_a
//	  root-evil/secret.csv   a sibling whose name has the root's name as prefix
//	  outside/secret.csv     a CSV file holding Secret
//	  outside/notes.txt      Secret
type Env struct {
	// Base is the temporary directory holding Root and its neighbours.
	Base string
	// Root is the directory a driver is built over.
	Root string
	// Outside is a directory beside Root that holds secret.csv.
	Outside string

	top    string // the temporary directory; Base lies six levels below it
	before map[string]string
}

// New builds the tree under tb.TempDir. It skips the test where symbolic links
// cannot be created.
func New(tb testing.TB) *Env {
	tb.Helper()
	top, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	// Deep enough that a "../../../../../../x" escape still lands in the
	// temporary directory, where CheckOutside sees it.
	base := filepath.Join(top, "a", "b", "c", "d", "e", "f")
	e := &Env{
		top:     top,
		Base:    base,
		Root:    filepath.Join(base, "root"),
		Outside: filepath.Join(base, "outside"),
	}
	secretCSV := "name,value\n" + Secret + ",1\n"
	files := map[string]string{
		"root/notes.txt":       "hello\n",
		"root/data.csv":        "name,qty\napple,3\npear,5\n",
		"root/sub/inner.csv":   "a,b\n1,2\n",
		"root/swap/ok.csv":     "a,b\n1,2\n",
		"root-evil/secret.csv": secretCSV,
		"outside/secret.csv":   secretCSV,
		"outside/notes.txt":    Secret,
	}
	writeFiles(tb, base, files)
	links := [][2]string{
		{"link_in", "notes.txt"},
		{"link_in_abs", filepath.Join(e.Root, "notes.txt")},
		{"link_out_file", filepath.FromSlash("../outside/secret.csv")},
		{"link_out_abs", filepath.Join(e.Outside, "secret.csv")},
		{"link_out_dir", filepath.FromSlash("../outside")},
		{"sub/link_up", filepath.FromSlash("../../outside")},
		{"dotdot", ".."},
		{"chain1", "chain2"},
		{"chain2", "chain3"},
		{"chain3", filepath.FromSlash("../outside/secret.csv")},
		{"loop_a", "loop_b"},
		{"loop_b", "loop_a"},
	}
	for _, l := range links {
		Symlink(tb, e.Root, l[0], l[1])
	}
	e.before = e.snapshot(tb)
	return e
}

// LateLink creates root/late_link -> ../outside/secret.csv, a link that did not
// exist when the driver was built. It is idempotent.
func (e *Env) LateLink(tb testing.TB) {
	tb.Helper()
	p := filepath.Join(e.Root, "late_link")
	if _, err := os.Lstat(p); err == nil {
		return
	}
	Symlink(tb, e.Root, "late_link", filepath.FromSlash("../outside/secret.csv"))
}

// SwapDir replaces the directory root/swap with a link to the outside directory,
// as an attacker racing the driver would between two calls. It is idempotent.
func (e *Env) SwapDir(tb testing.TB) {
	tb.Helper()
	p := filepath.Join(e.Root, "swap")
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return
	}
	if err := os.RemoveAll(p); err != nil {
		tb.Fatal(err)
	}
	Symlink(tb, e.Root, "swap", filepath.FromSlash("../outside"))
}

// Case is one escape attempt.
type Case struct {
	// Name identifies the case in test output.
	Name string
	// Path is the model-supplied path.
	Path string
	// Kind is the reason confine must give.
	Kind confine.Kind
	// Setup, when set, changes the tree after the driver was built and before the
	// path is used.
	Setup func(tb testing.TB)
	// System marks a path that names a file of the host system (such as
	// /etc/passwd). Tests of writing tools skip these cases, so that a broken check
	// can never damage the machine that runs the tests.
	System bool
}

// Cases returns the escape attempts; every one must be refused with a
// *confine.Error, and nothing outside the root may be read or written.
func (e *Env) Cases() []Case {
	abs := func(p string) string { return filepath.ToSlash(p) }
	return []Case{
		{Name: "parent", Path: "..", Kind: confine.KindParent},
		{Name: "parent file", Path: "../outside/secret.csv", Kind: confine.KindParent},
		{Name: "deep parent", Path: "../../../../../../etc/passwd", Kind: confine.KindParent},
		{Name: "dot parent", Path: "./../x", Kind: confine.KindParent},
		{Name: "down then up", Path: "a/../../x", Kind: confine.KindParent},
		{Name: "sub down then up", Path: "sub/./../../outside/secret.csv", Kind: confine.KindParent},
		{Name: "parent to sibling", Path: "../root-evil/secret.csv", Kind: confine.KindParent},
		{Name: "absolute system file", Path: "/etc/passwd", Kind: confine.KindOutside, System: true},
		{Name: "double slash", Path: "//etc/passwd", Kind: confine.KindOutside, System: true},
		{Name: "host root", Path: "/", Kind: confine.KindOutside, System: true},
		{Name: "absolute outside", Path: abs(filepath.Join(e.Outside, "secret.csv")), Kind: confine.KindOutside},
		{Name: "sibling prefix", Path: abs(e.Root + "-evil/secret.csv"), Kind: confine.KindOutside},
		{Name: "absolute through parent", Path: abs(e.Root) + "/../outside/secret.csv", Kind: confine.KindOutside},
		{Name: "backslash parent", Path: `\..\x`, Kind: confine.KindBackslash},
		{Name: "backslash relative", Path: `..\outside\secret.csv`, Kind: confine.KindBackslash},
		{Name: "backslash mixed", Path: `sub\..\..\outside/secret.csv`, Kind: confine.KindBackslash},
		{Name: "windows drive", Path: `C:\Windows\win.ini`, Kind: confine.KindBackslash, System: true},
		{Name: "nul byte", Path: "notes.txt\x00../../etc/passwd", Kind: confine.KindNUL},
		{Name: "nul only", Path: "\x00", Kind: confine.KindNUL},
		{Name: "newline", Path: "notes.txt\n../x", Kind: confine.KindControl},
		{Name: "over 4096 bytes", Path: strings.Repeat("a/", 2049), Kind: confine.KindTooLong},
		{Name: "long name", Path: strings.Repeat("x", confine.MaxPathLen+1), Kind: confine.KindTooLong},
		{Name: "empty", Path: "", Kind: confine.KindEmpty},
		{Name: "file symlink out", Path: "link_out_file", Kind: confine.KindSymlink},
		{Name: "absolute symlink out", Path: "link_out_abs", Kind: confine.KindSymlink},
		{Name: "dir symlink out", Path: "link_out_dir", Kind: confine.KindSymlink},
		{Name: "through dir symlink", Path: "link_out_dir/secret.csv", Kind: confine.KindSymlink},
		{Name: "nested dir symlink", Path: "sub/link_up/secret.csv", Kind: confine.KindSymlink},
		{Name: "dotdot symlink", Path: "dotdot/outside/secret.csv", Kind: confine.KindSymlink},
		{Name: "symlink chain", Path: "chain1", Kind: confine.KindSymlink},
		{Name: "symlink loop", Path: "loop_a", Kind: confine.KindLinkLoop},
		{Name: "symlink created after build", Path: "late_link", Kind: confine.KindSymlink, Setup: e.LateLink},
		{Name: "directory swapped for symlink", Path: "swap/secret.csv", Kind: confine.KindSymlink, Setup: e.SwapDir},
	}
}

// CheckOutside fails tb when anything outside the root changed since New: a file
// written, removed or modified beside the root.
func (e *Env) CheckOutside(tb testing.TB) {
	tb.Helper()
	if diff := cmp.Diff(e.before, e.snapshot(tb)); diff != "" {
		tb.Errorf("the tree outside the root changed (-before +after):\n%s", diff)
	}
}

// snapshot maps every entry of the temporary directory outside the root to its
// content, its link target or "<dir>".
func (e *Env) snapshot(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == e.Root {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(e.top, p)
		switch {
		case d.IsDir():
			out[rel] = "<dir>"
		case d.Type()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			out[rel] = "-> " + t
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
