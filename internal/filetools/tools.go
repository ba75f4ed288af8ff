package filetools

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/textcut"
	"github.com/mcs-go/mcs/tools"
)

// Limits of the listing tools.
const (
	maxListEntries   = 1000    // entries list_directory returns
	maxSearchResults = 1000    // matches search_files returns
	maxSearchVisits  = 100_000 // entries search_files looks at
	maxMoveEntries   = 100_000 // entries move_file checks below a directory
)

// toolDef is one tool of the driver: its description, whether it writes, and how
// it is registered as a typed tool.
type toolDef struct {
	name, title, desc string
	writes            bool
	annotations       mcs.ToolAnnotations
	add               func(t *tools.Table, d *Driver, def *toolDef)
}

// typed registers run, a method of the driver, as the typed tool def.
func typed[In any](run func(*Driver, context.Context, In) (any, error)) func(*tools.Table, *Driver, *toolDef) {
	return func(t *tools.Table, d *Driver, def *toolDef) {
		tools.Add(t, def.name, def.desc, func(ctx context.Context, in In) (any, error) { return run(d, ctx, in) },
			tools.WithTitle(def.title), tools.WithAnnotations(def.annotations))
	}
}

// The tools' arguments. Each exported field is a parameter (see package tools).
type (
	listDirectoryArgs struct {
		Path *string `json:"path,omitempty" description:"Directory path relative to the root; \".\" (the default) is the root itself."`
	}
	readFileArgs struct {
		Path     string `json:"path" description:"File path relative to the root."`
		Encoding string `json:"encoding,omitempty" enum:"utf-8,base64" description:"\"utf-8\" (default) for text, \"base64\" for the raw bytes of any file."`
		Offset   uint64 `json:"offset,omitempty" description:"Byte offset to start reading at (default 0)."`
	}
	searchFilesArgs struct {
		Path    *string `json:"path,omitempty" description:"Directory to search, relative to the root; \".\" (the default) is the root."`
		Pattern string  `json:"pattern" description:"Glob pattern: \"*\" any characters but \"/\", \"?\" one character, \"[abc]\" a class, \"**\" any directories."`
	}
	pathArgs struct {
		Path string `json:"path" description:"Path relative to the root."`
	}
	writeFileArgs struct {
		Path     string `json:"path" description:"File path relative to the root."`
		Content  string `json:"content" description:"The content to write."`
		Encoding string `json:"encoding,omitempty" enum:"utf-8,base64" description:"\"utf-8\" (default) writes content as text, \"base64\" decodes it first."`
	}
	makeDirectoryArgs struct {
		Path string `json:"path" description:"Directory path relative to the root."`
	}
	moveFileArgs struct {
		From string `json:"from" description:"Existing path relative to the root."`
		To   string `json:"to" description:"New path relative to the root."`
	}
)

// toolDefs returns every tool of the driver, in the published order.
func toolDefs(maxRead int64) []*toolDef {
	return []*toolDef{
		{
			name:        "list_directory",
			title:       "List a directory",
			desc:        fmt.Sprintf("List the entries of a directory, sorted by name, with their type (file, directory, symlink, other) and size in bytes. At most %d entries are returned.", maxListEntries),
			annotations: mcs.ToolAnnotations{ReadOnly: true, Idempotent: true},
			add:         typed((*Driver).listDirectory),
		},
		{
			name:  "read_file",
			title: "Read a file",
			desc: fmt.Sprintf("Read a file. UTF-8 text is returned as content; a binary file is reported as binary with its size unless encoding is \"base64\". "+
				"At most %d bytes are returned per call: a longer file is cut, and the result gives next_offset, to pass as offset to read on.", maxRead),
			annotations: mcs.ToolAnnotations{ReadOnly: true, Idempotent: true},
			add:         typed((*Driver).readFile),
		},
		{
			name:  "search_files",
			title: "Search files by name",
			desc: fmt.Sprintf(`Find files and directories below a directory whose path matches a glob pattern, recursively. A pattern without "/" (such as "*.txt") matches names at any depth; `+
				`a pattern with "/" matches the path relative to the directory, "**" standing for any number of directories (such as "src/**/*.go"). At most %d results; the result says when it was cut.`, maxSearchResults),
			annotations: mcs.ToolAnnotations{ReadOnly: true, Idempotent: true},
			add:         typed((*Driver).searchFiles),
		},
		{
			name:        "file_info",
			title:       "File information",
			desc:        "Report the type, size, permissions and modification time of a file or directory; for a symbolic link also its target.",
			annotations: mcs.ToolAnnotations{ReadOnly: true, Idempotent: true},
			add:         typed((*Driver).fileInfo),
		},
		{
			writes:      true,
			name:        "write_file",
			title:       "Write a file",
			desc:        "Write content to a file, replacing it if it exists. Missing parent directories are created; the file is replaced atomically, so it is never left half-written. Reports the bytes written.",
			annotations: mcs.ToolAnnotations{Destructive: true, Idempotent: true},
			add:         typed((*Driver).writeFile),
		},
		{
			writes:      true,
			name:        "make_directory",
			title:       "Create a directory",
			desc:        "Create a directory and any missing parent directories. An existing directory is not an error.",
			annotations: mcs.ToolAnnotations{Idempotent: true},
			add:         typed((*Driver).makeDirectory),
		},
		{
			writes: true,
			name:   "move_file",
			title:  "Move or rename",
			desc: fmt.Sprintf("Move or rename a file or directory. The destination must not exist; its missing parent directories are created. "+
				"A symbolic link, moved alone or inside a directory, must still lead inside the root from its new place (a relative link is followed from where it lies), otherwise nothing is moved; "+
				"a directory with more than %d entries at all levels cannot be checked, so it is not moved.", maxMoveEntries),
			annotations: mcs.ToolAnnotations{Destructive: true},
			add:         typed((*Driver).moveFile),
		},
		{
			writes:      true,
			name:        "delete_file",
			title:       "Delete a file",
			desc:        "Delete a file, a symbolic link (not its target) or an empty directory.",
			annotations: mcs.ToolAnnotations{Destructive: true, Idempotent: true},
			add:         typed((*Driver).deleteFile),
		},
	}
}

// TypeName names the type of a file mode as the file tools report it: "file",
// "directory", "symlink" or "other".
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// displayPath is the cleaned form of a model-supplied path, for results.
func (d *Driver) displayPath(p string) string {
	c, err := d.tree.Clean(p)
	if err != nil {
		return p
	}
	return c
}

func (d *Driver) listDirectory(ctx context.Context, args listDirectoryArgs) (any, error) {
	p := "."
	if args.Path != nil {
		p = *args.Path
	}
	shown := d.displayPath(p)
	rel, err := d.tree.Resolve(p)
	if err != nil {
		return outcome(shown, err)
	}
	f, err := d.tree.OpenDir(rel)
	switch {
	case errors.Is(err, confine.ErrNotDirectory):
		return map[string]any{"path": shown, "error": "not a directory", "hint": "call read_file or file_info for a file"}, nil
	case err != nil:
		return outcome(shown, err)
	}
	defer f.Close()
	// Keep the first maxListEntries names in order without holding a huge
	// directory in memory: read in batches, trim whenever the buffer doubles.
	var kept []fs.DirEntry
	total := 0
	for {
		batch, err := f.ReadDir(256)
		total += len(batch)
		kept = append(kept, batch...)
		if len(kept) > 2*d.limits.ListEntries {
			kept = firstByName(kept, d.limits.ListEntries)
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read directory %q: %w", shown, d.tree.HidePath(err))
		}
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
	}
	kept = firstByName(kept, d.limits.ListEntries)
	entries := make([]any, 0, len(kept))
	for _, de := range kept {
		e := map[string]any{"name": de.Name(), "type": TypeName(de.Type())}
		if info, err := de.Info(); err == nil && info.Mode().IsRegular() {
			e["size"] = info.Size()
		}
		if de.Type()&fs.ModeSymlink != 0 {
			d.describeLink(e, path.Join(rel, de.Name()))
		}
		entries = append(entries, e)
	}
	res := map[string]any{"path": shown, "entries": entries, "count": total}
	if total > len(kept) {
		res["truncated"] = true
		res["notice"] = fmt.Sprintf("only the first %d of %d entries are listed; use search_files to find specific names", len(kept), total)
	}
	return res, nil
}

// firstByName sorts entries by name and keeps the first n.
func firstByName(entries []fs.DirEntry, n int) []fs.DirEntry {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if len(entries) > n {
		clear(entries[n:])
		entries = entries[:n]
	}
	return entries
}

// describeLink adds the target of the symbolic link at rel to e: its root-relative
// path when it lies inside the root, a note otherwise.
func (d *Driver) describeLink(e map[string]any, rel string) {
	target, err := d.tree.Resolve(rel)
	var ce *confine.Error
	switch {
	case errors.As(err, &ce):
		e["note"] = "link target refused: " + string(ce.Kind)
	case err != nil:
		e["note"] = "link target unavailable"
	default:
		e["target"] = target
		if _, err := d.tree.Stat(target); err != nil {
			e["note"] = "link target missing"
		}
	}
}

func (d *Driver) readFile(_ context.Context, args readFileArgs) (any, error) {
	p := args.Path
	enc, err := encodingArg(args.Encoding)
	if err != nil {
		return nil, err
	}
	if args.Offset > math.MaxInt64 {
		return nil, fmt.Errorf("offset %d is too large", args.Offset)
	}
	offset := int64(args.Offset)
	shown := d.displayPath(p)
	rel, err := d.tree.Resolve(p)
	if err != nil {
		return outcome(shown, err)
	}
	f, fi, err := d.tree.OpenRegular(rel)
	switch {
	case errors.Is(err, confine.ErrIsDirectory):
		return map[string]any{"path": shown, "error": "is a directory", "hint": "call list_directory to see its entries"}, nil
	case err != nil:
		return outcome(shown, err)
	}
	defer f.Close()
	size := fi.Size()
	if offset > size {
		return nil, fmt.Errorf("offset %d is past the end of %q, which has %d bytes", offset, shown, size)
	}
	n := min(d.cfg.MaxReadBytes, size-offset)
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read %q: %w", shown, d.tree.HidePath(err))
	}
	buf = buf[:got]
	if enc == "utf-8" {
		if offset > 0 {
			// Start on a character boundary.
			skip := 0
			for skip < len(buf) && skip < utf8.UTFMax-1 && !utf8.RuneStart(buf[skip]) {
				skip++
			}
			buf, offset = buf[skip:], offset+int64(skip)
		}
		if offset+int64(len(buf)) < size {
			buf = textcut.TrimIncomplete(buf)
		}
		if bytes.IndexByte(buf, 0) >= 0 || !utf8.Valid(buf) {
			return map[string]any{
				"path":   shown,
				"size":   size,
				"binary": true,
				"hint":   fmt.Sprintf(`this is a binary file of %d bytes; call read_file with encoding "base64" to read its bytes`, size),
			}, nil
		}
	}
	res := map[string]any{"path": shown, "size": size, "encoding": enc, "offset": offset, "truncated": false}
	if enc == "base64" {
		res["content"] = base64.StdEncoding.EncodeToString(buf)
	} else {
		res["content"] = string(buf)
	}
	if end := offset + int64(len(buf)); end < size {
		res["truncated"] = true
		res["next_offset"] = end
		res["notice"] = fmt.Sprintf("[cut: bytes %d to %d of %d shown; call read_file with offset %d to read on]", offset, end, size, end)
	}
	return res, nil
}

func encodingArg(arg string) (string, error) {
	switch e := strings.ToLower(strings.TrimSpace(arg)); e {
	case "", "utf-8", "utf8", "text":
		return "utf-8", nil
	case "base64":
		return "base64", nil
	default:
		return "", fmt.Errorf(`encoding %q is not supported; use "utf-8" or "base64"`, e)
	}
}

func (d *Driver) searchFiles(ctx context.Context, args searchFilesArgs) (any, error) {
	p := "."
	if args.Path != nil {
		p = *args.Path
	}
	pattern := args.Pattern
	m, err := compileGlob(pattern)
	if err != nil {
		return nil, err
	}
	shown := d.displayPath(p)
	rel, err := d.tree.Resolve(p)
	if err != nil {
		return outcome(shown, err)
	}
	fi, err := d.tree.Stat(rel)
	if err != nil {
		return outcome(shown, err)
	}
	if !fi.IsDir() {
		return map[string]any{"path": shown, "error": "not a directory", "hint": "search_files searches below a directory"}, nil
	}
	matches := []any{}
	visits := 0
	truncated := ""
	walkErr := fs.WalkDir(d.tree.FS(), rel, func(name string, de fs.DirEntry, err error) error {
		if err != nil {
			if name == rel {
				return err
			}
			return nil // an unreadable directory: skip it
		}
		if name == rel {
			return nil
		}
		visits++
		if visits%256 == 0 {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		if visits > d.limits.SearchVisits {
			truncated = fmt.Sprintf("the search stopped after looking at %d entries; search a smaller directory", d.limits.SearchVisits)
			return fs.SkipAll
		}
		under := name
		if rel != "." {
			under = name[len(rel)+1:]
		}
		if !m.match(under) {
			return nil
		}
		if len(matches) == d.limits.SearchResults {
			truncated = fmt.Sprintf("only the first %d matches are listed; use a narrower pattern or directory", d.limits.SearchResults)
			return fs.SkipAll
		}
		e := map[string]any{"path": name, "type": TypeName(de.Type())}
		if de.Type().IsRegular() {
			if info, err := de.Info(); err == nil {
				e["size"] = info.Size()
			}
		}
		matches = append(matches, e)
		return nil
	})
	if walkErr != nil {
		return nil, fmt.Errorf("search %q: %w", shown, confine.Classify(d.tree.HidePath(walkErr), p))
	}
	res := map[string]any{"path": shown, "pattern": pattern, "matches": matches, "count": len(matches), "truncated": truncated != ""}
	if truncated != "" {
		res["notice"] = truncated
	}
	return res, nil
}

func (d *Driver) fileInfo(_ context.Context, args pathArgs) (any, error) {
	p := args.Path
	shown := d.displayPath(p)
	rel, err := d.tree.ResolveNoFollow(p)
	if err != nil {
		return outcome(shown, err)
	}
	fi, err := d.tree.Lstat(rel)
	if err != nil {
		return outcome(shown, err)
	}
	res := map[string]any{"path": shown}
	if fi.Mode()&fs.ModeSymlink != 0 {
		res["symlink"] = true
		d.describeLink(res, rel)
		if target, ok := res["target"].(string); ok {
			if tfi, err := d.tree.Stat(target); err == nil {
				fi = tfi
			}
		}
	}
	res["type"] = TypeName(fi.Mode())
	if fi.Mode().IsRegular() {
		res["size"] = fi.Size()
	}
	res["mode"] = fi.Mode().Perm().String()
	res["modified"] = fi.ModTime().UTC().Format(time.RFC3339)
	return res, nil
}

func (d *Driver) writeFile(ctx context.Context, args writeFileArgs) (any, error) {
	p := args.Path
	content := args.Content
	enc, err := encodingArg(args.Encoding)
	if err != nil {
		return nil, err
	}
	data := []byte(content)
	if enc == "base64" {
		data, err = decodeBase64(content)
		if err != nil {
			return nil, err
		}
	}
	rel, err := d.tree.Resolve(p)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, &confine.Error{Path: p, Kind: confine.KindRootEntry}
	}
	created, err := d.writeAtomic(ctx, rel, data)
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": d.displayPath(p), "bytes_written": len(data), "created": created}, nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return nil, fmt.Errorf(`content is not valid base64 (%v); send the bytes base64-encoded, or text with encoding "utf-8"`, err)
}

func (d *Driver) makeDirectory(_ context.Context, args makeDirectoryArgs) (any, error) {
	p := args.Path
	rel, err := d.tree.Resolve(p)
	if err != nil {
		return nil, err
	}
	shown := d.displayPath(p)
	if fi, err := d.tree.Stat(rel); err == nil {
		if !fi.IsDir() {
			return nil, fmt.Errorf("%q exists and is not a directory", shown)
		}
		return map[string]any{"path": shown, "created": false}, nil
	}
	if err := d.mkdirAll(rel); err != nil {
		return nil, err
	}
	return map[string]any{"path": shown, "created": true}, nil
}

// mkdirAll creates the directory rel and its parents, explaining the usual failure.
func (d *Driver) mkdirAll(rel string) error {
	if rel == "." {
		return nil
	}
	err := confine.Classify(d.tree.MkdirAll(rel, 0o755), rel)
	if err == nil {
		return nil
	}
	var ce *confine.Error
	if errors.As(err, &ce) {
		return err
	}
	if confine.IsNotDir(err) || errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot create directory %q: a file is in the way", rel)
	}
	return fmt.Errorf("create directory %q: %w", rel, err)
}

func (d *Driver) moveFile(ctx context.Context, args moveFileArgs) (any, error) {
	from, to := args.From, args.To
	shownFrom, shownTo := d.displayPath(from), d.displayPath(to)
	src, err := d.tree.ResolveNoFollow(from)
	if err != nil {
		return outcome(shownFrom, err)
	}
	dst, err := d.tree.ResolveNoFollow(to)
	if err != nil {
		return nil, err
	}
	switch {
	case src == ".":
		return nil, &confine.Error{Path: from, Kind: confine.KindRootEntry}
	case dst == ".":
		return nil, &confine.Error{Path: to, Kind: confine.KindRootEntry}
	}
	fi, err := d.tree.Lstat(src)
	if err != nil {
		return outcome(shownFrom, err)
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return nil, fmt.Errorf("cannot move %q into itself (%q)", shownFrom, shownTo)
	}
	if _, err := d.tree.Lstat(dst); err == nil {
		return nil, fmt.Errorf("destination %q exists; choose another name, or delete it first", shownTo)
	}
	if err := d.checkMovedLinks(ctx, from, src, dst, fi); err != nil {
		return nil, err
	}
	if err := d.mkdirAll(path.Dir(dst)); err != nil {
		return nil, err
	}
	if err := d.tree.Rename(src, dst); err != nil {
		return nil, fmt.Errorf("move %q to %q: %w", shownFrom, shownTo, confine.Classify(err, to))
	}
	return map[string]any{"from": shownFrom, "to": shownTo, "moved": true}, nil
}

// checkMovedLinks refuses the move of the resolved path src, whose FileInfo is
// fi, to the resolved path dst when a symbolic link moved with it would lead
// outside the root from its new place (see confine.Root.CheckMovedLink): src
// itself when it is a link, every link at any depth below it when it is a
// directory. The directory is walked without following links, reading entries in
// batches; one with more than limits.moveEntries entries at all levels, or with a
// subdirectory that cannot be read, is refused unchecked. from is the
// model-supplied source path. Nothing is changed.
func (d *Driver) checkMovedLinks(ctx context.Context, from, src, dst string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return d.checkMovedLink(from, src, dst)
	case !fi.IsDir():
		return nil
	}
	w := moveWalk{d: d, from: from, src: src, dst: dst, dirs: []string{src}}
	for len(w.dirs) > 0 {
		dir := w.dirs[len(w.dirs)-1]
		w.dirs = w.dirs[:len(w.dirs)-1]
		if err := w.checkDir(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}

// checkMovedLink checks the symbolic link link, which the move of from would
// place at at; an error other than a refusal says that the link could not be
// checked.
func (d *Driver) checkMovedLink(from, link, at string) error {
	err := d.tree.CheckMovedLink(from, link, at)
	var ce *confine.Error
	if err == nil || errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("cannot check where the symbolic link %q would lead once moved, so nothing was moved: %w", link, err)
}

// moveWalk is the state of the walk of checkMovedLinks.
type moveWalk struct {
	d              *Driver
	from, src, dst string
	dirs           []string // directories still to read
	entries        int      // entries seen so far
}

// checkDir checks the symbolic links among the entries of the directory dir,
// below src, and queues its subdirectories.
func (w *moveWalk) checkDir(ctx context.Context, dir string) error {
	shown := w.d.displayPath(w.from)
	unreadable := func(err error) error {
		err = confine.Classify(w.d.tree.HidePath(err), w.from)
		var ce *confine.Error
		if errors.As(err, &ce) {
			return err
		}
		return fmt.Errorf("cannot check the symbolic links in %q before moving it, so nothing was moved: %w", shown, err)
	}
	f, err := w.d.tree.OpenDir(dir)
	if err != nil {
		return unreadable(err)
	}
	defer f.Close()
	for {
		batch, err := f.ReadDir(256)
		for _, de := range batch {
			w.entries++
			if w.entries > w.d.limits.MoveEntries {
				return fmt.Errorf("cannot move %q: it holds more than %d entries, too many to check that the symbolic links in it still lead inside the root once moved; nothing was moved: move its subdirectories one at a time", shown, w.d.limits.MoveEntries)
			}
			switch {
			case de.IsDir():
				w.dirs = append(w.dirs, path.Join(dir, de.Name()))
			case de.Type()&fs.ModeSymlink != 0:
				name := path.Join(dir, de.Name())
				if err := w.d.checkMovedLink(w.from, name, w.dst+name[len(w.src):]); err != nil {
					return err
				}
			}
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			return nil
		}
		if err != nil {
			return unreadable(err)
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
	}
}

func (d *Driver) deleteFile(_ context.Context, args pathArgs) (any, error) {
	p := args.Path
	shown := d.displayPath(p)
	rel, err := d.tree.ResolveNoFollow(p)
	if err != nil {
		return outcome(shown, err)
	}
	if rel == "." {
		return nil, &confine.Error{Path: p, Kind: confine.KindRootEntry}
	}
	fi, err := d.tree.Lstat(rel)
	if err != nil {
		return outcome(shown, err)
	}
	if err := d.tree.Remove(rel); err != nil {
		// ENOTEMPTY, and its Windows counterpart, match fs.ErrExist.
		if fi.IsDir() && errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("directory %q is not empty; delete its entries first", shown)
		}
		return nil, fmt.Errorf("delete %q: %w", shown, confine.Classify(err, p))
	}
	return map[string]any{"path": shown, "deleted": true, "type": TypeName(fi.Mode())}, nil
}
