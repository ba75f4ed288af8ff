package auth_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/middleware/auth"
)

func newFileStore(t *testing.T) *auth.FileStore {
	t.Helper()
	s, err := auth.NewFileStore(filepath.Join(t.TempDir(), "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStores runs the TokenStore contract against both implementations.
func TestStores(t *testing.T) {
	stores := map[string]func(t *testing.T) auth.TokenStore{
		"memory": func(*testing.T) auth.TokenStore { return auth.NewMemoryStore() },
		"file":   func(t *testing.T) auth.TokenStore { return newFileStore(t) },
	}
	past := time.Date(2001, 2, 3, 4, 5, 6, 789, time.FixedZone("x", 3600))
	future := time.Now().Add(time.Hour)

	type entry struct {
		Value  string
		Expiry time.Time
		OK     bool
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			load := func(key string) entry {
				t.Helper()
				v, exp, ok, err := s.Load(key)
				if err != nil {
					t.Fatalf("Load(%q): %v", key, err)
				}
				return entry{v, exp, ok}
			}
			if got := load("missing"); got.OK {
				t.Errorf("Load(missing) = %+v, want ok == false", got)
			}
			steps := []struct {
				key    string
				value  string
				expiry time.Time
			}{
				{"no-expiry", "v1", time.Time{}},
				{"expired", "v2", past},
				{"valid", "v3", future},
				{"valid", "v4", future.Add(time.Minute)}, // replaces
				{"", "empty key", time.Time{}},
			}
			for _, st := range steps {
				if err := s.Save(st.key, st.value, st.expiry); err != nil {
					t.Fatalf("Save(%q): %v", st.key, err)
				}
				got := load(st.key)
				if got.Value != st.value || !got.Expiry.Equal(st.expiry) || !got.OK {
					t.Errorf("Load(%q) = %+v, want %q expiring %v", st.key, got, st.value, st.expiry)
				}
			}
			// An expired entry is returned with its expiry; the caller decides.
			if got := load("expired"); !got.OK || !got.Expiry.Equal(past) {
				t.Errorf("Load(expired) = %+v, want the entry with its past expiry", got)
			}
			if err := s.Delete("valid"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if err := s.Delete("valid"); err != nil {
				t.Errorf("Delete of a missing key: %v, want nil", err)
			}
			if got := load("valid"); got.OK {
				t.Errorf("Load after Delete = %+v, want ok == false", got)
			}
			if got := load("no-expiry"); got.Value != "v1" || !got.Expiry.IsZero() {
				t.Errorf("Delete touched another key: %+v", got)
			}
		})
	}
}

func TestStoresConcurrent(t *testing.T) {
	stores := map[string]auth.TokenStore{"memory": auth.NewMemoryStore(), "file": newFileStore(t)}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			const workers, keys = 4, 5
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for k := range keys {
						key := fmt.Sprintf("w%d-k%d", w, k)
						if err := s.Save(key, key, time.Time{}); err != nil {
							t.Errorf("Save: %v", err)
						}
						if v, _, ok, err := s.Load(key); v != key || !ok || err != nil {
							t.Errorf("Load(%q) = %q, %t, %v", key, v, ok, err)
						}
					}
				})
			}
			wg.Wait()
			// No update may be lost by interleaved read-modify-write cycles.
			for w := range workers {
				for k := range keys {
					key := fmt.Sprintf("w%d-k%d", w, k)
					if _, _, ok, err := s.Load(key); !ok || err != nil {
						t.Errorf("Load(%q) after the race: ok=%t err=%v, want the entry", key, ok, err)
					}
				}
			}
		})
	}
}

func TestFileStorePermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not POSIX on windows")
	}
	dir := filepath.Join(t.TempDir(), "new", "dir")
	path := filepath.Join(dir, "tokens.json")
	s, err := auth.NewFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("NewFileStore created the file (%v); it should appear with the first Save", err)
	}
	if err := s.Save("k", "v", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, %v; want 0600", fi.Mode(), err)
	}

	// A file left world-readable by someone else becomes 0600 with the next write.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("k", "v2", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode after rewrite = %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestFileStoreAtomicReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.json")
	s, err := auth.NewFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save("k", "v1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save("k", "v2", time.Time{}); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("Save rewrote the file in place; want a new file renamed over the old one")
	}
	if names := dirNames(t, dir); !cmp.Equal(names, []string{"tokens.json"}) {
		t.Errorf("directory holds %v, want only tokens.json (no temporary files left)", names)
	}
	// The file is complete JSON a person can read.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"version": 1`) || !strings.Contains(string(data), `"v2"`) {
		t.Errorf("file content:\n%s\nwant version 1 and the new value", data)
	}
}

func TestFileStoreFailedWriteCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.json")
	s, err := auth.NewFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	// Something else takes the path: the rename over it must fail.
	if err := os.MkdirAll(filepath.Join(path, "occupied"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("k", "SECRET", time.Time{}); err == nil {
		t.Fatal("Save over a directory succeeded, want an error")
	}
	if names := dirNames(t, dir); !cmp.Equal(names, []string{"tokens.json"}) {
		t.Errorf("directory holds %v after a failed Save; want no temporary file left", names)
	}
	if fi, err := os.Stat(filepath.Join(path, "occupied")); err != nil || !fi.IsDir() {
		t.Errorf("the failed Save disturbed what was at the path: %v", err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestFileStoreCorrupt(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{"not json", "SECRET-token garbage"},
		{"truncated", `{"version":1,"entries":{"k":{"value":"SECRET-tok`},
		{"wrong shape", `{"version":1,"entries":{"k":{"value":5}}}`},
		{"token in the expiry", `{"version":1,"entries":{"k":{"value":"v","expiry":"SECRET-token"}}}`},
		{"huge number", `{"version":1e999999,"entries":{}}`},
		{"other version", `{"version":2,"entries":{}}`},
		{"no version", `{"entries":{"k":{"value":"SECRET"}}}`},
		{"trailing data", `{"version":1,"entries":{}} {"SECRET":1}`},
		{"too large", `{"version":1,"entries":{},"pad":"` + strings.Repeat("x", 4<<20) + `"}`},
	}
	for _, tt := range tests {
		for _, op := range []string{"save", "delete"} {
			t.Run(tt.name+"/"+op, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "tokens.json")
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := auth.NewFileStore(path)
				if err != nil {
					t.Fatalf("NewFileStore on a corrupt file: %v, want a store (the corruption is reported by Load)", err)
				}
				v, _, ok, err := s.Load("k")
				ce, isCorrupt := errors.AsType[*auth.CorruptFileError](err)
				if v != "" || ok || !isCorrupt {
					t.Fatalf("Load = %q, %t, %v; want ok == false and a *CorruptFileError", v, ok, err)
				}
				if ce.Path != path || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "replaced") {
					t.Errorf("error %q: want the path, the word replaced and none of the content", err)
				}
				// Reported until replaced.
				if _, _, _, err := s.Load("k"); err == nil {
					t.Error("second Load on the corrupt file: nil error, want it still reported")
				}
				wantOK := false
				switch op {
				case "save":
					err, wantOK = s.Save("new", "v", time.Time{}), true
				case "delete":
					err = s.Delete("new")
				}
				if err != nil {
					t.Fatalf("%s on a corrupt file: %v, want the file replaced", op, err)
				}
				v, _, ok, err = s.Load("new")
				if err != nil || ok != wantOK || (wantOK && v != "v") {
					t.Errorf("Load after %s = %q, %t, %v; want a readable file (ok %t)", op, v, ok, err, wantOK)
				}
			})
		}
	}
}

func TestNewFileStoreErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"empty", "", "path is empty"},
		{"directory", dir, "is a directory"},
		{"parent is a file", filepath.Join(file, "tokens.json"), "create its directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := auth.NewFileStore(tt.path)
			if err == nil || s != nil {
				t.Fatalf("NewFileStore(%q) = %v, %v; want an error", tt.path, s, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestMemoryStoreZeroValue(t *testing.T) {
	var s auth.MemoryStore
	if _, _, ok, err := s.Load("k"); ok || err != nil {
		t.Errorf("Load on the zero value = %t, %v; want an empty store", ok, err)
	}
	if err := s.Save("k", "v", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if v, _, ok, err := s.Load("k"); v != "v" || !ok || err != nil {
		t.Errorf("Load = %q, %t, %v; want the saved value", v, ok, err)
	}
}

// TestFileStoreErrorsNameNoPath: errors of Load, Save and Delete can reach the model
// (through a failed call), so they never carry the token file's host path; the
// operator finds it in FileError.Path and CorruptFileError.Path.
func TestFileStoreErrorsNameNoPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "secret-home")
	path := filepath.Join(dir, "tokens.json")
	s, err := auth.NewFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	// The file's place is taken by a directory: reads and writes fail.
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, _, _, lerr := s.Load("github")
	serr := s.Save("github", "tok", time.Time{})
	for name, err := range map[string]error{"Load": lerr, "Save": serr} {
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "secret-home") {
			t.Errorf("%s: the error names the path: %v", name, err)
		}
		if fe, ok := errors.AsType[*auth.FileError](err); !ok || fe.Path != path {
			t.Errorf("%s: %v is not a *FileError with the path", name, err)
		}
	}
	// A corrupt file: the message names no path either.
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = s.Load("github")
	if ce, ok := errors.AsType[*auth.CorruptFileError](err); !ok || ce.Path != path || strings.Contains(err.Error(), dir) {
		t.Errorf("corrupt: %v", err)
	}
}
