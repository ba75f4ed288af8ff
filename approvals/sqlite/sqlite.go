// Package sqlite is the SQLite store of package approvals: an embedded database
// file, through a pure-Go SQLite (no cgo). Importing it registers the URL
// schemes "sqlite:PATH" and "sqlite://PATH" with [approvals.Open]; [Open] opens a
// file by path.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/internal/sqlstore"
	"github.com/mcs-go/mcs/internal/sqlitedb"
)

func init() {
	approvals.RegisterScheme("sqlite", openURL)
}

// openURL opens the store of a "sqlite:PATH" or "sqlite://PATH" URL.
func openURL(_ context.Context, u string, opts ...approvals.Option) (approvals.Store, error) {
	_, rest, _ := strings.Cut(u, ":")
	path := strings.TrimPrefix(rest, "//")
	if path == "" {
		return nil, fmt.Errorf("approvals: store URL %q names no file (want sqlite:PATH)", u)
	}
	return Open(path, opts...)
}

// busyTimeout is how long a statement waits for another connection's (or
// process's) write lock before it fails with "database is locked".
const busyTimeout = sqlitedb.DefaultBusyTimeout

// schemaVersion is the schema version kept in PRAGMA user_version.
// Version 2 added the journal of decisions (mcs_approval_events), the
// delivery marks of audit trails (mcs_approval_sinks) and the column details.
const schemaVersion = 2

const schema = `
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
	decided_at     INTEGER NOT NULL DEFAULT 0,
	details        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS mcs_approvals_claim ON mcs_approvals (fingerprint, state, created);
CREATE INDEX IF NOT EXISTS mcs_approvals_created ON mcs_approvals (created);
CREATE TABLE IF NOT EXISTS mcs_approval_events (
	seq            INTEGER PRIMARY KEY AUTOINCREMENT,
	id             TEXT NOT NULL,
	label          TEXT NOT NULL,
	tool           TEXT NOT NULL,
	approve        INTEGER NOT NULL,
	decided_by     TEXT NOT NULL,
	decided_reason TEXT NOT NULL,
	decided_at     INTEGER NOT NULL -- Unix microseconds
);
CREATE TABLE IF NOT EXISTS mcs_approval_sinks (
	sink TEXT PRIMARY KEY,
	seq  INTEGER NOT NULL
);
`

type store struct {
	cfg  approvals.Config
	db   *sql.DB
	path string
}

var (
	_ approvals.Store   = (*store)(nil)
	_ approvals.Journal = (*store)(nil)
)

// Open opens (creating when missing) the SQLite database at path as an
// [approvals.Store]: the embedded default, through a pure-Go SQLite (no cgo).
// The options are those of package approvals ([approvals.WithClock]).
//
// A new file is created with mode 0600 before SQLite opens it, so that it is
// never readable by others; the write-ahead log and shared-memory files SQLite
// makes beside it take the same mode. The database runs in WAL mode with a busy
// timeout of 10 s, and every write is a transaction that takes the write lock
// first (BEGIN IMMEDIATE), so several processes can share the file: of two that
// claim one request at the same moment exactly one wins. A path that is a
// directory, or a file that is not an SQLite database, is an error that says
// so. Close the store when done.
func Open(path string, opts ...approvals.Option) (approvals.Store, error) {
	cfg := approvals.Configure(opts...)
	if cfg.BusyTimeout <= 0 {
		cfg.BusyTimeout = busyTimeout
	}
	db, abs, err := sqlitedb.Open("approvals", path, cfg.BusyTimeout)
	if err != nil {
		return nil, err
	}
	s := &store{cfg: cfg, db: db, path: abs}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// migrate creates the schema when the database has none, in one transaction,
// and rejects a database made by a newer version.
func (s *store) migrate() error {
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
	case version == schemaVersion:
		return nil
	case version > schemaVersion:
		return fmt.Errorf("approvals: open sqlite %s: schema version %d is newer than this program's (%d); use a newer version of the program", s.path, version, schemaVersion)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return s.wrapOpen(err)
	}
	if version == 1 {
		// The table of version 1 exists without the column details.
		if _, err := tx.ExecContext(ctx, `ALTER TABLE mcs_approvals ADD COLUMN details TEXT NOT NULL DEFAULT ''`); err != nil {
			return s.wrapOpen(err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return s.wrapOpen(err)
	}
	if err := tx.Commit(); err != nil {
		return s.wrapOpen(err)
	}
	return nil
}

func (s *store) wrapOpen(err error) error {
	return sqlitedb.WrapOpen("approvals", s.path, s.cfg.BusyTimeout, err)
}

// wrap wraps a database error of op, explaining a lock that outlasted the busy
// timeout.
func (s *store) wrap(op string, err error) error {
	return sqlitedb.Wrap("approvals", op, s.path, s.cfg.BusyTimeout, err)
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

type scanner interface{ Scan(dest ...any) error }

func scan(sc scanner) (approvals.Row, error) {
	var row approvals.Row
	var created, expires, at int64
	var decided, approve int64
	err := sc.Scan(&row.ID, &row.Label, &row.Tool, &row.Arguments, &row.Fingerprint, &created, &expires, &row.State, &decided, &approve, &row.By, &row.Reason, &at, &row.Details)
	row.Created, row.Expires, row.At = fromMicros(created), fromMicros(expires), fromMicros(at)
	row.Decided, row.Approve = decided != 0, approve != 0
	return row, err
}

func (s *store) Create(ctx context.Context, r approvals.Request) (approvals.Request, error) {
	r, row, err := approvals.Prepare(r, s.cfg.Now())
	if err != nil {
		return approvals.Request{}, err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO mcs_approvals (id, label, tool, arguments, fingerprint, created, expires, state, details) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
		row.ID, row.Label, row.Tool, row.Arguments, row.Fingerprint, micros(row.Created), micros(row.Expires), row.State, row.Details)
	if err != nil {
		return approvals.Request{}, s.wrap("create", err)
	}
	return r, nil
}

func (s *store) Get(ctx context.Context, id string) (approvals.Request, error) {
	rec, err := scan(s.db.QueryRowContext(ctx, `SELECT `+sqlstore.Columns+` FROM mcs_approvals WHERE id = ?1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return approvals.Request{}, fmt.Errorf("approvals: get %q: %w", id, approvals.ErrNotFound)
	}
	if err != nil {
		return approvals.Request{}, s.wrap(fmt.Sprintf("get %q", id), err)
	}
	return rec.Request(s.cfg.Now())
}

func (s *store) List(ctx context.Context, f approvals.Filter) ([]approvals.Request, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	query, args := sqlstore.ListQuery(f, func(i int) string { return fmt.Sprintf("?%d", i) }, micros(now))
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("list", err)
	}
	defer rows.Close()
	return sqlstore.Collect(rows, func(r *sql.Rows) (approvals.Row, error) { return scan(r) }, now,
		func(err error) error { return s.wrap("list", err) })
}

func (s *store) Decide(ctx context.Context, id string, d approvals.Decision) (approvals.Request, error) {
	now := s.cfg.Now()
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return approvals.Request{}, s.wrap(fmt.Sprintf("decide %q", id), err)
	}
	defer tx.Rollback()
	rec, err := scan(tx.QueryRowContext(ctx, `SELECT `+sqlstore.Columns+` FROM mcs_approvals WHERE id = ?1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return approvals.Request{}, fmt.Errorf("approvals: decide %q: %w", id, approvals.ErrNotFound)
	}
	if err != nil {
		return approvals.Request{}, s.wrap(fmt.Sprintf("decide %q", id), err)
	}
	r, err := rec.Request(now)
	if err != nil {
		return approvals.Request{}, err
	}
	if err := r.DecideError(); err != nil {
		return approvals.Request{}, err
	}
	d.At = approvals.Stamp(d.At)
	if d.At.IsZero() {
		d.At = now
	}
	state := approvals.Denied
	if d.Approve {
		state = approvals.Approved
	}
	res, err := tx.ExecContext(ctx, `UPDATE mcs_approvals SET state = ?1, decided = 1, approve = ?2, decided_by = ?3, decided_reason = ?4, decided_at = ?5 WHERE id = ?6 AND state = 'pending'`,
		string(state), d.Approve, d.By, d.Reason, micros(d.At), id)
	if err != nil {
		return approvals.Request{}, s.wrap(fmt.Sprintf("decide %q", id), err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return approvals.Request{}, fmt.Errorf("approvals: decide %q: the request changed while it was decided (%d rows, %v)", id, n, err)
	}
	// The journal's record commits with the decision, or neither does. Writers
	// hold the database's write lock in turn, so Seq grows in commit order.
	if _, err := tx.ExecContext(ctx, `INSERT INTO mcs_approval_events (id, label, tool, approve, decided_by, decided_reason, decided_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)`,
		id, r.Label, r.Tool, d.Approve, d.By, d.Reason, micros(d.At)); err != nil {
		return approvals.Request{}, s.wrap(fmt.Sprintf("decide %q: journal the decision", id), err)
	}
	if err := tx.Commit(); err != nil {
		return approvals.Request{}, s.wrap(fmt.Sprintf("decide %q", id), err)
	}
	r.State, r.Decision = state, &d
	return r, nil
}

func (s *store) Claim(ctx context.Context, fingerprint string) (approvals.Request, bool, error) {
	if fingerprint == "" {
		return approvals.Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	now := s.cfg.Now()
	return s.claim(ctx, "claim", now, `UPDATE mcs_approvals SET state = 'used'
		WHERE id = (SELECT id FROM mcs_approvals WHERE fingerprint = ?1 AND state = 'approved' AND expires > ?2 ORDER BY created DESC, id DESC LIMIT 1)
		AND state = 'approved'
		RETURNING `+sqlstore.Columns, fingerprint, micros(now))
}

func (s *store) ClaimID(ctx context.Context, id, fingerprint string) (approvals.Request, bool, error) {
	if fingerprint == "" {
		return approvals.Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	now := s.cfg.Now()
	return s.claim(ctx, fmt.Sprintf("claim %q", id), now, `UPDATE mcs_approvals SET state = 'used'
		WHERE id = ?1 AND fingerprint = ?2 AND state = 'approved' AND expires > ?3
		RETURNING `+sqlstore.Columns, id, fingerprint, micros(now))
}

// claim runs the claiming UPDATE query in a write transaction and returns the
// request it used up, if any.
func (s *store) claim(ctx context.Context, op string, now time.Time, query string, args ...any) (approvals.Request, bool, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return approvals.Request{}, false, s.wrap(op, err)
	}
	defer tx.Rollback()
	rec, err := scan(tx.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return approvals.Request{}, false, nil
	}
	if err != nil {
		return approvals.Request{}, false, s.wrap(op, err)
	}
	r, err := rec.Request(now)
	if err != nil {
		return approvals.Request{}, false, err // rolled back: a corrupt request is not used up
	}
	if err := tx.Commit(); err != nil {
		return approvals.Request{}, false, s.wrap(fmt.Sprintf("claim %q", r.ID), err)
	}
	return r, true, nil
}

func (s *store) Events(ctx context.Context, after int64, limit int) ([]approvals.Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("approvals: events: limit %d is not positive", limit)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqlstore.EventColumns+` FROM mcs_approval_events WHERE seq > ?1 ORDER BY seq LIMIT ?2`, after, limit)
	if err != nil {
		return nil, s.wrap("events", err)
	}
	defer rows.Close()
	var evs []approvals.Event
	for rows.Next() {
		var ev approvals.Event
		var approve, at int64
		if err := rows.Scan(&ev.Seq, &ev.ID, &ev.Label, &ev.Tool, &approve, &ev.Decision.By, &ev.Decision.Reason, &at); err != nil {
			return nil, s.wrap("events", err)
		}
		ev.Decision.Approve, ev.Decision.At = approve != 0, fromMicros(at)
		evs = append(evs, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("events", err)
	}
	return evs, nil
}

func (s *store) Delivered(ctx context.Context, sink string) (int64, error) {
	var seq int64
	err := s.db.QueryRowContext(ctx, `SELECT seq FROM mcs_approval_sinks WHERE sink = ?1`, sink).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, s.wrap("delivered", err)
	}
	return seq, nil
}

func (s *store) SetDelivered(ctx context.Context, sink string, seq int64) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO mcs_approval_sinks (sink, seq) VALUES (?1, ?2)
		ON CONFLICT (sink) DO UPDATE SET seq = max(seq, excluded.seq)`, sink, seq)
	if err != nil {
		return s.wrap("set delivered", err)
	}
	return nil
}

func (s *store) Close() error { return s.db.Close() }
