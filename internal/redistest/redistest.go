// Package redistest gives tests a real Redis server: a throw-away redis-server
// started from the machine's binary on a free loopback port, in a temporary
// directory, without persistence, shared by all the tests of one test binary.
//
// A package that uses it calls [Main] from its TestMain, and [New] in each test
// that needs a database:
//
//	func TestMain(m *testing.M) { os.Exit(redistest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := redistest.New(t) // redis://127.0.0.1:PORT/N, an empty database
//		...
//	}
//
// redis-server is looked up on PATH; when it is absent, New skips the test and
// says what to install. MCS_REDISTEST_URL, when set, names an existing server
// instead (a redis:// URL; its databases 1 to 15 are flushed by the tests).
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	mainCalled bool
	once       sync.Once
	shared     *server
	startErr   error
	skipReason string

	dbMu   sync.Mutex
	nextDB = 1
)

type server struct {
	addr string // host:port
	cmd  *exec.Cmd
	dir  string
}

// Main runs the tests of m and then stops the server [New] started, if it did.
// It returns the exit code for os.Exit.
func Main(m *testing.M) int {
	mainCalled = true
	code := m.Run()
	if shared != nil && shared.cmd != nil {
		shared.cmd.Process.Kill()
		shared.cmd.Wait()
		os.RemoveAll(shared.dir)
	}
	return code
}

// New returns the URL of an empty database (1 to 15, in turn) on the shared
// server, starting the server on first use. It skips t when redis-server is
// absent, and fails t when the server cannot be started or the package's
// TestMain does not call [Main].
func New(t testing.TB) string {
	t.Helper()
	if !mainCalled {
		t.Fatal("redistest: the package's TestMain must call redistest.Main (it stops the shared server)")
	}
	once.Do(func() { shared, skipReason, startErr = start() })
	if skipReason != "" {
		t.Skip("redistest: " + skipReason)
	}
	if startErr != nil {
		t.Fatalf("redistest: %v", startErr)
	}
	dbMu.Lock()
	db := nextDB
	nextDB = nextDB%15 + 1
	dbMu.Unlock()
	u := fmt.Sprintf("redis://%s/%d", shared.addr, db)
	opt, _ := redis.ParseURL(u)
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("redistest: flush database %d: %v", db, err)
	}
	return u
}

func start() (*server, string, error) {
	if u := os.Getenv("MCS_REDISTEST_URL"); u != "" {
		opt, err := redis.ParseURL(u)
		if err != nil {
			return nil, "", fmt.Errorf("MCS_REDISTEST_URL: %w", err)
		}
		return &server{addr: opt.Addr}, "", nil
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "redis-server is not on PATH; install it (Debian: apt-get install redis-server) or set MCS_REDISTEST_URL", nil
	}
	dir, err := os.MkdirTemp("", "mcs-redistest-")
	if err != nil {
		return nil, "", err
	}
	var last error
	for range 3 { // a port found free may be taken before the server binds it
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		s, err := launch(bin, dir, port)
		if err == nil {
			return s, "", nil
		}
		last = err
	}
	os.RemoveAll(dir)
	return nil, "", last
}

// launch starts redis-server on port and waits for its "Ready to accept
// connections" line.
func launch(bin, dir string, port int) (*server, error) {
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--protected-mode", "yes", "--databases", "16", "--loglevel", "notice")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log []string
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "Ready to accept connections") {
				ready <- nil
				for sc.Scan() { // keep the pipe drained
				}
				return
			}
			log = append(log, line)
		}
		ready <- fmt.Errorf("redis-server ended before it was ready:\n%s", strings.Join(log, "\n"))
	}()
	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case err := <-ready:
		if err != nil {
			cmd.Wait()
			return nil, err
		}
	case <-t.C:
		cmd.Process.Kill()
		cmd.Wait()
		return nil, errors.New("redis-server did not become ready within 30 s")
	}
	return &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, dir: dir}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
