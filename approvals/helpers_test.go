package approvals_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/postgres"
	"github.com/mcs-go/mcs/approvals/sqlite"
	"github.com/mcs-go/mcs/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left running:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// backend is one kind of store: fresh makes a new, empty database and returns
// where it is; open opens a store on it (again, for the restart and race tests).
type backend struct {
	name  string
	fresh func(t *testing.T) string
	open  func(t *testing.T, where string, opts ...approvals.Option) (approvals.Store, error)
	// shared reports whether two opens of one place see the same requests.
	shared bool
}

func backends() []backend {
	return []backend{
		{
			name:  "memory",
			fresh: func(*testing.T) string { return "" },
			open: func(_ *testing.T, _ string, opts ...approvals.Option) (approvals.Store, error) {
				return approvals.NewMemoryStore(opts...), nil
			},
		},
		{
			name:  "sqlite",
			fresh: func(t *testing.T) string { return filepath.Join(t.TempDir(), "approvals.db") },
			open: func(_ *testing.T, where string, opts ...approvals.Option) (approvals.Store, error) {
				return sqlite.Open(where, opts...)
			},
			shared: true,
		},
		{
			name:  "postgres",
			fresh: func(t *testing.T) string { return pgtest.New(t) },
			open: func(t *testing.T, where string, opts ...approvals.Option) (approvals.Store, error) {
				return postgres.Open(t.Context(), where, opts...)
			},
			shared: true,
		},
	}
}

// mustOpen opens a store on where and closes it when t ends.
func (b backend) mustOpen(t *testing.T, where string, opts ...approvals.Option) approvals.Store {
	t.Helper()
	s, err := b.open(t, where, opts...)
	if err != nil {
		t.Fatalf("open %s store: %v", b.name, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close %s store: %v", b.name, err)
		}
	})
	return s
}

// clock is a test clock that moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

var epoch = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

func newClock() *clock { return &clock{now: epoch} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var weatherTool = mcs.Tool{
	Name:        "get_weather",
	Description: "Current weather for a city.",
	Parameters: []mcs.Parameter{
		{Name: "city", Required: true},
		{Name: "days", Schema: map[string]any{"type": "integer"}},
	},
}

// request returns a request for a call of weatherTool on label with args,
// expiring ttl after now.
func request(label string, args map[string]any, now time.Time, ttl time.Duration) approvals.Request {
	return approvals.Request{
		Label:       label,
		Tool:        weatherTool.Name,
		Arguments:   args,
		Fingerprint: approvals.Fingerprint(label, weatherTool, args),
		Expires:     now.Add(ttl),
	}
}

func mustCreate(t *testing.T, s approvals.Store, r approvals.Request) approvals.Request {
	t.Helper()
	got, err := s.Create(context.Background(), r)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return got
}

func mustDecide(t *testing.T, s approvals.Store, id string, approve bool) approvals.Request {
	t.Helper()
	got, err := s.Decide(context.Background(), id, approvals.Decision{Approve: approve, By: "alice", Reason: "checked"})
	if err != nil {
		t.Fatalf("Decide(%s, %v): %v", id, approve, err)
	}
	return got
}
