// Package sqlitedb opens the SQLite database files of this module's stores the
// one way they all need: through the pure-Go modernc.org/sqlite (no cgo), a new
// file created with mode 0600 before SQLite opens it, write-ahead logging, a
// busy timeout, synchronous commits, and every transaction taking the write
// lock first (BEGIN IMMEDIATE), so that several processes can share one file.
package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// DefaultBusyTimeout is how long a statement waits for another connection's (or
// process's) write lock before it fails with "database is locked", when Open is
// given no timeout.
const DefaultBusyTimeout = 10 * time.Second

// Open opens (creating when missing) the SQLite database at path and returns it
// with its absolute path. prefix starts every error ("approvals", "auth"); busy
// is the busy timeout (0: [DefaultBusyTimeout]).
//
// A new file is created with mode 0600 before SQLite opens it, so that it is
// never readable by others; the write-ahead log and shared-memory files SQLite
// makes beside it take the same mode. A path that is a directory, or a file
// that is not an SQLite database, is an error that says so.
func Open(prefix, path string, busy time.Duration) (*sql.DB, string, error) {
	if path == "" {
		return nil, "", fmt.Errorf("%s: open sqlite: empty path (give the database file's path)", prefix)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", fmt.Errorf("%s: open sqlite %s: %w", prefix, path, err)
	}
	if err := createPrivate(prefix, abs); err != nil {
		return nil, "", err
	}
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Set("_busy_timeout", fmt.Sprint(busy.Milliseconds()))
	q.Add("_pragma", "synchronous(FULL)")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, "", fmt.Errorf("%s: open sqlite %s: %w", prefix, abs, err)
	}
	if err := useWAL(db, busy); err != nil {
		db.Close()
		return nil, "", WrapOpen(prefix, abs, busy, err)
	}
	return db, abs, nil
}

// createPrivate creates the file at path with mode 0600 when it does not exist,
// and rejects a directory.
func createPrivate(prefix, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if errors.Is(err, syscall.EISDIR) {
			return fmt.Errorf("%s: open sqlite %s: the path is a directory; give the path of a database file (it is created when missing)", prefix, path)
		}
		return fmt.Errorf("%s: open sqlite %s: %w", prefix, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: open sqlite %s: %w", prefix, path, err)
	}
	return nil
}

// useWAL puts the database in WAL mode, which the file keeps for every later
// connection. Switching a new file needs its exclusive lock, and two connections
// that both hold the shared lock while waiting for it would wait for each other
// until the busy timeout ran out; so the switch does not wait for the lock
// (busy_timeout 0): it fails at once, releasing what it held, and is tried again
// after a short random pause, for at most the busy timeout.
func useWAL(db *sql.DB, busy time.Duration) error {
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil {
		return err
	}
	defer conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, busy.Milliseconds()))
	deadline := time.Now().Add(busy)
	for {
		var mode string
		err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("the database stays in journal mode %q, not WAL (is it on a file system without shared memory?)", mode)
		case !IsBusy(err) || time.Now().After(deadline):
			return err
		}
		time.Sleep(time.Duration(1+rand.IntN(20)) * time.Millisecond)
	}
}

// IsBusy reports whether err is SQLite's "database is locked".
func IsBusy(err error) bool {
	return strings.Contains(err.Error(), "database is locked") || strings.Contains(err.Error(), "SQLITE_BUSY")
}

// WrapOpen wraps an error met while opening the database at path: a file that
// is not a database and a lock that outlasted the busy timeout are explained.
func WrapOpen(prefix, path string, busy time.Duration, err error) error {
	if strings.Contains(err.Error(), "not a database") || strings.Contains(err.Error(), "SQLITE_NOTADB") {
		return fmt.Errorf("%s: open sqlite %s: the file is not an SQLite database (give another path, or move the file away): %w", prefix, path, err)
	}
	return Wrap(prefix, "open sqlite "+path, path, busy, err)
}

// Wrap wraps a database error of op on the database at path, explaining a lock
// that outlasted the busy timeout.
func Wrap(prefix, op, path string, busy time.Duration, err error) error {
	if IsBusy(err) {
		return fmt.Errorf("%s: %s: the database %s stayed locked by another connection for over %s (a long transaction in another process?); try again: %w", prefix, op, path, busy, err)
	}
	return fmt.Errorf("%s: %s: %w", prefix, op, err)
}
