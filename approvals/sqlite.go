package approvals

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// sqliteBusyTimeout is how long a statement waits for another connection's (or
// process's) write lock before it fails with "database is locked".
const sqliteBusyTimeout = 10 * time.Second

// sqliteVersion is the schema version kept in PRAGMA user_version.
const sqliteVersion = 1

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS mcs_approvals (
	id             TEXT PRIMARY KEY,
	label          TEXT NOT NULL,
	tool           TEXT NOT NULL,
	arguments      TEXT NOT NULL,
	fingerprint    TEXT NOT NULL,
	created        INTEGER NOT NULL, -- Unix microseconds
	expires        INTEGER NOT NULL, -- Unix microseconds
	state          TEXT NOT NULL,
	decided        INTEGER NOT NULL DEFAULT 0,
	approve        INTEGER NOT NULL DEFAULT 0,
	decided_by     TEXT NOT NULL DEFAULT '',
	decided_reason TEXT NOT NULL DEFAULT '',
	decided_at     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS mcs_approvals_claim ON mcs_approvals (fingerprint, state, created);
CREATE INDEX IF NOT EXISTS mcs_approvals_created ON mcs_approvals (created);
`

const sqliteColumns = `id, label, tool, arguments, fingerprint, created, expires, state, decided, approve, decided_by, decided_reason, decided_at`

type sqliteStore struct {
	opts options
	db   *sql.DB
	path string
}

var _ Store = (*sqliteStore)(nil)

// OpenSQLite opens (creating when missing) the SQLite database at path as a
// [Store]: the embedded default, through a pure-Go SQLite (no cgo).
//
// A new file is created with mode 0600 before SQLite opens it, so that it is
// never readable by others; the write-ahead log and shared-memory files SQLite
// makes beside it take the same mode. The database runs in WAL mode with a busy
// timeout of 10 s, and every write is a transaction that takes the write lock
// first (BEGIN IMMEDIATE), so several processes can share the file: of two that
// claim one request at the same moment exactly one wins. A path that is a
// directory, or a file that is not an SQLite database, is an error that says
// so. Close the store when done.
func OpenSQLite(path string, opts ...Option) (Store, error) {
	if path == "" {
		return nil, errors.New("approvals: open sqlite: empty path (give the database file's path)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("approvals: open sqlite %s: %w", path, err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Set("_busy_timeout", fmt.Sprint(sqliteBusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("approvals: open sqlite %s: %w", abs, err)
	}
	s := &sqliteStore{opts: newOptions(opts), db: db, path: abs}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// createPrivate creates the file at path with mode 0600 when it does not exist,
// and rejects a directory.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if errors.Is(err, syscall.EISDIR) {
			return fmt.Errorf("approvals: open sqlite %s: the path is a directory; give the path of a database file (it is created when missing)", path)
		}
		return fmt.Errorf("approvals: open sqlite %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("approvals: open sqlite %s: %w", path, err)
	}
	return nil
}

// migrate creates the schema when the database has none, in one transaction,
// and rejects a database made by a newer version.
func (s *sqliteStore) migrate() error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrapOpen(err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return s.wrapOpen(err)
	}
	switch {
	case version == sqliteVersion:
		return nil
	case version > sqliteVersion:
		return fmt.Errorf("approvals: open sqlite %s: schema version %d is newer than this program's (%d); use a newer version of the program", s.path, version, sqliteVersion)
	}
	if _, err := tx.ExecContext(ctx, sqliteSchema); err != nil {
		return s.wrapOpen(err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, sqliteVersion)); err != nil {
		return s.wrapOpen(err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrapOpen(err)
	}
	return nil
}

func (s *sqliteStore) wrapOpen(err error) error {
	if strings.Contains(err.Error(), "not a database") || strings.Contains(err.Error(), "SQLITE_NOTADB") {
		return fmt.Errorf("approvals: open sqlite %s: the file is not an SQLite database (give another path, or move the file away): %w", s.path, err)
	}
	return fmt.Errorf("approvals: open sqlite %s: %w", s.path, err)
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

type scanner interface{ Scan(dest ...any) error }

func scanSQLite(row scanner) (record, error) {
	var rec record
	var created, expires, at int64
	var decided, approve int64
	err := row.Scan(&rec.id, &rec.label, &rec.tool, &rec.args, &rec.fingerprint, &created, &expires, &rec.state, &decided, &approve, &rec.by, &rec.reason, &at)
	rec.created, rec.expires, rec.at = fromMicros(created), fromMicros(expires), fromMicros(at)
	rec.decided, rec.approve = decided != 0, approve != 0
	return rec, err
}

func (s *sqliteStore) Create(ctx context.Context, r Request) (Request, error) {
	r, args, err := prepare(r, s.opts.clock())
	if err != nil {
		return Request{}, err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO mcs_approvals (id, label, tool, arguments, fingerprint, created, expires, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`,
		r.ID, r.Label, r.Tool, string(args), r.Fingerprint, micros(r.Created), micros(r.Expires), string(Pending))
	if err != nil {
		return Request{}, fmt.Errorf("approvals: create: %w", err)
	}
	return r, nil
}

func (s *sqliteStore) Get(ctx context.Context, id string) (Request, error) {
	rec, err := scanSQLite(s.db.QueryRowContext(ctx, `SELECT `+sqliteColumns+` FROM mcs_approvals WHERE id = ?1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, err)
	}
	return rec.request(s.opts.clock())
}

func (s *sqliteStore) List(ctx context.Context, f Filter) ([]Request, error) {
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	now := s.opts.clock()
	where, args := filterSQL(f, now, func(i int) string { return fmt.Sprintf("?%d", i) }, micros(now))
	query := `SELECT ` + sqliteColumns + ` FROM mcs_approvals` + where + ` ORDER BY created DESC, id DESC`
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("approvals: list: %w", err)
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		rec, err := scanSQLite(rows)
		if err != nil {
			return nil, fmt.Errorf("approvals: list: %w", err)
		}
		r, err := rec.request(now)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("approvals: list: %w", err)
	}
	return out, nil
}

// filterSQL returns the WHERE clause (empty or starting with a space) and its
// arguments for f; ph renders the i-th placeholder and nowArg is the current
// time as the database keeps it.
func filterSQL(f Filter, now time.Time, ph func(int) string, nowArg any) (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return ph(len(args))
	}
	switch f.State {
	case Pending, Approved:
		conds = append(conds, "state = "+arg(string(f.State))+" AND expires > "+arg(nowArg))
	case Expired:
		n := arg(nowArg)
		conds = append(conds, "((state IN ('pending', 'approved') AND expires <= "+n+") OR state = 'expired')")
	case Denied, Used:
		conds = append(conds, "state = "+arg(string(f.State)))
	}
	if f.Label != "" {
		conds = append(conds, "label = "+arg(f.Label))
	}
	if f.Tool != "" {
		conds = append(conds, "tool = "+arg(f.Tool))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (s *sqliteStore) Decide(ctx context.Context, id string, d Decision) (Request, error) {
	now := s.opts.clock()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, err)
	}
	defer tx.Rollback()
	rec, err := scanSQLite(tx.QueryRowContext(ctx, `SELECT `+sqliteColumns+` FROM mcs_approvals WHERE id = ?1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, err)
	}
	r, err := rec.request(now)
	if err != nil {
		return Request{}, err
	}
	if r.State != Pending {
		return Request{}, undecided(r)
	}
	d.At = stamp(d.At)
	if d.At.IsZero() {
		d.At = now
	}
	state := Denied
	if d.Approve {
		state = Approved
	}
	res, err := tx.ExecContext(ctx, `UPDATE mcs_approvals SET state = ?1, decided = 1, approve = ?2, decided_by = ?3, decided_reason = ?4, decided_at = ?5 WHERE id = ?6 AND state = 'pending'`,
		string(state), d.Approve, d.By, d.Reason, micros(d.At), id)
	if err != nil {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Request{}, fmt.Errorf("approvals: decide %q: the request changed while it was decided (%d rows, %v)", id, n, err)
	}
	if err := tx.Commit(); err != nil {
		return Request{}, fmt.Errorf("approvals: decide %q: %w", id, err)
	}
	r.State, r.Decision = state, &d
	if !now.Before(r.Expires) {
		r.State = Expired
	}
	return r, nil
}

func (s *sqliteStore) Claim(ctx context.Context, fingerprint string) (Request, bool, error) {
	if fingerprint == "" {
		return Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	now := s.opts.clock()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return Request{}, false, fmt.Errorf("approvals: claim: %w", err)
	}
	defer tx.Rollback()
	rec, err := scanSQLite(tx.QueryRowContext(ctx, `UPDATE mcs_approvals SET state = 'used'
		WHERE id = (SELECT id FROM mcs_approvals WHERE fingerprint = ?1 AND state = 'approved' AND expires > ?2 ORDER BY created DESC, id DESC LIMIT 1)
		AND state = 'approved'
		RETURNING `+sqliteColumns, fingerprint, micros(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return Request{}, false, nil
	}
	if err != nil {
		return Request{}, false, fmt.Errorf("approvals: claim: %w", err)
	}
	r, err := rec.request(now)
	if err != nil {
		return Request{}, false, err // rolled back: a corrupt request is not used up
	}
	if err := tx.Commit(); err != nil {
		return Request{}, false, fmt.Errorf("approvals: claim %q: %w", r.ID, err)
	}
	return r, true, nil
}

func (s *sqliteStore) Close() error { return s.db.Close() }
