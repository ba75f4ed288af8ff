package approvals_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/postgres"
	"github.com/mcs-go/mcs/approvals/sqlite"
	"github.com/mcs-go/mcs/internal/pgtest"
)

// databases are the backends whose stores several processes can share.
func databases() []backend {
	var out []backend
	for _, b := range backends() {
		if b.shared {
			out = append(out, b)
		}
	}
	return out
}

// A request survives the store being closed and opened again, at every step.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	for _, b := range databases() {
		t.Run(b.name, func(t *testing.T) {
			where := b.fresh(t)
			reopen := func() approvals.Store {
				s, err := b.open(t, where)
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				return s
			}
			s := reopen()
			created := mustCreate(t, s, request("weather", map[string]any{"city": "Oslo"}, time.Now(), time.Hour))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = reopen()
			got, err := s.Get(ctx, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(created, got); diff != "" {
				t.Errorf("after reopening (-created +got):\n%s", diff)
			}
			approved := mustDecide(t, s, created.ID, true)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = reopen()
			defer s.Close()
			claimed, ok, err := s.Claim(ctx, created.Fingerprint)
			if err != nil || !ok {
				t.Fatalf("Claim after reopening = %v, %v; want the approved request", ok, err)
			}
			want := approved
			want.State = approvals.Used
			if diff := cmp.Diff(want, claimed); diff != "" {
				t.Errorf("Claim (-want +got):\n%s", diff)
			}
			if _, ok, err := s.Claim(ctx, created.Fingerprint); ok || err != nil {
				t.Errorf("second Claim = %v, %v; want nothing", ok, err)
			}
		})
	}
}

// raceTrials is how many times TestClaimRace races: MCS_APPROVALS_TRIALS when
// set (1000 is the target of the design), else 100, or 20 with -short.
func raceTrials(t *testing.T) int {
	if v := os.Getenv("MCS_APPROVALS_TRIALS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("MCS_APPROVALS_TRIALS=%q: want a positive number", v)
		}
		return n
	}
	if testing.Short() {
		return 20
	}
	return 100
}

// Eight stores, each with its own connections to one database as if in its own
// process, race to claim one approved request: exactly one wins, every time.
func TestClaimRace(t *testing.T) {
	ctx := context.Background()
	trials := raceTrials(t)
	for _, b := range databases() {
		t.Run(b.name, func(t *testing.T) {
			where := b.fresh(t)
			stores := make([]approvals.Store, 8)
			for i := range stores {
				stores[i] = b.mustOpen(t, where)
			}
			for trial := range trials {
				r := mustCreate(t, stores[trial%8], request("weather", map[string]any{"trial": trial}, time.Now(), time.Hour))
				mustDecide(t, stores[(trial+1)%8], r.ID, true)
				if wins := raceClaims(t, stores, r.Fingerprint); wins != 1 {
					t.Fatalf("trial %d: %d of 8 claims won; want exactly 1", trial, wins)
				}
				if got, err := stores[0].Get(ctx, r.ID); err != nil || got.State != approvals.Used {
					t.Fatalf("trial %d: request is %v, %v; want used", trial, got.State, err)
				}
			}
		})
	}
}

// Processes that open one new database at the same moment all succeed: the
// schema is created once.
func TestOpenConcurrently(t *testing.T) {
	for _, b := range databases() {
		t.Run(b.name, func(t *testing.T) {
			where := b.fresh(t)
			var wg sync.WaitGroup
			stores := make([]approvals.Store, 8)
			errs := make([]error, 8)
			for i := range stores {
				wg.Go(func() { stores[i], errs[i] = b.open(t, where) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("open %d: %v", i, err)
					continue
				}
				defer stores[i].Close()
			}
			if t.Failed() {
				return
			}
			r := mustCreate(t, stores[3], request("weather", nil, time.Now(), time.Hour))
			if _, err := stores[5].Get(context.Background(), r.ID); err != nil {
				t.Errorf("a request made through one store is not found through another: %v", err)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{
		"memory:",
		"sqlite:" + filepath.Join(dir, "a.db"),
		"sqlite://" + filepath.Join(dir, "b.db"),
		"SQLite:" + filepath.Join(dir, "c.db"),
	} {
		t.Run(u, func(t *testing.T) { testOpenURL(t, u) })
	}
	for _, tc := range []struct{ url, want string }{
		{"", "sqlite:PATH"},
		{"memory", "sqlite:PATH"},
		{"memory:x", "sqlite:PATH"},
		{"sqlite:", "sqlite:PATH"},
		{"sqlite://", "sqlite:PATH"},
		{"postgres:db", "postgres://"},
		{"approvals.db", "sqlite:PATH"},
		{"mysql://db.example/approvals", "sqlite:PATH"},
		{"http://example.com/", "sqlite:PATH"},
	} {
		t.Run("reject "+tc.url, func(t *testing.T) {
			s, err := approvals.Open(context.Background(), tc.url)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded; want an error", tc.url)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open(%q) = %v; want the error to name the accepted form %s", tc.url, err, tc.want)
			}
		})
	}
	t.Run("password not echoed", func(t *testing.T) {
		_, err := approvals.Open(context.Background(), "mysql://app:s3cret@db.example/approvals")
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open = %v; want an error without the password", err)
		}
	})
}

func TestOpenPostgresURL(t *testing.T) {
	pg := pgtest.New(t)
	for _, u := range []string{pg, "postgresql" + strings.TrimPrefix(pg, "postgres")} {
		t.Run(u, func(t *testing.T) { testOpenURL(t, u) })
	}
}

// testOpenURL opens the store u names and makes a round trip through it.
func testOpenURL(t *testing.T, u string) {
	ctx := context.Background()
	s, err := approvals.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := mustCreate(t, s, request("weather", nil, time.Now(), time.Hour))
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Error(err)
	}
}

func TestOpenSQLiteRejects(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("this is not a database\n", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	rawSQLite(t, newer, `PRAGMA user_version = 99`)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"empty path", "", "empty path"},
		{"a directory", dir, "is a directory"},
		{"missing directory", filepath.Join(dir, "missing", "a.db"), "no such file or directory"},
		{"not a database", garbage, "not an SQLite database"},
		{"a newer schema", newer, "newer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.Open(tc.path)
			if err == nil {
				s.Close()
				t.Fatalf("sqlite.Open(%q) succeeded; want an error", tc.path)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("sqlite.Open(%q) = %v; want it to say %q", tc.path, err, tc.want)
			}
		})
	}
}

func TestOpenPostgresRejects(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for _, tc := range []struct {
		name, dsn, want string
	}{
		{"does not parse", "postgres://%zz", "does not parse"},
		{"nothing listening", fmt.Sprintf("postgres://app@127.0.0.1:%d/approvals?connect_timeout=5", closedPort), "cannot connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := postgres.Open(context.Background(), tc.dsn)
			if err == nil {
				s.Close()
				t.Fatalf("postgres.Open(%q) succeeded; want an error", tc.dsn)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("postgres.Open(%q) = %v; want it to say %q", tc.dsn, err, tc.want)
			}
		})
	}
}

// The database file, its write-ahead log and its shared memory are readable by
// the owner only, whatever the umask.
func TestSQLiteFileMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "approvals.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, request("weather", nil, time.Now(), time.Hour)) // a write: the log exists
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %v; want 0600", filepath.Base(p), mode)
		}
	}
}

// rawSQLite runs statements on the SQLite database at path, past the store.
func rawSQLite(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// rawPostgres runs statements on the PostgreSQL database dsn, past the store.
func rawPostgres(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range stmts {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// A row that cannot be read is an error that names the request, never a panic,
// and a corrupt approved request is not used up by a claim.
func TestCorruptRows(t *testing.T) {
	ctx := context.Background()
	raw := map[string]func(t *testing.T, where string, stmts ...string){"sqlite": rawSQLite, "postgres": rawPostgres}
	for _, b := range databases() {
		t.Run(b.name, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				approve bool // approve before corrupting
				set     string
			}{
				{"arguments not JSON", false, `arguments = '{"city": '`},
				{"arguments not an object", false, `arguments = '[1, 2]'`},
				{"unknown state", false, `state = 'waiting'`},
				{"approved without a decision", true, `decided = false`},
				{"approved, arguments not JSON", true, `arguments = 'nonsense'`},
			} {
				t.Run(tc.name, func(t *testing.T) {
					where := b.fresh(t)
					s := b.mustOpen(t, where)
					r := mustCreate(t, s, request("weather", map[string]any{"city": "Rome"}, time.Now(), time.Hour))
					if tc.approve {
						mustDecide(t, s, r.ID, true)
					}
					raw[b.name](t, where, `UPDATE mcs_approvals SET `+tc.set+` WHERE id = '`+r.ID+`'`)

					check := func(op string, err error) {
						t.Helper()
						if !errors.Is(err, approvals.ErrCorrupt) || !strings.Contains(err.Error(), r.ID) {
							t.Errorf("%s = %v; want ErrCorrupt naming %s", op, err, r.ID)
						}
					}
					_, err := s.Get(ctx, r.ID)
					check("Get", err)
					_, err = s.List(ctx, approvals.Filter{})
					check("List", err)
					if !tc.approve {
						_, err = s.Decide(ctx, r.ID, approvals.Decision{Approve: true})
						check("Decide", err)
						return
					}
					_, ok, err := s.Claim(ctx, r.Fingerprint)
					check("Claim", err)
					if ok {
						t.Error("Claim of a corrupt request reported success")
					}
					// Repaired, the request is still there to claim: the failed claim
					// changed nothing.
					raw[b.name](t, where, `UPDATE mcs_approvals SET arguments = '{"city":"Rome"}' WHERE id = '`+r.ID+`'`)
					if tc.set == `decided = false` {
						return
					}
					if _, ok, err := s.Claim(ctx, r.Fingerprint); !ok || err != nil {
						t.Errorf("Claim after the repair = %v, %v; want the request", ok, err)
					}
				})
			}
		})
	}
}

// A write lock held past the busy timeout is an error that says so, and the
// store works again once the lock is gone.
func TestSQLiteLocked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "approvals.db")
	s, err := sqlite.Open(path, approvals.WithBusyTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := mustCreate(t, s, request("weather", nil, time.Now(), time.Hour))

	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	for op, err := range map[string]error{
		"Create": func() error { _, err := s.Create(ctx, request("weather", nil, time.Now(), time.Hour)); return err }(),
		"Decide": func() error { _, err := s.Decide(ctx, r.ID, approvals.Decision{Approve: true}); return err }(),
		"Claim":  func() error { _, _, err := s.Claim(ctx, r.Fingerprint); return err }(),
	} {
		if err == nil || !strings.Contains(err.Error(), "stayed locked") || !strings.Contains(err.Error(), "try again") {
			t.Errorf("%s under another process's lock = %v; want an error saying the database stayed locked", op, err)
		}
	}
	if got, err := s.Get(ctx, r.ID); err != nil || got.State != approvals.Pending {
		t.Errorf("Get under the lock = %v, %v; want the pending request (readers are not blocked)", got.State, err)
	}
	if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, r.ID, approvals.Decision{Approve: true}); err != nil {
		t.Errorf("Decide after the lock is gone: %v", err)
	}
}

// A path with characters that mean something in a URI names that very file.
func TestSQLiteOddPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd name ?x=1#frag%20.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCreate(t, s, request("weather", nil, time.Now(), time.Hour))
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	base := filepath.Base(path)
	if diff := cmp.Diff([]string{base, base + "-shm", base + "-wal"}, names); diff != "" {
		t.Errorf("files in the directory (-want +got):\n%s", diff)
	}
}
