// Package sqlite is the SQLite token store of package auth: an embedded
// database file, through a pure-Go SQLite (no cgo), shared safely by the
// processes of one machine. Importing it registers the URL schemes "sqlite:PATH"
// and "sqlite://PATH" with [auth.OpenStore]; [Open] opens a file by path.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcs-go/mcs/internal/sqlitedb"
	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	auth.RegisterStoreScheme("sqlite", openURL)
}

func openURL(_ context.Context, u string) (auth.TokenStore, error) {
	_, rest, _ := strings.Cut(u, ":")
	path := strings.TrimPrefix(rest, "//")
	if path == "" {
		return nil, fmt.Errorf("auth: token store URL %q names no file (want sqlite:PATH)", u)
	}
	return Open(path)
}

// opTimeout bounds one operation of the store (the TokenStore methods take no
// context).
const opTimeout = 15 * time.Second

const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS mcs_tokens (
	key    TEXT PRIMARY KEY,
	value  TEXT NOT NULL,
	expiry INTEGER NOT NULL -- Unix microseconds; 0: does not expire
);
CREATE TABLE IF NOT EXISTS mcs_token_leases (
	key    TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	until  INTEGER NOT NULL -- Unix microseconds
);
`

// Store is the SQLite [auth.TokenStore]. It is an [auth.TokenLocker]: its
// leases are rows of the table mcs_token_leases, taken with one atomic upsert,
// so that of the processes refreshing one token at once exactly one does. Safe
// for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	load *sql.Stmt
}

var (
	_ auth.TokenStore  = (*Store)(nil)
	_ auth.TokenLocker = (*Store)(nil)
)

// Open opens (creating when missing) the SQLite database at path as a token
// store. A new file is created with mode 0600; the database runs in WAL mode
// with a busy timeout of 10 s. A path that is a directory, or a file that is
// not an SQLite database, is an error that says so. Close the store when done.
func Open(path string) (*Store, error) {
	db, abs, err := sqlitedb.Open("auth", path, 0)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: abs}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	s.load, err = db.Prepare(`SELECT value, expiry FROM mcs_tokens WHERE key = ?1`)
	if err != nil {
		db.Close()
		return nil, sqlitedb.WrapOpen("auth", abs, sqlitedb.DefaultBusyTimeout, err)
	}
	return s, nil
}

func (s *Store) migrate() error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return sqlitedb.WrapOpen("auth", s.path, sqlitedb.DefaultBusyTimeout, err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return sqlitedb.WrapOpen("auth", s.path, sqlitedb.DefaultBusyTimeout, err)
	}
	if version > schemaVersion {
		return fmt.Errorf("auth: open sqlite %s: schema version %d is newer than this program's (%d); use a newer version of the program", s.path, version, schemaVersion)
	}
	// The approvals store keeps its own version in user_version when it shares
	// the file; the token tables are created whenever missing.
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return sqlitedb.WrapOpen("auth", s.path, sqlitedb.DefaultBusyTimeout, err)
	}
	return tx.Commit()
}

func (s *Store) wrap(op string, err error) error {
	return sqlitedb.Wrap("auth", op, s.path, sqlitedb.DefaultBusyTimeout, err)
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Load returns the entry under key, expired or not.
func (s *Store) Load(key string) (string, time.Time, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var value string
	var exp int64
	err := s.load.QueryRowContext(ctx, key).Scan(&value, &exp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, s.wrap("load a token", err)
	}
	return value, fromMicros(exp), true, nil
}

// Save stores value under key with expiry in one statement.
func (s *Store) Save(key, value string, expiry time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	_, err := s.db.ExecContext(ctx, `INSERT INTO mcs_tokens (key, value, expiry) VALUES (?1, ?2, ?3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, expiry = excluded.expiry`, key, value, micros(expiry))
	if err != nil {
		return s.wrap("save a token", err)
	}
	return nil
}

// Delete removes key.
func (s *Store) Delete(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM mcs_tokens WHERE key = ?1`, key); err != nil {
		return s.wrap("delete a token", err)
	}
	return nil
}

// Lock takes the lease on key for ttl: it inserts the lease row, or takes over
// one whose time has run out, in one statement, and polls (from 2 ms, doubling
// to 50 ms) while another holder has it, bounded by ctx.
func (s *Store) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	holder := rand.Text()
	wait := 2 * time.Millisecond
	for {
		now := time.Now()
		res, err := s.db.ExecContext(ctx, `INSERT INTO mcs_token_leases (key, holder, until) VALUES (?1, ?2, ?3)
			ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, until = excluded.until
			WHERE mcs_token_leases.until < ?4`, key, holder, micros(now.Add(ttl)), micros(now))
		if err != nil {
			return nil, s.wrap("take the refresh lease", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return func() {
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				s.db.ExecContext(ctx, `DELETE FROM mcs_token_leases WHERE key = ?1 AND holder = ?2`, key, holder)
			}, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		}
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// Close closes the database.
func (s *Store) Close() error {
	s.load.Close()
	return s.db.Close()
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}
