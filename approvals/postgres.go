package approvals

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// postgresLock is the key of the advisory lock that serialises schema creation
// between processes that open one database at the same moment.
const postgresLock = 0x6d63735f61707072 // "mcs_appr"

const postgresSchema = `
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

const postgresColumns = sqliteColumns

type postgresStore struct {
	opts  options
	pool  *pgxpool.Pool
	where string // host and database, for errors
}

var _ Store = (*postgresStore)(nil)

// OpenPostgres connects to the PostgreSQL database dsn names (a URL,
// "postgres://user:password@host:5432/db?sslmode=...", or key=value pairs) as a
// [Store], for many processes and machines. It checks the connection, and
// creates the table mcs_approvals and its indexes when missing, under an
// advisory lock so that processes starting together do not trip over each
// other. Claim is one atomic UPDATE: of any number of concurrent claims of one
// request exactly one wins. Close the store when done.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("approvals: open postgres: the DSN does not parse (want postgres://user:password@host:port/database or key=value pairs): %w", err)
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("approvals: open postgres %s: %w", where, err)
	}
	s := &postgresStore{opts: newOptions(opts), pool: pool, where: where}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

func (s *postgresStore) migrate(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("approvals: open postgres %s: cannot connect (is the server running, and are host, port, user and password right?): %w", s.where, err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(postgresLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, postgresSchema)
		return err
	})
	if err != nil {
		return fmt.Errorf("approvals: open postgres %s: create the schema: %w", s.where, err)
	}
	return nil
}

func scanPostgres(row pgx.Row) (record, error) {
	var rec record
	var at *time.Time
	err := row.Scan(&rec.id, &rec.label, &rec.tool, &rec.args, &rec.fingerprint, &rec.created, &rec.expires, &rec.state, &rec.decided, &rec.approve, &rec.by, &rec.reason, &at)
	if at != nil {
		rec.at = *at
	}
	return rec, err
}

func (s *postgresStore) Create(ctx context.Context, r Request) (Request, error) {
	r, args, err := prepare(r, s.opts.clock())
	if err != nil {
		return Request{}, err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO mcs_approvals (id, label, tool, arguments, fingerprint, created, expires, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		r.ID, r.Label, r.Tool, string(args), r.Fingerprint, r.Created, r.Expires, string(Pending))
	if err != nil {
		return Request{}, fmt.Errorf("approvals: create: %w", err)
	}
	return r, nil
}

func (s *postgresStore) Get(ctx context.Context, id string) (Request, error) {
	rec, err := scanPostgres(s.pool.QueryRow(ctx, `SELECT `+postgresColumns+` FROM mcs_approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Request{}, fmt.Errorf("approvals: get %q: %w", id, err)
	}
	return rec.request(s.opts.clock())
}

func (s *postgresStore) List(ctx context.Context, f Filter) ([]Request, error) {
	if err := checkFilter(f); err != nil {
		return nil, err
	}
	now := s.opts.clock()
	where, args := filterSQL(f, now, func(i int) string { return fmt.Sprintf("$%d", i) }, now)
	query := `SELECT ` + postgresColumns + ` FROM mcs_approvals` + where + ` ORDER BY created DESC, id DESC`
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("approvals: list: %w", err)
	}
	defer rows.Close()
	var out []Request
	for rows.Next() {
		rec, err := scanPostgres(rows)
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

func (s *postgresStore) Decide(ctx context.Context, id string, d Decision) (Request, error) {
	now := s.opts.clock()
	d.At = stamp(d.At)
	if d.At.IsZero() {
		d.At = now
	}
	state := Denied
	if d.Approve {
		state = Approved
	}
	var r Request
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One atomic UPDATE decides; when it finds nothing to decide, the row
		// read afterwards says why.
		rec, err := scanPostgres(tx.QueryRow(ctx, `UPDATE mcs_approvals SET state = $1, decided = true, approve = $2, decided_by = $3, decided_reason = $4, decided_at = $5
			WHERE id = $6 AND state = 'pending' AND expires > $7
			RETURNING `+postgresColumns, string(state), d.Approve, d.By, d.Reason, d.At, id, now))
		if errors.Is(err, pgx.ErrNoRows) {
			rec, err = scanPostgres(tx.QueryRow(ctx, `SELECT `+postgresColumns+` FROM mcs_approvals WHERE id = $1`, id))
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("approvals: decide %q: %w", id, ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("approvals: decide %q: %w", id, err)
			}
			cur, err := rec.request(now)
			if err != nil {
				return err
			}
			if cur.State == Pending { // only when the clock went back between the statements
				cur.State = Expired
			}
			return undecided(cur)
		}
		if err != nil {
			return fmt.Errorf("approvals: decide %q: %w", id, err)
		}
		r, err = rec.request(now)
		return err // a corrupt row rolls the decision back
	})
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

func (s *postgresStore) Claim(ctx context.Context, fingerprint string) (Request, bool, error) {
	if fingerprint == "" {
		return Request{}, false, errors.New("approvals: claim: empty fingerprint")
	}
	now := s.opts.clock()
	var r Request
	found := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// The subquery locks the newest approved row; a concurrent claim waits
		// for the lock, then finds the row used, and the outer condition
		// state = 'approved' is checked again on the row as committed.
		rec, err := scanPostgres(tx.QueryRow(ctx, `UPDATE mcs_approvals SET state = 'used'
			WHERE id = (SELECT id FROM mcs_approvals WHERE fingerprint = $1 AND state = 'approved' AND expires > $2 ORDER BY created DESC, id DESC LIMIT 1 FOR UPDATE)
			AND state = 'approved'
			RETURNING `+postgresColumns, fingerprint, now))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("approvals: claim: %w", err)
		}
		r, err = rec.request(now)
		if err != nil {
			return err // rolled back: a corrupt request is not used up
		}
		found = true
		return nil
	})
	if err != nil {
		return Request{}, false, err
	}
	return r, found, nil
}

func (s *postgresStore) Close() error {
	s.pool.Close()
	return nil
}
