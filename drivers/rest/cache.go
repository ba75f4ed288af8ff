package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
)

// The tool-table cache.
//
// A warm start skips decoding the document: the driver reads the spec bytes,
// hashes them and, when the cache holds the tool list of exactly those bytes
// (for this driver build and these filters), lists that. The cache holds the
// listing only (names, descriptions, parameters and their schemas): no host,
// path, method, media type or security scheme. Executing a tool always plans
// the request from the document itself, decoded on the first call, so a cache
// file cannot change which host is called, and a tool only the cache names
// cannot be called. On that first decode the driver compares the document's
// listing with the cached one; when they differ, the cache file is removed,
// the listing becomes the document's and ToolsVersion changes.
//
// Cache files are untrusted input. The directory and the file must belong to
// the user running the program and be writable by nobody else (on Unix; a
// refused directory is logged once, with the fix), so that another user cannot
// plant a listing. A file is used only when it is valid JSON
// of the expected shape (no unknown fields, nothing after it, at most
// MaxSpecBytes), names the SHA-256 of the spec bytes just read, this cache
// format, this driver build and these filters, and its tools have valid,
// unique names and unique parameter names. Anything else is ignored and
// rebuilt. A FIFO, device or symbolic link at an entry's path is not opened
// for reading (no waiting for a writer, no following) and is ignored. Files are written to a temporary file in the same directory and
// renamed into place, so readers never see a partial file, and concurrent
// writers of one key write the same content.

// cacheEnv names the environment variable that overrides the cache directory.
const cacheEnv = "MCS_CACHE_DIR"

// cacheFormat is the version of the file layout and of the derivation of
// tools from documents; change it whenever either changes.
const cacheFormat = 2

// cacheFile is the content of one cache file.
type cacheFile struct {
	Format     int
	Build      string
	SpecSHA256 string
	Tags       []string
	Paths      []string
	Tools      []mcs.Tool
	// Secured says some listed operation has a security requirement (see
	// Config.AuthScheme). A file that claims it wrongly only delays the
	// error of a document without one to the first call.
	Secured bool
}

// toolCache is the cache directory of one driver; nil means no cache.
type toolCache struct {
	dir    string
	warned sync.Once // the warning that the directory is not used
}

// trustedDir reports whether the cache directory may be used: it belongs to the
// user running the program and nobody else may write to it. The first refusal is
// logged with slog.Default, saying how to fix it. A directory that does not exist
// yet is trusted (write creates it, private).
func (c *toolCache) trustedDir() bool {
	fi, err := os.Stat(c.dir)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err == nil && !fi.IsDir() {
		err = errors.New("it is not a directory")
	}
	if err == nil {
		err = untrusted(fi)
	}
	if err != nil {
		c.warned.Do(func() {
			slog.Default().Warn("mcs: the REST tool-table cache is not used; make the directory private to this user (chmod 700) or set another one (Config.CacheDir, "+cacheEnv+")",
				"dir", c.dir, "reason", err.Error())
		})
		return false
	}
	return true
}

// newToolCache returns the cache cfg selects: Config.CacheDir, else
// $MCS_CACHE_DIR, else a directory under os.UserCacheDir. In a test binary
// (testing.Testing) the last default is off, so that tests never write into
// the user's cache; set MCS_CACHE_DIR or Config.CacheDir to test the cache.
func newToolCache(cfg Config) *toolCache {
	if cfg.NoCache {
		return nil
	}
	if cfg.CacheDir != "" {
		return &toolCache{dir: cfg.CacheDir}
	}
	if dir := os.Getenv(cacheEnv); dir != "" {
		return &toolCache{dir: filepath.Join(dir, "rest-tools")}
	}
	if testing.Testing() {
		return nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	return &toolCache{dir: filepath.Join(dir, "mcs", "rest-tools")}
}

// cacheBuild names the code that derives tools: the driver's version, the
// cache format, and the versions of this module and of kin-openapi as built
// into the program (with the VCS revision of a development build).
var cacheBuild = sync.OnceValue(func() string {
	parts := []string{"rest " + Version, fmt.Sprintf("format %d", cacheFormat)}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			switch m.Path {
			case "github.com/mcs-go/mcs", "github.com/getkin/kin-openapi":
				parts = append(parts, m.Path+"@"+m.Version+" "+m.Sum)
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				parts = append(parts, s.Key+"="+s.Value)
			}
		}
	}
	return strings.Join(parts, "; ")
})

// cacheEntry locates the entry of one spec and filter set.
type cacheEntry struct {
	path    string
	specSum string
	tags    []string
	paths   []string
	// limit is the longest tool name the configuration allows.
	limit int
}

// entry returns the entry of data under cfg's filters. The key covers
// everything the listing depends on: the spec bytes, the code (cacheBuild)
// and the filters. A Config field that comes to change the listing must be
// added here; fields that may hold secrets (Headers, BaseURL) stay out of
// it, as their hash next to a known spec could be guessed offline.
func (c *toolCache) entry(data []byte, cfg Config) cacheEntry {
	sum := sha256.Sum256(data)
	e := cacheEntry{specSum: hex.EncodeToString(sum[:]), tags: cfg.IncludeTags, paths: cfg.IncludePaths, limit: maxNameLen}
	if cfg.MaxNameLength > 0 {
		e.limit = cfg.MaxNameLength
	}
	h := sha256.New()
	// Every setting that changes the listing is part of the key.
	key, _ := json.Marshal([]any{cacheBuild(), e.specSum, e.tags, e.paths, cfg.MaxNameLength})
	h.Write(key)
	e.path = filepath.Join(c.dir, hex.EncodeToString(h.Sum(nil))+".json")
	return e
}

// read returns the tools of e and whether some of them have a security
// requirement, or false when the cache has no valid entry.
func (c *toolCache) read(e cacheEntry) (tools []mcs.Tool, secured, ok bool) {
	if !c.trustedDir() {
		return nil, false, false
	}
	// Opened without waiting (a FIFO planted there would block an ordinary
	// open until someone writes to it) and without following a symbolic link;
	// then the file opened, not the name, must be regular and trusted, so it
	// cannot be swapped between check and read.
	f, err := openCacheFile(e.path)
	if err != nil {
		return nil, false, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || untrusted(fi) != nil {
		return nil, false, false
	}
	data, err := readLimited(f, MaxSpecBytes)
	if err != nil {
		return nil, false, false
	}
	cf, err := decodeCache(data, e)
	if err != nil {
		return nil, false, false
	}
	return cf.Tools, cf.Secured, true
}

// decodeCache decodes and checks a cache file for e.
func decodeCache(data []byte, e cacheEntry) (*cacheFile, error) {
	cf, err := parseCacheFile(data)
	if err != nil {
		return nil, err
	}
	switch {
	case cf.Format != cacheFormat:
		return nil, errors.New("another cache format")
	case cf.Build != cacheBuild():
		return nil, errors.New("another driver build")
	case cf.SpecSHA256 != e.specSum:
		return nil, errors.New("another spec")
	case !slices.Equal(cf.Tags, e.tags) || !slices.Equal(cf.Paths, e.paths):
		return nil, errors.New("other filters")
	}
	if err := checkTools(cf.Tools, e.limit); err != nil {
		return nil, err
	}
	return cf, nil
}

// checkTools checks what the driver guarantees of its tools: valid, unique
// names of at most limit bytes and unique, non-empty parameter names.
func checkTools(tools []mcs.Tool, limit int) error {
	names := make(map[string]bool, len(tools))
	for _, t := range tools {
		if !validToolName(t.Name) || len(t.Name) > limit || names[t.Name] {
			return fmt.Errorf("tool name %q is invalid or repeated", t.Name)
		}
		names[t.Name] = true
		params := make(map[string]bool, len(t.Parameters))
		for _, p := range t.Parameters {
			if p.Name == "" || params[p.Name] {
				return fmt.Errorf("tool %q: parameter name %q is empty or repeated", t.Name, p.Name)
			}
			params[p.Name] = true
		}
	}
	return nil
}

// validToolName reports whether name is one the driver can give out.
func validToolName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// write stores tools as the entry e, atomically; failures are ignored (the
// cache only saves time).
func (c *toolCache) write(e cacheEntry, tools []mcs.Tool, secured bool) {
	data, err := encodeCache(e, tools, secured)
	if err != nil {
		return
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil || !c.trustedDir() {
		return
	}
	f, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, e.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
}

// remove deletes the entry e.
func (c *toolCache) remove(e cacheEntry) { _ = os.Remove(e.path) }

func encodeCache(e cacheEntry, tools []mcs.Tool, secured bool) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(cacheFile{
		Format: cacheFormat, Build: cacheBuild(), SpecSHA256: e.specSum,
		Tags: e.tags, Paths: e.paths, Tools: tools, Secured: secured,
	})
	return buf.Bytes(), err
}

// cachedSource is the document behind a listing from the cache.
type cachedSource struct {
	data  []byte
	entry cacheEntry
}

// cachedSpec is the listing-only spec of tools read from the cache.
func cachedSpec(tools []mcs.Tool, secured bool, data []byte, e cacheEntry) *spec {
	s := &spec{tools: tools, ops: make(map[string]*operation, len(tools)), secured: secured, cached: &cachedSource{data: data, entry: e}}
	for _, t := range tools {
		s.ops[t.Name] = nil
	}
	return s
}

// sameTools reports whether two listings are identical, as the cache
// stores them.
func sameTools(a, b []mcs.Tool) bool {
	ea, errA := json.Marshal(a)
	eb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ea, eb)
}
