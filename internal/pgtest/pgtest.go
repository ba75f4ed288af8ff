// Package pgtest gives tests a real PostgreSQL server: a throw-away one started
// from the machine's initdb and pg_ctl on a free loopback port, in a temporary
// directory, shared by all the tests of one test binary.
//
// A package that uses it calls [Main] from its TestMain, and [New] in each test
// that needs a database:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.New(t) // a new, empty database; dropped when t ends
//		...
//	}
//
// The binaries are looked up on PATH and then under /usr/lib/postgresql/*/bin;
// when they are absent, New skips the test and says what to install. PostgreSQL
// refuses to run as root, so a process running as root runs initdb and the
// server as the user "nobody" (or "postgres"), which owns the temporary
// directory. The server listens on 127.0.0.1 only, trusts every local
// connection (it is reachable only from this machine, for the life of the test
// binary), and keeps its unix socket in the temporary directory. Main stops it
// and removes the directory after the tests.
//
// MCS_PGTEST_DSN, when set, names an existing server instead (a postgres:// URL
// whose user may create databases); nothing is started then.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	mainCalled bool
	once       sync.Once
	shared     *server
	startErr   error
	skipReason string
)

// server is a running throw-away server, or an external one (dir empty).
type server struct {
	base  *url.URL // the admin URL, database "postgres" (or the external DSN)
	dir   string   // temporary directory: data, socket, log
	pgCtl string
	cred  *syscall.Credential
}

// Main runs the tests of m and then stops the server [New] started, if it did,
// removing its directory. It returns the exit code for os.Exit.
func Main(m *testing.M) int {
	mainCalled = true
	code := m.Run()
	if shared != nil && shared.dir != "" {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// New returns the URL of a new, empty database on the shared server, starting
// the server on first use, and drops the database when t ends. It skips t when
// the PostgreSQL binaries are absent, and fails t when the server cannot be
// started or the package's TestMain does not call [Main].
func New(t testing.TB) string {
	t.Helper()
	if !mainCalled {
		t.Fatal("pgtest: the package's TestMain must call pgtest.Main (it stops the shared server)")
	}
	once.Do(func() { shared, skipReason, startErr = start() })
	if skipReason != "" {
		t.Skip("pgtest: " + skipReason)
	}
	if startErr != nil {
		t.Fatalf("pgtest: %v", startErr)
	}
	name := "t_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := shared.exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := shared.exec(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u := *shared.base
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// exec runs one statement on the admin database.
func (s *server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.base.String())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// start starts the shared server; skip is set when the binaries are absent.
func start() (s *server, skip string, err error) {
	if dsn := os.Getenv("MCS_PGTEST_DSN"); dsn != "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, "", fmt.Errorf("MCS_PGTEST_DSN: %w", err)
		}
		return &server{base: u}, "", nil
	}
	initdb, pgCtl := binaries()
	if initdb == "" || pgCtl == "" {
		return nil, "PostgreSQL's initdb and pg_ctl are not on PATH nor under /usr/lib/postgresql/*/bin; install them (Debian: apt-get install postgresql) or set MCS_PGTEST_DSN", nil
	}
	dir, err := os.MkdirTemp("", "mcs-pgtest-")
	if err != nil {
		return nil, "", err
	}
	s = &server{dir: dir, pgCtl: pgCtl}
	defer func() {
		if err != nil {
			_ = s.stop()
		}
	}()
	if os.Geteuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			return s, "", err
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return s, "", err
		}
	}
	data := filepath.Join(dir, "data")
	if err := s.run(initdb, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return s, "", fmt.Errorf("initdb: %w", err)
	}
	// A port found free may be taken before the server binds it: try a few.
	for range 3 {
		port, perr := freePort()
		if perr != nil {
			return s, "", perr
		}
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200", port, dir)
		err = s.run(pgCtl, "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o", opts, "start")
		if err == nil {
			s.base = &url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/postgres", RawQuery: "sslmode=disable"}
			return s, "", nil
		}
	}
	log, _ := os.ReadFile(filepath.Join(dir, "log"))
	return s, "", fmt.Errorf("pg_ctl start: %w\n%s", err, log)
}

// stop stops the server, if it runs, and removes its directory.
func (s *server) stop() error {
	var errs []error
	if _, err := os.Stat(filepath.Join(s.dir, "data", "postmaster.pid")); err == nil {
		if err := s.run(s.pgCtl, "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
			errs = append(errs, fmt.Errorf("pg_ctl stop: %w", err))
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// run runs a PostgreSQL program in the server's directory, as the server's user.
func (s *server) run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "LC_ALL=C", "TZ=UTC"}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(name), err, out)
	}
	return nil
}

// binaries finds initdb and pg_ctl, preferring one directory holding both.
func binaries() (initdb, pgCtl string) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if q := filepath.Join(filepath.Dir(p), "pg_ctl"); isExecutable(q) {
			return p, q
		}
		if q, err := exec.LookPath("pg_ctl"); err == nil {
			return p, q
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// The newest version first: compare the major version numerically.
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(a)), 64)
		vb, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(b)), 64)
		switch {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return 0
	})
	for _, d := range dirs {
		i, c := filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl")
		if isExecutable(i) && isExecutable(c) {
			return i, c
		}
	}
	return "", ""
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// unprivileged returns the credentials of a user that is not root, for the
// server, which refuses to run as root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"nobody", "postgres"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New(`running as root, and neither user "nobody" nor "postgres" exists to run PostgreSQL as (create one, e.g. useradd --system postgres)`)
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
