package confine_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
)

func openRoot(t *testing.T, dir string) *confine.Root {
	t.Helper()
	r, err := confine.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestHostilePathsRefused(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	cases := env.Cases()
	if len(cases) < 25 {
		t.Fatalf("the escape suite has %d cases, want at least 25", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if tc.Setup != nil {
				tc.Setup(t)
			}
			for _, resolve := range []struct {
				name string
				fn   func(string) (string, error)
			}{{"Resolve", r.Resolve}, {"ResolveNoFollow", r.ResolveNoFollow}} {
				got, err := resolve.fn(tc.Path)
				var ce *confine.Error
				if !errors.As(err, &ce) {
					t.Fatalf("%s(%q) = %q, %v; want a *confine.Error", resolve.name, tc.Path, got, err)
				}
				if ce.Kind != tc.Kind {
					t.Errorf("%s(%q): kind %q, want %q (%v)", resolve.name, tc.Path, ce.Kind, tc.Kind, err)
				}
				msg := err.Error()
				if strings.Contains(msg, confinetest.Secret) {
					t.Errorf("message leaks the secret: %s", msg)
				}
				if !strings.Contains(tc.Path, env.Base) && strings.Contains(msg, env.Base) {
					t.Errorf("message shows an absolute host path: %s", msg)
				}
			}
		})
	}
	env.CheckOutside(t)
}

func TestResolveInside(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	confinetest.Symlink(t, env.Root, "link_rel_dots", filepath.FromSlash("sub/../notes.txt"))
	confinetest.Symlink(t, env.Root, "link_sub", "sub")
	abs := filepath.ToSlash(env.Root)
	tests := []struct {
		path, follow, noFollow string
	}{
		{".", ".", "."},
		{"notes.txt", "notes.txt", "notes.txt"},
		{"./notes.txt", "notes.txt", "notes.txt"},
		{"sub/../notes.txt", "notes.txt", "notes.txt"},
		{"sub/", "sub", "sub"},
		{"sub//inner.csv", "sub/inner.csv", "sub/inner.csv"},
		{abs, ".", "."},
		{abs + "/", ".", "."},
		{abs + "/sub/inner.csv", "sub/inner.csv", "sub/inner.csv"},
		{abs + "/sub/../data.csv", "data.csv", "data.csv"},
		{"link_in", "notes.txt", "link_in"},
		{"link_in_abs", "notes.txt", "link_in_abs"},
		{"link_rel_dots", "notes.txt", "link_rel_dots"},
		{"link_sub/inner.csv", "sub/inner.csv", "sub/inner.csv"},
		{"link_sub", "sub", "link_sub"},
		{"new/dir/file.txt", "new/dir/file.txt", "new/dir/file.txt"},
		{"link_sub/new/file.txt", "sub/new/file.txt", "sub/new/file.txt"},
		{"données/été.csv", "données/été.csv", "données/été.csv"},
		{"...", "...", "..."},
		{"..foo", "..foo", "..foo"},
		{"notes.txt/x", "notes.txt/x", "notes.txt/x"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := r.Resolve(tc.path)
			if err != nil || got != tc.follow {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tc.path, got, err, tc.follow)
			}
			got, err = r.ResolveNoFollow(tc.path)
			if err != nil || got != tc.noFollow {
				t.Errorf("ResolveNoFollow(%q) = %q, %v; want %q", tc.path, got, err, tc.noFollow)
			}
		})
	}
}

func TestResolveMissingThenParent(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	confinetest.Symlink(t, env.Root, "ghost", filepath.FromSlash("missing/../notes.txt"))
	_, err := r.Resolve("ghost")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Resolve(ghost) error = %v, want not found", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, want string
	}{
		{"", "root directory is not set"},
		{filepath.Join(dir, "missing"), "no such file"},
		{file, "is not a directory"},
	}
	for _, tc := range tests {
		_, err := confine.Open(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) error = %v, want it to contain %q", tc.dir, err, tc.want)
		}
	}
}

func TestRelativeRoot(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	r := openRoot(t, ".")
	got, err := r.Resolve(filepath.ToSlash(filepath.Join(dir, "f.txt")))
	if err != nil || got != "f.txt" {
		t.Errorf("Resolve(absolute inside a relative root) = %q, %v; want f.txt", got, err)
	}
}

func TestOpenRegular(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)

	f, fi, err := r.OpenRegular("notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "hello\n" || fi.Size() != 6 {
		t.Errorf("OpenRegular(notes.txt) read %q (size %d), %v", b, fi.Size(), err)
	}

	tests := []struct {
		path string
		want error
	}{
		{"sub", confine.ErrIsDirectory},
		{".", confine.ErrIsDirectory},
		{"missing.txt", fs.ErrNotExist},
	}
	for _, tc := range tests {
		_, _, err := r.OpenRegular(tc.path)
		if !errors.Is(err, tc.want) {
			t.Errorf("OpenRegular(%q) error = %v, want %v", tc.path, err, tc.want)
		}
	}
	// os.Root itself refuses a link out, and Classify names it.
	_, _, err = r.OpenRegular("link_out_file")
	var ce *confine.Error
	if !errors.As(err, &ce) || ce.Kind != confine.KindSymlink {
		t.Errorf("OpenRegular(link_out_file) error = %v, want a KindSymlink *confine.Error", err)
	}
}

func TestOpenDir(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)

	f, err := r.OpenDir("sub")
	if err != nil {
		t.Fatal(err)
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if diff := cmp.Diff([]string{"inner.csv", "link_up"}, sortedCopy(names)); err != nil || diff != "" {
		t.Errorf("OpenDir(sub) entries (-want +got), %v:\n%s", err, diff)
	}

	tests := []struct {
		path string
		want error
	}{
		{"notes.txt", confine.ErrNotDirectory},
		{"link_in", confine.ErrNotDirectory},
		{"missing", fs.ErrNotExist},
	}
	for _, tc := range tests {
		f, err := r.OpenDir(tc.path)
		if !errors.Is(err, tc.want) || f != nil {
			t.Errorf("OpenDir(%q) = %v, %v; want %v", tc.path, f, err, tc.want)
		}
	}
	var ce *confine.Error
	if _, err := r.OpenDir("link_out_dir"); !errors.As(err, &ce) || ce.Kind != confine.KindSymlink {
		t.Errorf("OpenDir(link_out_dir) error = %v, want a KindSymlink *confine.Error", err)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestHidePath checks that the error of a file opened through the root, which
// carries the host path, shows the root-relative path after HidePath.
func TestHidePath(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	f, err := r.OpenDir("sub")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, readErr := f.Read(make([]byte, 8)) // reading a directory fails
	if readErr == nil {
		t.Fatal("reading a directory succeeded")
	}
	got := r.HidePath(readErr)
	var pe *fs.PathError
	if !errors.As(got, &pe) || pe.Path != "sub" || strings.Contains(got.Error(), env.Base) {
		t.Errorf("HidePath(%v) = %v, want the path \"sub\"", readErr, got)
	}
	if !errors.Is(got, errors.Unwrap(readErr)) {
		t.Errorf("HidePath(%v) = %v lost the cause", readErr, got)
	}
	outside := &fs.PathError{Op: "open", Path: filepath.Join(env.Outside, "x"), Err: fs.ErrNotExist}
	for _, err := range []error{nil, io.EOF, outside, fmt.Errorf("wrapped: %w", readErr)} {
		if got := r.HidePath(err); got != err {
			t.Errorf("HidePath(%v) = %v, want it unchanged", err, got)
		}
	}
}

func TestClassify(t *testing.T) {
	env := confinetest.New(t)
	osRoot, err := os.OpenRoot(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer osRoot.Close()
	_, escErr := osRoot.Open("link_out_dir/secret.csv")
	if escErr == nil {
		t.Fatal("os.Root opened a file through a link out")
	}
	var ce *confine.Error
	if err := confine.Classify(escErr, "p"); !errors.As(err, &ce) || ce.Kind != confine.KindSymlink {
		t.Errorf("Classify(escape) = %v, want a KindSymlink *confine.Error", err)
	}
	if !errors.Is(confine.Classify(escErr, "p"), escErr) {
		t.Error("Classify(escape) does not wrap the os error")
	}
	_, nf := osRoot.Open("missing")
	if got := confine.Classify(nf, "missing"); got != nf {
		t.Errorf("Classify(not found) = %v, want it unchanged", got)
	}
	if got := confine.Classify(nil, "x"); got != nil {
		t.Errorf("Classify(nil) = %v", got)
	}
	// A rename reports the escape in an *os.LinkError.
	renameErr := osRoot.Rename("notes.txt", "link_out_dir/moved.txt")
	if err := confine.Classify(renameErr, "p"); !errors.As(err, &ce) || ce.Kind != confine.KindSymlink {
		t.Errorf("Classify(%v) = %v, want a KindSymlink *confine.Error", renameErr, err)
	}
	already := &confine.Error{Path: "x", Kind: confine.KindParent}
	if got := confine.Classify(already, "y"); got != already {
		t.Errorf("Classify(*Error) = %v, want it unchanged", got)
	}
}

func TestErrorMessages(t *testing.T) {
	long := strings.Repeat("ab", 3000)
	tests := []struct {
		err  *confine.Error
		want []string
	}{
		{&confine.Error{Path: "../x", Kind: confine.KindParent}, []string{`path "../x" refused`, `".."`, "inside the root"}},
		{&confine.Error{Path: "a\x00b", Kind: confine.KindNUL}, []string{`"a\x00b"`, "NUL byte"}},
		{&confine.Error{Path: `a\b`, Kind: confine.KindBackslash}, []string{`separate directories with "/"`}},
		{&confine.Error{Path: "/etc", Kind: confine.KindOutside}, []string{"absolute path outside the root"}},
		{&confine.Error{Path: "l/x", Kind: confine.KindSymlink, Link: "l"}, []string{`symbolic link "l" leads outside`}},
		{&confine.Error{Path: "loop", Kind: confine.KindLinkLoop, Link: "loop"}, []string{"more than 40 symbolic links"}},
		{&confine.Error{Path: long, Kind: confine.KindTooLong}, []string{"6000 bytes long", "limit of 4096", "(6000 bytes)"}},
		{&confine.Error{Path: "", Kind: confine.KindEmpty}, []string{"it is empty"}},
		{&confine.Error{Path: ".", Kind: confine.KindRootEntry}, []string{"root directory itself"}},
		{&confine.Error{Path: "a", Kind: confine.KindMovedLink, Link: "a/l"}, []string{`path "a" refused`, `symbolic link "a/l" would lead outside the root`, "nothing was moved", "choose a destination"}},
	}
	for _, tc := range tests {
		msg := tc.err.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q does not contain %q", tc.err.Kind, msg, w)
			}
		}
		if len(msg) > 600 {
			t.Errorf("%s: message is %d bytes long", tc.err.Kind, len(msg))
		}
	}
}

// TestSwapRace swaps a directory for a link to the outside while reads run: os.Root
// must refuse every read that would pass the link, whatever the timing.
func TestSwapRace(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	dir := filepath.Join(env.Root, "race")
	mkDir := func() {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "secret.csv"), []byte("inside"), 0o644); err != nil {
			t.Error(err)
		}
	}
	mkDir()
	const rounds = 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				// Relative to the link's directory, the root: Base/outside.
				if err := os.Symlink(filepath.FromSlash("../outside"), dir); err != nil {
					t.Error(err)
					return
				}
			} else {
				mkDir()
			}
		}
	})
	seen := map[string]int{}
	for range rounds {
		rel, err := r.Resolve("race/secret.csv")
		if err != nil {
			seen["refused or missing"]++
			continue
		}
		f, _, err := r.OpenRegular(rel)
		if err != nil {
			seen["refused or missing"]++
			continue
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		// "" is the file between its creation and its write by the swapper.
		if string(b) != "inside" && string(b) != "" {
			t.Fatalf("read %q through a swapped directory", b)
		}
		seen["inside"]++
	}
	if got := seen["inside"] + seen["refused or missing"]; got != rounds {
		t.Errorf("counted %d outcomes, want %d", got, rounds)
	}
	env.CheckOutside(t)
}

func TestConcurrentResolve(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	want := map[string]string{"link_in": "notes.txt", "link_sub_missing/x": "link_sub_missing/x", "sub/inner.csv": "sub/inner.csv"}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(want))
	for range 8 {
		for p, w := range want {
			wg.Go(func() {
				got, err := r.Resolve(p)
				if err != nil || got != w {
					errs <- errors.New(p + " resolved to " + got)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	var got []string
	for err := range errs {
		got = append(got, err.Error())
	}
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("concurrent Resolve (-want +got):\n%s", diff)
	}
}

// TestRootThroughLink configures the root through a symbolic link: absolute paths
// are accepted both through the link and through the real directory.
func TestRootThroughLink(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := openRoot(t, link)
	for _, p := range []string{link + "/d", real + "/d"} {
		got, err := r.Resolve(filepath.ToSlash(p))
		if err != nil || got != "d" {
			t.Errorf("Resolve(%q) = %q, %v; want d", p, got, err)
		}
	}
	for _, p := range []string{base, base + "/realx/d", link + "x/d"} {
		var ce *confine.Error
		if _, err := r.Resolve(filepath.ToSlash(p)); !errors.As(err, &ce) || ce.Kind != confine.KindOutside {
			t.Errorf("Resolve(%q) error = %v, want KindOutside", p, err)
		}
	}
}

func TestCheckMovedLink(t *testing.T) {
	env := confinetest.New(t)
	r := openRoot(t, env.Root)
	links := map[string]string{
		"a/up":       "../notes.txt",
		"a/b/up2":    "../../notes.txt",
		"a/down":     "b/x",
		"a/dots":     "b/../../notes.txt",
		"a/dir_up":   "..",
		"a/abs_in":   filepath.Join(env.Root, "notes.txt"),
		"a/abs_root": env.Root,
		"a/abs_out":  filepath.Join(env.Outside, "secret.csv"),
		"a/abs_sib":  env.Root + "-evil",
	}
	if err := os.MkdirAll(filepath.Join(env.Root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range links {
		confinetest.Symlink(t, env.Root, name, filepath.FromSlash(target))
	}
	tests := []struct {
		link, at string
		want     confine.Kind // "" for nil
	}{
		{"a/up", "a/up", ""},
		{"a/up", "b/up", ""},
		{"a/up", "x/y/z/up", ""},
		{"a/up", "up", confine.KindMovedLink},
		{"a/b/up2", "c/up2", confine.KindMovedLink},
		{"a/b/up2", "c/d/up2", ""},
		{"a/down", "down", ""},
		{"a/dots", "c/dots", ""},
		{"a/dots", "dots", confine.KindMovedLink},
		{"a/dir_up", "c/dir_up", ""},
		{"a/dir_up", "dir_up", confine.KindMovedLink},
		{"a/abs_in", "abs_in", ""},
		{"a/abs_in", "x/y/z/abs_in", ""},
		{"a/abs_root", "abs_root", ""},
		{"a/abs_out", "a/abs_out", confine.KindSymlink},
		{"a/abs_out", "x/y/abs_out", confine.KindSymlink},
		{"a/abs_sib", "x/abs_sib", confine.KindSymlink},
		{"link_in", "x/y/link_in", ""},
		{"link_out_dir", "x/link_out_dir", ""},                  // ../outside from x: the root's "outside"
		{"link_out_dir", "link_out_dir", confine.KindMovedLink}, // as it lies now
	}
	for _, tc := range tests {
		t.Run(tc.link+" to "+tc.at, func(t *testing.T) {
			err := r.CheckMovedLink("p", tc.link, tc.at)
			if tc.want == "" {
				if err != nil {
					t.Errorf("CheckMovedLink(%q, %q) = %v, want nil", tc.link, tc.at, err)
				}
				return
			}
			var ce *confine.Error
			if !errors.As(err, &ce) || ce.Kind != tc.want || ce.Link != tc.link || ce.Path != "p" {
				t.Fatalf("CheckMovedLink(%q, %q) = %v, want a %s *confine.Error for the link %q", tc.link, tc.at, err, tc.want, tc.link)
			}
			if strings.Contains(err.Error(), env.Base) {
				t.Errorf("message shows an absolute host path: %s", err)
			}
		})
	}
	for _, link := range []string{"missing", "notes.txt"} {
		err := r.CheckMovedLink("p", link, "x/"+link)
		var ce *confine.Error
		if err == nil || errors.As(err, &ce) || strings.Contains(err.Error(), env.Base) {
			t.Errorf("CheckMovedLink(%q) = %v, want a file system error with a root-relative path", link, err)
		}
	}
	env.CheckOutside(t)
}
