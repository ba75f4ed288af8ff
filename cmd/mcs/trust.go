package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcs-go/mcs/stack"
)

// A stack file found in the current directory (a cloned repository's mcs.toml)
// was not chosen by the user: before mcs builds one that starts a program or
// writes outside its directory, the user trusts it. The decision is remembered
// per file location and content in the trust store; a changed file asks again.

// configEnv overrides the directory of the trust store.
const configEnv = "MCS_CONFIG_DIR"

// maxTrustBytes bounds the trust store mcs reads.
const maxTrustBytes = 1 << 20

// trustStore returns the path of the trust store: $MCS_CONFIG_DIR/trusted,
// else mcs/trusted under the user's configuration directory.
func trustStore() (string, error) {
	dir := os.Getenv(configEnv)
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("find the configuration directory for the trusted stack files: %w; set %s", err, configEnv)
		}
		dir = filepath.Join(base, "mcs")
	}
	return filepath.Join(dir, "trusted"), nil
}

// trustEntry is one line of the trust store: the SHA-256 of a stack file's
// content and its absolute path.
type trustEntry struct{ sum, path string }

// readTrust reads the trust store; a missing store is empty, a malformed line
// is skipped.
func readTrust() ([]trustEntry, error) {
	p, err := trustStore()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the trusted stack files: %w", err)
	}
	defer f.Close()
	var out []trustEntry
	sc := bufio.NewScanner(io.LimitReader(f, maxTrustBytes))
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), " ")
		if ok && len(sum) == sha256.Size*2 && filepath.IsAbs(path) {
			out = append(out, trustEntry{sum, path})
		}
	}
	return out, sc.Err()
}

// writeTrust replaces the trust store with entries: a new file, readable by
// the user only, renamed over the old one, so that a reader never sees half of
// it. Two runs that change it at once may lose one of the changes.
func writeTrust(entries []trustEntry) error {
	p, err := trustStore()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("save the trusted stack files: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".trusted-*")
	if err != nil {
		return fmt.Errorf("save the trusted stack files: %w", err)
	}
	defer os.Remove(f.Name()) // after the rename: nothing to remove
	var b strings.Builder
	b.WriteString("# stack files mcs builds without asking: SHA-256 of the content, path; see mcs trust --help\n")
	for _, e := range entries {
		b.WriteString(e.sum + " " + e.path + "\n")
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(b.String())
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		return fmt.Errorf("save the trusted stack files: %w", err)
	}
	return nil
}

// stackFile is a stack file read for a trust decision.
type stackFile struct {
	name string // as given
	abs  string // absolute, symbolic links resolved
	sum  string // SHA-256 of data, hex
	data []byte
}

// readStackFile reads the stack file at name.
func readStackFile(name string) (*stackFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("stack: open the stack file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, stack.MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("stack: read %s: %w", name, err)
	}
	if len(data) > stack.MaxFileBytes {
		return nil, fmt.Errorf("stack: %s is larger than %d bytes; a stack file is a short declaration, check the path", name, stack.MaxFileBytes)
	}
	abs, err := resolvePath(name)
	if err != nil {
		return nil, fmt.Errorf("stack: %s: %w", name, err)
	}
	sum := sha256.Sum256(data)
	return &stackFile{name: name, abs: abs, sum: hex.EncodeToString(sum[:]), data: data}, nil
}

// trusted reports whether the trust store holds the file's path and content.
func (f *stackFile) trusted() (bool, error) {
	entries, err := readTrust()
	if err != nil {
		return false, err
	}
	return slices.Contains(entries, trustEntry{f.sum, f.abs}), nil
}

// trust records the file's path and content in the trust store, in place of
// what it held for that path.
func (f *stackFile) trust() error {
	entries, err := readTrust()
	if err != nil {
		return err
	}
	entries = slices.DeleteFunc(entries, func(e trustEntry) bool { return e.path == f.abs })
	return writeTrust(append(entries, trustEntry{f.sum, f.abs}))
}

// untrustedEffects returns the effects of st that need the user's trust: every
// program it starts, every file it writes outside the directory of the stack
// file (symbolic links resolved; a path that cannot be resolved counts as
// outside), and every effect mcs cannot judge.
func untrustedEffects(st *stack.Stack, file string) []stack.Effect {
	dir, err := resolvePath(filepath.Dir(file))
	var out []stack.Effect
	for _, e := range st.Effects() {
		if e.Kind == stack.EffectWrite && err == nil && inside(dir, e.Path) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// inside reports whether path, symbolic links resolved, is dir or under it.
func inside(dir, path string) bool {
	p, err := resolvePath(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolvePath returns path absolute with its symbolic links resolved; the part
// that does not exist yet is joined to its deepest existing parent. It fails
// for a dangling symbolic link, whose target a write would create.
func resolvePath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	cur, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		if _, err := os.Lstat(cur); err == nil {
			return "", fmt.Errorf("%s is a symbolic link that cannot be resolved", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// showEffects writes the effects, one a line, made safe for a terminal.
func showEffects(w io.Writer, effects []stack.Effect) {
	for _, e := range effects {
		fmt.Fprintln(w, safeText("  - "+e.String()))
	}
}

// checkTrust decides whether mcs may build the stack st, parsed from f, which
// it found in the current directory: yes when it starts no program and writes
// nothing outside its directory, or when the user trusted this file with this
// content; else the effects are shown on stderr and, when the user is at a
// terminal, asked about once (a yes is remembered). Without a terminal, the
// stack is refused.
func (a *app) checkTrust(ctx context.Context, st *stack.Stack, f *stackFile) error {
	effects := untrustedEffects(st, f.name)
	if len(effects) == 0 {
		return nil
	}
	ok, err := f.trusted()
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	refusal := fmt.Sprintf("%s was found in the current directory and starts programs, sends credentials or writes outside its directory, and you have not trusted it; nothing was started. Read it, then run mcs trust (mcs remembers this content), or name it with --stack %s", f.name, f.name)
	if a.completing {
		return errors.New(refusal)
	}
	fmt.Fprintf(a.stderr, "mcs: %s (%s), found in the current directory, would:\n", f.name, f.abs)
	showEffects(a.stderr, effects)
	if a.ask != nil || !a.stdinTTY {
		return errors.New(refusal)
	}
	yes, err := a.confirm(ctx, "Trust this file and go on? mcs remembers the answer for this content [y/N] ")
	if err != nil {
		return err
	}
	if !yes {
		return fmt.Errorf("%s is not trusted; nothing was started", f.name)
	}
	if err := f.trust(); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "mcs: trusted %s; a change to it asks again\n", f.name)
	return nil
}

// confirm asks question on stderr and reads the answer from stdin; only y or
// yes is a yes. The read ends with ctx.
func (a *app) confirm(ctx context.Context, question string) (bool, error) {
	fmt.Fprint(a.stderr, question)
	ch := make(chan string, 1)
	go func() {
		line, _ := a.stdin.ReadString('\n')
		ch <- line
	}()
	var line string
	select {
	case line = <-ch:
	case <-ctx.Done():
		fmt.Fprintln(a.stderr)
		return false, context.Cause(ctx)
	}
	if !a.stdinTTY {
		fmt.Fprintln(a.stderr)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
