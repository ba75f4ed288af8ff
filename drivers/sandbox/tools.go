package sandbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/filetools"
	"github.com/mcs-go/mcs/internal/textcut"
	"github.com/mcs-go/mcs/tools"
)

// maxListEntries is the number of entries list_files returns.
const maxListEntries = 1000

type (
	runCommandArgs struct {
		Command        string  `json:"command" description:"The command, run by /bin/sh -c in /workspace."`
		TimeoutSeconds float64 `json:"timeout_seconds,omitempty" description:"Wall-clock limit in seconds; the command and all its processes are killed when it is reached."`
		Stdin          *string `json:"stdin,omitempty" description:"Text given to the command on its standard input (default: none, end of file)."`
	}
	writeFileArgs struct {
		Path     string `json:"path" description:"File path relative to /workspace."`
		Content  string `json:"content" description:"The content to write."`
		Encoding string `json:"encoding,omitempty" enum:"utf-8,base64" description:"\"utf-8\" (default) writes content as text, \"base64\" decodes it first."`
	}
	readFileArgs struct {
		Path     string `json:"path" description:"File path relative to /workspace."`
		MaxBytes int64  `json:"max_bytes,omitempty" description:"Most bytes to return (default and limit: the output limit of a command)."`
	}
	listFilesArgs struct {
		Path *string `json:"path,omitempty" description:"Directory relative to /workspace; \".\" (the default) is the workspace itself."`
	}
)

// addTools publishes the tools in order.
func (d *ToolDriver) addTools() {
	net := "It has no network."
	if d.cfg.Network {
		net = "It has the network."
	}
	tools.Add(d.toolTable, "run_command",
		fmt.Sprintf("Run a shell command in an isolated sandbox, in /workspace, the only directory that is kept and writable besides a private /tmp. %s "+
			"It is killed with all its processes after %v (timeout_seconds may ask for up to %v), or once it has added more than %s to the disk. "+
			"Returns exit_code, stdout and stderr (each cut to %d bytes, keeping the start and the end), timed_out and truncated, and disk_limit_exceeded when it wrote too much.",
			net, d.cfg.Timeout, d.cfg.MaxTimeout, byteSize(d.cfg.MaxDiskBytes), d.cfg.MaxOutputBytes),
		d.runCommand, tools.WithTitle("Run a command"),
		tools.WithAnnotations(mcs.ToolAnnotations{Destructive: true, OpenWorld: d.cfg.Network}))
	tools.Add(d.toolTable, "write_file",
		"Write a file in /workspace, replacing it if it exists; missing parent directories are created and the file is never left half-written.",
		d.writeFile, tools.WithTitle("Write a file"),
		tools.WithAnnotations(mcs.ToolAnnotations{Destructive: true, Idempotent: true}))
	tools.Add(d.toolTable, "read_file",
		fmt.Sprintf("Read a file of /workspace: text as is, other files base64-encoded; at most %d bytes.", d.cfg.MaxOutputBytes),
		d.readFile, tools.WithTitle("Read a file"),
		tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true, Idempotent: true}))
	tools.Add(d.toolTable, "list_files",
		fmt.Sprintf("List a directory of /workspace, sorted by name, with the type and size of each entry; at most %d entries.", maxListEntries),
		d.listFiles, tools.WithTitle("List files"),
		tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true, Idempotent: true}))
}

func (d *ToolDriver) runCommand(ctx context.Context, args runCommandArgs) (*runResult, error) {
	if strings.TrimSpace(args.Command) == "" {
		return nil, errors.New("command is empty; give a shell command such as \"ls -la\"")
	}
	if strings.IndexByte(args.Command, 0) >= 0 {
		return nil, errors.New("command holds a NUL byte, which no shell command can contain; remove it")
	}
	timeout, notice, err := d.timeoutFor(args.TimeoutSeconds)
	if err != nil {
		return nil, err
	}
	watch, err := watchDisk(d.cfg.Workspace, d.cfg.MaxDiskBytes)
	if err != nil {
		return nil, err
	}
	req := request{command: args.Command, timeout: timeout, abort: watch.abort}
	if args.Stdin != nil {
		req.stdin = *args.Stdin
	}
	res, err := d.be.run(ctx, req)
	exceeded, diskNotice := watch.finish()
	if err != nil {
		return nil, err
	}
	if exceeded {
		res.DiskLimitExceeded = true
		res.Notice = strings.TrimSuffix(diskNotice+"; "+res.Notice, "; ")
	}
	if notice != "" {
		res.Notice = strings.TrimPrefix(res.Notice+"; "+notice, "; ")
	}
	return res, nil
}

// shown is the cleaned form of a model-supplied path, for results.
func (d *ToolDriver) shown(p string) string {
	if c, err := d.root.Clean(p); err == nil {
		return c
	}
	return p
}

func (d *ToolDriver) outcome(p string, err error) (any, error) {
	return confine.Outcome(d.shown(p), err, "call list_files to see what exists")
}

func (d *ToolDriver) writeFile(ctx context.Context, args writeFileArgs) (any, error) {
	data := []byte(args.Content)
	switch strings.ToLower(strings.TrimSpace(args.Encoding)) {
	case "", "utf-8", "utf8", "text":
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(args.Content), ""))
		if err != nil {
			return nil, fmt.Errorf(`content is not valid base64 (%v); send the bytes base64-encoded, or text with encoding "utf-8"`, err)
		}
		data = b
	default:
		return nil, fmt.Errorf(`encoding %q is not supported; use "utf-8" or "base64"`, args.Encoding)
	}
	rel, err := d.root.Resolve(args.Path)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, &confine.Error{Path: args.Path, Kind: confine.KindRootEntry}
	}
	if err := d.checkDisk(int64(len(data))); err != nil {
		return nil, err
	}
	created, err := d.writeAtomic(ctx, rel, data)
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": d.shown(args.Path), "bytes_written": len(data), "created": created}, nil
}

// checkDisk refuses to add n bytes to the workspace's file system when that
// is more than Config.MaxDiskBytes or would leave less than the floor free,
// the bounds a command is held to.
func (d *ToolDriver) checkDisk(n int64) error {
	if n > d.cfg.MaxDiskBytes {
		return fmt.Errorf("content is %s, more than the %s a call may add to the workspace; write it in smaller files", byteSize(n), byteSize(d.cfg.MaxDiskBytes))
	}
	budget, free, _, err := diskBudget(d.cfg.Workspace, d.cfg.MaxDiskBytes)
	if err != nil {
		return err
	}
	if n > budget {
		return fmt.Errorf("content is %s, but the workspace's file system has %s free and must keep %s free; delete files to make room", byteSize(n), byteSize(free), byteSize(free-budget))
	}
	return nil
}

// writeAtomic writes data to a temporary file beside rel and renames it over
// rel, so that nothing is ever half-written. Missing parents are created; new
// entries are given to the sandbox's user.
func (d *ToolDriver) writeAtomic(ctx context.Context, rel string, data []byte) (created bool, err error) {
	r := d.root.OS()
	switch fi, err := d.root.Lstat(rel); {
	case err == nil && fi.IsDir():
		return false, fmt.Errorf("%q is a directory; write to a file path inside it", rel)
	case err == nil && !fi.Mode().IsRegular():
		return false, fmt.Errorf("%q is not a regular file and cannot be written", rel)
	case err == nil:
	case confine.IsNotExist(err):
		created = true
	case confine.IsNotDir(err):
	default:
		return false, err
	}
	if err := d.mkdirAll(path.Dir(rel)); err != nil {
		return false, err
	}
	tmp := path.Join(path.Dir(rel), fmt.Sprintf(".mcs-write-%016x.tmp", rand.Uint64()))
	f, err := r.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, fmt.Errorf("write %q: %w", rel, confine.Classify(err, rel))
	}
	defer func() {
		if err != nil {
			r.Remove(filepath.FromSlash(tmp))
		}
	}()
	_, werr := f.Write(data)
	if werr == nil {
		werr = d.chown(f)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, fmt.Errorf("write %q: %w", rel, d.root.HidePath(werr))
	}
	if err := ctx.Err(); err != nil {
		return false, context.Cause(ctx)
	}
	if err := r.Rename(filepath.FromSlash(tmp), filepath.FromSlash(rel)); err != nil {
		return false, fmt.Errorf("write %q: %w", rel, confine.Classify(err, rel))
	}
	return created, nil
}

// chown gives f to the sandbox's user, when the backend runs commands as
// another host user than the driver's.
func (d *ToolDriver) chown(f *os.File) error {
	if uid, gid := d.be.owner(); uid >= 0 {
		return f.Chown(uid, gid)
	}
	return nil
}

// mkdirAll creates the directory rel and its missing parents, one at a time,
// giving each to the sandbox's user.
func (d *ToolDriver) mkdirAll(rel string) error {
	if rel == "." {
		return nil
	}
	dir := ""
	for elem := range strings.SplitSeq(rel, "/") {
		dir = path.Join(dir, elem)
		fi, err := d.root.Lstat(dir)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			return fmt.Errorf("cannot create directory %q: a file is in the way", dir)
		case !confine.IsNotExist(err):
			return err
		}
		if err := d.root.OS().Mkdir(filepath.FromSlash(dir), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create directory %q: %w", dir, confine.Classify(err, dir))
		}
		if uid, gid := d.be.owner(); uid >= 0 {
			if err := d.root.OS().Lchown(filepath.FromSlash(dir), uid, gid); err != nil {
				return fmt.Errorf("create directory %q: %w", dir, confine.Classify(err, dir))
			}
		}
	}
	return nil
}

func (d *ToolDriver) readFile(_ context.Context, args readFileArgs) (any, error) {
	limit := int64(d.cfg.MaxOutputBytes)
	if args.MaxBytes < 0 {
		return nil, fmt.Errorf("max_bytes %d is negative; omit it for %d", args.MaxBytes, limit)
	}
	if args.MaxBytes > 0 {
		limit = min(limit, args.MaxBytes)
	}
	rel, err := d.root.Resolve(args.Path)
	if err != nil {
		return d.outcome(args.Path, err)
	}
	shown := d.shown(args.Path)
	f, fi, err := d.root.OpenRegular(rel)
	switch {
	case errors.Is(err, confine.ErrIsDirectory):
		return map[string]any{"path": shown, "error": "is a directory", "hint": "call list_files to see its entries"}, nil
	case err != nil:
		return d.outcome(args.Path, err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", shown, d.root.HidePath(err))
	}
	cut := fi.Size() > int64(len(buf))
	res := map[string]any{"path": shown, "size": fi.Size(), "truncated": cut}
	if text := textcut.TrimIncomplete(buf); (len(text) == len(buf) || cut) && utf8.Valid(text) && bytes.IndexByte(text, 0) < 0 {
		res["encoding"], res["content"] = "utf-8", string(text)
	} else {
		res["encoding"], res["content"] = "base64", base64.StdEncoding.EncodeToString(buf)
	}
	if cut {
		res["notice"] = fmt.Sprintf("only the first %d of %d bytes are shown; run a command such as tail or sed to read further", len(buf), fi.Size())
	}
	return res, nil
}

func (d *ToolDriver) listFiles(ctx context.Context, args listFilesArgs) (any, error) {
	p := "."
	if args.Path != nil {
		p = *args.Path
	}
	shown := d.shown(p)
	rel, err := d.root.Resolve(p)
	if err != nil {
		return d.outcome(p, err)
	}
	f, err := d.root.OpenDir(rel)
	switch {
	case errors.Is(err, confine.ErrNotDirectory):
		return map[string]any{"path": shown, "error": "not a directory", "hint": "call read_file for a file"}, nil
	case err != nil:
		return d.outcome(p, err)
	}
	defer f.Close()
	var all []fs.DirEntry
	total := 0
	for {
		batch, err := f.ReadDir(256)
		total += len(batch)
		all = append(all, batch...)
		if len(all) > 4*maxListEntries {
			slices.SortFunc(all, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
			all = all[:maxListEntries]
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %q: %w", shown, d.root.HidePath(err))
		}
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
	}
	slices.SortFunc(all, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	all = all[:min(len(all), maxListEntries)]
	entries := make([]any, 0, len(all))
	for _, de := range all {
		e := map[string]any{"name": de.Name(), "type": filetools.TypeName(de.Type())}
		if info, err := de.Info(); err == nil && info.Mode().IsRegular() {
			e["size"] = info.Size()
		}
		entries = append(entries, e)
	}
	res := map[string]any{"path": shown, "entries": entries, "count": total}
	if total > len(all) {
		res["truncated"] = true
		res["notice"] = fmt.Sprintf("only the first %d of %d entries are listed; run a command such as find to see more", len(all), total)
	}
	return res, nil
}
