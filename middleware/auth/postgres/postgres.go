// Package postgres is the PostgreSQL token store of package auth, shared by
// processes on many machines, through pgx. Importing it registers the URL
// schemes "postgres://" and "postgresql://" with [auth.OpenStore]; [Open] opens
// a database by DSN.
package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	auth.RegisterStoreScheme("postgres", openURL)
	auth.RegisterStoreScheme("postgresql", openURL)
}

func openURL(ctx context.Context, u string) (auth.TokenStore, error) {
	if _, rest, _ := strings.Cut(u, ":"); !strings.HasPrefix(rest, "//") {
		return nil, errors.New("auth: open postgres: the store URL does not start with postgres:// or postgresql://")
	}
	return Open(ctx, u)
}

// opTimeout bounds one operation of the store (the TokenStore methods take no
// context).
const opTimeout = 15 * time.Second

// schemaLock is the key of the advisory lock that serialises schema creation
// between processes that open one database at the same moment.
const schemaLock = 0x6d63735f746f6b6e // "mcs_tokn"

const schema = `
CREATE TABLE IF NOT EXISTS mcs_tokens (
	key    text PRIMARY KEY,
	value  text NOT NULL,
	expiry timestamptz -- NULL: does not expire
);
CREATE TABLE IF NOT EXISTS mcs_token_leases (
	key    text PRIMARY KEY,
	holder text NOT NULL,
	until  timestamptz NOT NULL
);
`

// Store is the PostgreSQL [auth.TokenStore]. It is an [auth.TokenLocker]: a
// lease is a row of mcs_token_leases taken with one atomic upsert on the
// server's clock, so machines whose clocks differ agree on when it lapses.
// Safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	where string // host, port and database, for errors
}

var (
	_ auth.TokenStore  = (*Store)(nil)
	_ auth.TokenLocker = (*Store)(nil)
)

// Open connects to the database dsn names (a postgres:// URL or key=value
// pairs; the password best comes from PGPASSWORD or ~/.pgpass), checks the
// connection and creates the tables mcs_tokens and mcs_token_leases when
// missing, under an advisory lock. Errors name host, port and database, never
// the password. Close the store when done.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("auth: open postgres: the DSN does not parse (want postgres://user@host:port/database or key=value pairs)")
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("auth: open postgres %s: %w", where, err)
	}
	s := &Store{pool: pool, where: where}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("auth: open postgres %s: cannot connect (is the server running, and are host, port, user and password right?): %w", where, err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("auth: open postgres %s: create the schema: %w", where, err)
	}
	return s, nil
}

func (s *Store) wrap(op string, err error) error {
	return fmt.Errorf("auth: postgres %s: %s: %w", s.where, op, err)
}

// Load returns the entry under key, expired or not.
func (s *Store) Load(key string) (string, time.Time, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var value string
	var exp *time.Time
	err := s.pool.QueryRow(ctx, `SELECT value, expiry FROM mcs_tokens WHERE key = $1`, key).Scan(&value, &exp)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, s.wrap("load a token", err)
	}
	if exp == nil {
		return value, time.Time{}, true, nil
	}
	return value, *exp, true, nil
}

// Save stores value under key with expiry in one statement.
func (s *Store) Save(key, value string, expiry time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	var exp *time.Time
	if !expiry.IsZero() {
		exp = &expiry
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO mcs_tokens (key, value, expiry) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, expiry = excluded.expiry`, key, value, exp)
	if err != nil {
		return s.wrap("save a token", err)
	}
	return nil
}

// Delete removes key.
func (s *Store) Delete(key string) error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM mcs_tokens WHERE key = $1`, key); err != nil {
		return s.wrap("delete a token", err)
	}
	return nil
}

// Lock takes the lease on key for ttl: it inserts the lease row, or takes over
// one whose time has run out on the server's clock, in one statement, and
// polls (from 2 ms, doubling to 50 ms) while another holder has it, bounded by
// ctx.
func (s *Store) Lock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	holder := rand.Text()
	wait := 2 * time.Millisecond
	for {
		tag, err := s.pool.Exec(ctx, `INSERT INTO mcs_token_leases (key, holder, until)
			VALUES ($1, $2, clock_timestamp() + $3 * interval '1 microsecond')
			ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, until = excluded.until
			WHERE mcs_token_leases.until < clock_timestamp()`, key, holder, ttl.Microseconds())
		if err != nil {
			return nil, s.wrap("take the refresh lease", err)
		}
		if tag.RowsAffected() == 1 {
			return func() {
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				defer cancel()
				s.pool.Exec(ctx, `DELETE FROM mcs_token_leases WHERE key = $1 AND holder = $2`, key, holder)
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

// Close closes the connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}
