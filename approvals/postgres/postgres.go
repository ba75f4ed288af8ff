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
CREATE INDEX IF NOT EXISTS mcs_approvals_claim ON mcs_approvals (fingerprint, state, created);
CREATE INDEX IF NOT EXISTS mcs_approvals_created ON mcs_approvals (created);
`

type store struct {
	cfg   approvals.Config
	pool  *pgxpool.Pool
	where string // host and database, for errors
}

var _ approvals.Store = (*store)(nil)

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
	err := sc.Scan(&row.ID, &row.Label, &row.Tool, &row.Arguments, &row.Fingerprint, &row.Created, &row.Expires, &row.State, &row.Decided, &row.Approve, &row.By, &row.Reason, &at)
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
	_, err = s.pool.Exec(ctx, `INSERT INTO mcs_approvals (id, label, tool, arguments, fingerprint, created, expires, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		row.ID, row.Label, row.Tool, row.Arguments, row.Fingerprint, row.Created, row.Expires, row.State)
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
		r, err = rec.Request(now)
		return err // a corrupt row rolls the decision back
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
	var r approvals.Request
	found := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The subquery locks the newest approved row; a concurrent claim waits
		// for the lock, then finds the row used, and the outer condition
		// state = 'approved' is checked again on the row as committed.
		rec, err := scan(tx.QueryRow(ctx, `UPDATE mcs_approvals SET state = 'used'
			WHERE id = (SELECT id FROM mcs_approvals WHERE fingerprint = $1 AND state = 'approved' AND expires > $2 ORDER BY created DESC, id DESC LIMIT 1 FOR UPDATE)
			AND state = 'approved'
			RETURNING `+sqlstore.Columns, fingerprint, now))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("approvals: claim: %w", err)
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

func (s *store) Close() error {
	s.pool.Close()
	return nil
}
