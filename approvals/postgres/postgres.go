// Package postgres is the PostgreSQL store of package approvals, for many
// processes and machines, through pgx. Importing it registers the URL schemes
// "postgres://" and "postgresql://" with [approvals.Open]; [Open] opens a
// database by DSN.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/internal/sqlstore"
)

func init() {
	approvals.RegisterScheme("postgres", openURL)
	approvals.RegisterScheme("postgresql", openURL)
}

// openURL opens the store of a "postgres://..." or "postgresql://..." URL.
func openURL(ctx context.Context, u string, opts ...approvals.Option) (approvals.Store, error) {
	if _, rest, _ := strings.Cut(u, ":"); !strings.HasPrefix(rest, "//") {
		return nil, errors.New("approvals: open postgres: the store URL does not start with postgres:// or postgresql://")
	}
	return Open(ctx, u, opts...)
}

// schemaLock is the key of the advisory lock that serialises schema creation
// between processes that open one database at the same moment.
const schemaLock = 0x6d63735f61707072 // "mcs_appr"

const schema = `
CREATE TABLE IF NOT EXISTS mcs_approvals (
	id             text PRIMARY KEY,
	label          text NOT NULL,
	tool           text NOT NULL,
	arguments      text NOT NULL, -- JSON as written: json and jsonb would reorder or reformat
	fingerprint    text NOT NULL,
	created        timestamptz NOT NULL,
	expires        timestamptz NOT NULL,
	state          text NOT NULL,
	decided        boolean NOT NULL DEFAULT false,
	approve        boolean NOT NULL DEFAULT false,
	decided_by     text NOT NULL DEFAULT '',
	decided_reason text NOT NULL DEFAULT '',
	decided_at     timestamptz
);
ALTER TABLE mcs_approvals ADD COLUMN IF NOT EXISTS details text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS mcs_approvals_claim ON mcs_approvals (fingerprint, state, created);
CREATE INDEX IF NOT EXISTS mcs_approvals_created ON mcs_approvals (created);
CREATE TABLE IF NOT EXISTS mcs_approval_events (
	seq            bigint PRIMARY KEY,
	id             text NOT NULL,
	label          text NOT NULL,
	tool           text NOT NULL,
	approve        boolean NOT NULL,
	decided_by     text NOT NULL,
	decided_reason text NOT NULL,
	decided_at     timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS mcs_approval_sinks (
	sink text PRIMARY KEY,
	seq  bigint NOT NULL
);
`

type store struct {
	cfg   approvals.Config
	pool  *pgxpool.Pool
	where string // host and database, for errors
}

var (
	_ approvals.Store   = (*store)(nil)
	_ approvals.Journal = (*store)(nil)
)

// Open connects to the PostgreSQL database dsn names (a URL,
// "postgres://user:password@host:5432/db?sslmode=...", or key=value pairs) as an
// [approvals.Store], for many processes and machines. The options are those of
// package approvals ([approvals.WithClock]). It checks the connection, and
// creates the table mcs_approvals and its indexes when missing, under an
// advisory lock so that processes starting together do not trip over each
// other. Claim is one atomic UPDATE: of any number of concurrent claims of one
// request exactly one wins. Close the store when done.
func Open(ctx context.Context, dsn string, opts ...approvals.Option) (approvals.Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("approvals: open postgres: the DSN does not parse (want postgres://user:password@host:port/database or key=value pairs): %w", err)
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("approvals: open postgres %s: %w", where, err)
	}
	s := &store{cfg: approvals.Configure(opts...), pool: pool, where: where}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *store) migrate(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("approvals: open postgres %s: cannot connect (is the server running, and are host, port, user and password right?): %w", s.where, err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return fmt.Errorf("approvals: open postgres %s: create the schema: %w", s.where, err)
	}
	return nil
}

func scan(sc pgx.Row) (approvals.Row, error) {
	var row approvals.Row
	var at *time.Time
	err := sc.Scan(&row.ID, &row.Label, &row.Tool, &row.Arguments, &row.Fingerprint, &row.Created, &row.Expires, &row.State, &row.Decided, &row.Approve, &row.By, &row.Reason, &at, &row.Details)
	if at != nil {
		row.At = *at
	}
	return row, err
}

func (s *store) Create(ctx context.Context, r approvals.Request) (approvals.Request, error) {
	r, row, err := approvals.Prepare(r, s.cfg.Now())
	if err != nil {
		return approvals.Request{}, err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO mcs_approvals (id, label, tool, arguments, fingerprint, created, expires, state, details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		row.ID, row.Label, row.Tool, row.Arguments, row.Fingerprint, row.Created, row.Expires, row.State, row.Details)
	if err != nil {
		return approvals.Request{}, fmt.Errorf("approvals: create: %w", err)
	}
	return r, nil
}

func (s *store) Get(ctx context.Context, id string) (approvals.Request, error) {
	rec, err := scan(s.pool.QueryRow(ctx, `SELECT `+sqlstore.Columns+` FROM mcs_approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return approvals.Request{}, fmt.Errorf("approvals: get %q: %w", id, approvals.ErrNotFound)
	}
	if err != nil {
		return approvals.Request{}, fmt.Errorf("approvals: get %q: %w", id, err)
	}
	return rec.Request(s.cfg.Now())
}

func (s *store) List(ctx context.Context, f approvals.Filter) ([]approvals.Request, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	query, args := sqlstore.ListQuery(f, func(i int) string { return fmt.Sprintf("$%d", i) }, now)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("approvals: list: %w", err)
	}
	defer rows.Close()
	return sqlstore.Collect(rows, func(r pgx.Rows) (approvals.Row, error) { return scan(r) }, now,
		func(err error) error { return fmt.Errorf("approvals: list: %w", err) })
}

func (s *store) Decide(ctx context.Context, id string, d approvals.Decision) (approvals.Request, error) {
	now := s.cfg.Now()
	d.At = approvals.Stamp(d.At)
	if d.At.IsZero() {
		d.At = now
	}
	state := approvals.Denied
	if d.Approve {
		state = approvals.Approved
	}
	var r approvals.Request
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One atomic UPDATE decides; when it finds nothing to decide, the row
		// read afterwards says why.
		rec, err := scan(tx.QueryRow(ctx, `UPDATE mcs_approvals SET state = $1, decided = true, approve = $2, decided_by = $3, decided_reason = $4, decided_at = $5
			WHERE id = $6 AND state = 'pending' AND expires > $7
			RETURNING `+sqlstore.Columns, string(state), d.Approve, d.By, d.Reason, d.At, id, now))
		if errors.Is(err, pgx.ErrNoRows) {
			rec, err = scan(tx.QueryRow(ctx, `SELECT `+sqlstore.Columns+` FROM mcs_approvals WHERE id = $1`, id))
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("approvals: decide %q: %w", id, approvals.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("approvals: decide %q: %w", id, err)
			}
			cur, err := rec.Request(now)
			if err != nil {
				return err
			}
			if cur.State == approvals.Pending { // only when the clock went back between the statements
				cur.State = approvals.Expired
			}
			return cur.DecideError()
		}
		if err != nil {
			return fmt.Errorf("approvals: decide %q: %w", id, err)
		}
		if r, err = rec.Request(now); err != nil {
			return err // a corrupt row rolls the decision back
		}
		// The journal's record commits with the decision, or neither does. The
		// lock (which readers do not wait for) makes deciders take the next Seq
		// and commit in turn, so that a reader never sees a Seq before a smaller
		// one has committed.
		if _, err := tx.Exec(ctx, `LOCK TABLE mcs_approval_events IN EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("approvals: decide %q: journal the decision: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mcs_approval_events (`+sqlstore.EventColumns+`)
			SELECT coalesce(max(seq), 0) + 1, $1, $2, $3, $4, $5, $6, $7 FROM mcs_approval_events`,
			id, r.Label, r.Tool, d.Approve, d.By, d.Reason, d.At); err != nil {
			return fmt.Errorf("approvals: decide %q: journal the decision: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return approvals.Request{}, err
	}
	return r, nil
}

func (s *store) Claim(ctx context.Context, fingerprint string) (approvals.Request, bool, error) {
	if fingerprint == "" {
		return approvals.Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	now := s.cfg.Now()
	// The subquery locks the newest approved row; a concurrent claim waits for
	// the lock, then finds the row used, and the outer condition state =
	// 'approved' is checked again on the row as committed.
	return s.claim(ctx, "claim", now, `UPDATE mcs_approvals SET state = 'used'
		WHERE id = (SELECT id FROM mcs_approvals WHERE fingerprint = $1 AND state = 'approved' AND expires > $2 ORDER BY created DESC, id DESC LIMIT 1 FOR UPDATE)
		AND state = 'approved'
		RETURNING `+sqlstore.Columns, fingerprint, now)
}

func (s *store) ClaimID(ctx context.Context, id, fingerprint string) (approvals.Request, bool, error) {
	if fingerprint == "" {
		return approvals.Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	now := s.cfg.Now()
	return s.claim(ctx, fmt.Sprintf("claim %q", id), now, `UPDATE mcs_approvals SET state = 'used'
		WHERE id = $1 AND fingerprint = $2 AND state = 'approved' AND expires > $3
		RETURNING `+sqlstore.Columns, id, fingerprint, now)
}

// claim runs the claiming UPDATE query in a transaction and returns the
// request it used up, if any.
func (s *store) claim(ctx context.Context, op string, now time.Time, query string, args ...any) (approvals.Request, bool, error) {
	var r approvals.Request
	found := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rec, err := scan(tx.QueryRow(ctx, query, args...))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("approvals: %s: %w", op, err)
		}
		r, err = rec.Request(now)
		if err != nil {
			return err // rolled back: a corrupt request is not used up
		}
		found = true
		return nil
	})
	if err != nil {
		return approvals.Request{}, false, err
	}
	return r, found, nil
}

func (s *store) Events(ctx context.Context, after int64, limit int) ([]approvals.Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("approvals: events: limit %d is not positive", limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+sqlstore.EventColumns+` FROM mcs_approval_events WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("approvals: events: %w", err)
	}
	defer rows.Close()
	var evs []approvals.Event
	for rows.Next() {
		var ev approvals.Event
		if err := rows.Scan(&ev.Seq, &ev.ID, &ev.Label, &ev.Tool, &ev.Decision.Approve, &ev.Decision.By, &ev.Decision.Reason, &ev.Decision.At); err != nil {
			return nil, fmt.Errorf("approvals: events: %w", err)
		}
		ev.Decision.At = ev.Decision.At.UTC()
		evs = append(evs, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("approvals: events: %w", err)
	}
	return evs, nil
}

func (s *store) Delivered(ctx context.Context, sink string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM mcs_approval_sinks WHERE sink = $1`, sink).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("approvals: delivered: %w", err)
	}
	return seq, nil
}

func (s *store) SetDelivered(ctx context.Context, sink string, seq int64) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO mcs_approval_sinks (sink, seq) VALUES ($1, $2)
		ON CONFLICT (sink) DO UPDATE SET seq = GREATEST(mcs_approval_sinks.seq, EXCLUDED.seq)`, sink, seq)
	if err != nil {
		return fmt.Errorf("approvals: set delivered: %w", err)
	}
	return nil
}

func (s *store) Close() error {
	s.pool.Close()
	return nil
}
