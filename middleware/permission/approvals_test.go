package permission_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/sqlite"
	"github.com/mcs-go/mcs/middleware/hooks"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
)

// stores are the stores the approval tests run on.
func stores() []struct {
	name string
	open func(t *testing.T, opts ...approvals.Option) approvals.Store
} {
	return []struct {
		name string
		open func(t *testing.T, opts ...approvals.Option) approvals.Store
	}{
		{"memory", func(_ *testing.T, opts ...approvals.Option) approvals.Store { return approvals.NewMemoryStore(opts...) }},
		{"sqlite", func(t *testing.T, opts ...approvals.Option) approvals.Store {
			s, err := sqlite.Open(filepath.Join(t.TempDir(), "approvals.db"), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}},
	}
}

// defDriver publishes one tool, delete_file, whose description can change, and
// counts its runs.
type defDriver struct {
	mu   sync.Mutex
	desc string
	runs atomic.Int64
}

func (d *defDriver) Meta() mcs.Meta { return mcs.Meta{ID: "files", Name: "Files", Version: "1.0.0"} }

func (d *defDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	desc := d.desc
	if desc == "" {
		desc = "Delete a file."
	}
	return []mcs.Tool{{Name: "delete_file", Description: desc, Parameters: []mcs.Parameter{{Name: "path", Required: true}}}}, nil
}

func (d *defDriver) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	d.runs.Add(1)
	return "deleted " + args["path"].(string), nil
}

func (d *defDriver) setDescription(s string) {
	d.mu.Lock()
	d.desc = s
	d.mu.Unlock()
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// outcomeOf describes a call's outcome for comparison: the code, and the id of
// a signal's Data.
func outcomeOf(res any, err error) (code mcs.Code, id string) {
	if s, ok := res.(mcs.Signal); ok {
		id, _ = s.Data["id"].(string)
	}
	return mcs.CodeOf(res, err), id
}

// TestApprovalsLifecycle walks one call through every state of its requests:
// pending (asked twice: same id), approved (runs once), used (a new request),
// denied (the denial with the reason), expired (a new request), and a denial
// past its expiry (a new request).
func TestApprovalsLifecycle(t *testing.T) {
	type step struct {
		do       string // "call", "approve", "deny", "advance"
		wantCode mcs.Code
		wantID   string // for a call: "" no id, "new" a new id, "same" the last id
		wantRuns int64  // the tool's runs after the step
		wantMsg  string // a fragment of the signal's message
	}
	steps := []step{
		{do: "call", wantCode: mcs.CodePending, wantID: "new"},
		{do: "call", wantCode: mcs.CodePending, wantID: "same"},
		{do: "approve"},
		{do: "call", wantCode: mcs.CodeOK, wantRuns: 1},
		{do: "call", wantCode: mcs.CodePending, wantID: "new", wantRuns: 1},
		{do: "call", wantCode: mcs.CodePending, wantID: "same", wantRuns: 1},
		{do: "deny"},
		{do: "call", wantCode: mcs.CodeDenied, wantID: "same", wantRuns: 1, wantMsg: "Reason: not on Fridays"},
		{do: "call", wantCode: mcs.CodeDenied, wantID: "same", wantRuns: 1},
		{do: "advance"}, // past the denial's Expires: the call is asked about again
		{do: "call", wantCode: mcs.CodePending, wantID: "new", wantRuns: 1},
		{do: "advance"}, // the pending request expires
		{do: "call", wantCode: mcs.CodePending, wantID: "new", wantRuns: 1},
		{do: "approve"},
		{do: "advance"}, // the approval expires unused
		{do: "call", wantCode: mcs.CodePending, wantID: "new", wantRuns: 1},
	}
	for _, st := range stores() {
		t.Run(st.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
			store := st.open(t, approvals.WithClock(clock.Now))
			m := permission.New(nil, permission.WithApprovals(store, time.Hour))
			permission.SetClock(m, clock.Now)
			drv := &defDriver{}
			d := mcs.NewBaseDriver(drv, mcs.WithMiddleware(m))
			ctx := context.Background()
			args := map[string]any{"path": "a.txt"}
			var last string
			seen := map[string]bool{}
			for i, s := range steps {
				switch s.do {
				case "approve", "deny":
					if _, err := store.Decide(ctx, last, approvals.Decision{Approve: s.do == "approve", By: "ops", Reason: "not on Fridays"}); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					continue
				case "advance":
					clock.Add(2 * time.Hour)
					continue
				}
				res, err := d.ExecuteTool(ctx, "delete_file", args)
				code, id := outcomeOf(res, err)
				if code != s.wantCode {
					t.Fatalf("step %d: code %s (%v, %v), want %s", i, code, res, err, s.wantCode)
				}
				switch s.wantID {
				case "new":
					if id == "" || seen[id] {
						t.Fatalf("step %d: id %q, want a new one", i, id)
					}
				case "same":
					if id != last {
						t.Fatalf("step %d: id %q, want %q", i, id, last)
					}
				}
				if id != "" {
					seen[id], last = true, id
				}
				if got := drv.runs.Load(); got != s.wantRuns {
					t.Fatalf("step %d: %d runs, want %d", i, got, s.wantRuns)
				}
				if sig, ok := res.(mcs.Signal); ok && !strings.Contains(sig.Message, s.wantMsg) {
					t.Fatalf("step %d: message %q lacks %q", i, sig.Message, s.wantMsg)
				}
				if code == mcs.CodeOK && res != "deleted a.txt" {
					t.Fatalf("step %d: result %v", i, res)
				}
			}
			// Every request made is in the store, with the call's label, tool and arguments.
			reqs, err := store.List(ctx, approvals.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != len(seen) {
				t.Fatalf("%d requests stored, %d ids seen", len(reqs), len(seen))
			}
			for _, r := range reqs {
				if diff := cmp.Diff(map[string]any{"path": "a.txt"}, r.Arguments); diff != "" || r.Tool != "delete_file" || r.Label != "" {
					t.Fatalf("request %+v: arguments (-want +got):\n%s", r, diff)
				}
				if ttl := r.Expires.Sub(r.Created); ttl != time.Hour {
					t.Fatalf("request %s expires %s after it was made, want the ttl, 1h", r.ID, ttl)
				}
			}
		})
	}
}

// TestApprovalsDoNotMatch: an approval binds to the exact call. A call with other
// arguments, on the driver under another label, or of a tool whose definition
// changed gets a request of its own and does not run; the approval stays unused.
func TestApprovalsDoNotMatch(t *testing.T) {
	cases := []struct {
		name   string
		call   string // the orchestrator's name
		args   map[string]any
		change bool // change the tool's description first
	}{
		{"other arguments", "files__delete_file", map[string]any{"path": "b.txt"}, false},
		{"arguments of another type", "files__delete_file", map[string]any{"path": []any{"a.txt"}}, false},
		{"more arguments", "files__delete_file", map[string]any{"path": "a.txt", "force": true}, false},
		{"another label", "backup__delete_file", map[string]any{"path": "a.txt"}, false},
		{"changed definition", "files__delete_file", map[string]any{"path": "a.txt"}, true},
	}
	for _, st := range stores() {
		for _, c := range cases {
			t.Run(st.name+"/"+c.name, func(t *testing.T) {
				store := st.open(t)
				m := permission.New(nil, permission.WithApprovals(store, time.Hour))
				files, backup := &defDriver{}, &defDriver{}
				o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()))
				for label, drv := range map[string]*defDriver{"files": files, "backup": backup} {
					if err := o.AddDriver(label, mcs.NewBaseDriver(drv, mcs.WithMiddleware(m))); err != nil {
						t.Fatal(err)
					}
				}
				ctx := context.Background()
				res, err := o.ExecuteTool(ctx, "files__delete_file", map[string]any{"path": "a.txt"})
				_, approved := outcomeOf(res, err)
				if approved == "" {
					t.Fatalf("first call: %v, %v", res, err)
				}
				if _, err := store.Decide(ctx, approved, approvals.Decision{Approve: true, By: "ops"}); err != nil {
					t.Fatal(err)
				}
				if c.change {
					files.setDescription("Delete a file, and its backups.")
				}
				res, err = o.ExecuteTool(ctx, c.call, c.args)
				code, id := outcomeOf(res, err)
				if code != mcs.CodePending || id == "" || id == approved {
					t.Fatalf("call: %s with id %q (approved %q): %v, %v", code, id, approved, res, err)
				}
				if runs := files.runs.Load() + backup.runs.Load(); runs != 0 {
					t.Fatalf("%d runs, want none", runs)
				}
				r, err := store.Get(ctx, approved)
				if err != nil || r.State != approvals.Approved {
					t.Fatalf("the approval is %v (%v), want it still approved", r.State, err)
				}
				if c.name == "another label" {
					got, err := store.Get(ctx, id)
					if err != nil || got.Label != "backup" {
						t.Fatalf("request of the other label: %+v, %v", got, err)
					}
				}
			})
		}
	}
}

// countingStore counts the calls of every method of the store it wraps.
type countingStore struct {
	approvals.Store
	n atomic.Int64
}

func (s *countingStore) Create(ctx context.Context, r approvals.Request) (approvals.Request, error) {
	s.n.Add(1)
	return s.Store.Create(ctx, r)
}

func (s *countingStore) Get(ctx context.Context, id string) (approvals.Request, error) {
	s.n.Add(1)
	return s.Store.Get(ctx, id)
}

func (s *countingStore) List(ctx context.Context, f approvals.Filter) ([]approvals.Request, error) {
	s.n.Add(1)
	return s.Store.List(ctx, f)
}

func (s *countingStore) Decide(ctx context.Context, id string, d approvals.Decision) (approvals.Request, error) {
	s.n.Add(1)
	return s.Store.Decide(ctx, id, d)
}

func (s *countingStore) Claim(ctx context.Context, fp string) (approvals.Request, bool, error) {
	s.n.Add(1)
	return s.Store.Claim(ctx, fp)
}

func (s *countingStore) ClaimID(ctx context.Context, id, fp string) (approvals.Request, bool, error) {
	s.n.Add(1)
	return s.Store.ClaimID(ctx, id, fp)
}

// TestApprovalsRulesFirst: a call a rule decides never touches the store, and
// with approvals the consent handler is never asked.
func TestApprovalsRulesFirst(t *testing.T) {
	store := &countingStore{Store: approvals.NewMemoryStore()}
	ask := func(context.Context, string, map[string]any) (bool, error) {
		t.Error("the consent handler was asked")
		return true, nil
	}
	m := permission.New(ask, permission.WithRules(permission.Allow("read_*"), permission.Deny("delete_*")), permission.WithApprovals(store, time.Hour))
	d := mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(m))
	ctx := context.Background()
	cases := []struct {
		tool      string
		want      mcs.Code
		wantStore int64
	}{
		{"read_file", mcs.CodeOK, 0},
		{"delete_file", mcs.CodeDenied, 0},
		{"write_file", mcs.CodePending, 3}, // claim, look up, create
	}
	for _, c := range cases {
		store.n.Store(0)
		res, err := d.ExecuteTool(ctx, c.tool, map[string]any{"path": "a.txt"})
		if got := mcs.CodeOf(res, err); got != c.want {
			t.Errorf("%s: %s (%v, %v), want %s", c.tool, got, res, err, c.want)
		}
		if got := store.n.Load(); got != c.wantStore {
			t.Errorf("%s: %d store accesses, want %d", c.tool, got, c.wantStore)
		}
	}
}

// TestApprovalsExactlyOnce: many goroutines make the same approved call at once;
// exactly one runs it, the others wait for a new approval.
func TestApprovalsExactlyOnce(t *testing.T) {
	for _, st := range stores() {
		t.Run(st.name, func(t *testing.T) {
			store := st.open(t)
			drv := &defDriver{}
			// Each goroutine has its own middleware, as separate processes would.
			const n = 16
			drivers := make([]*mcs.BaseDriver, n)
			for i := range drivers {
				drivers[i] = mcs.NewBaseDriver(drv, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(store, time.Hour))))
			}
			ctx := context.Background()
			args := map[string]any{"path": "a.txt"}
			res, err := drivers[0].ExecuteTool(ctx, "delete_file", args)
			_, id := outcomeOf(res, err)
			if _, err := store.Decide(ctx, id, approvals.Decision{Approve: true, By: "ops"}); err != nil {
				t.Fatal(err)
			}
			start := make(chan struct{})
			codes := make([]mcs.Code, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					codes[i] = mcs.CodeOf(drivers[i].ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"}))
				})
			}
			close(start)
			wg.Wait()
			if got := drv.runs.Load(); got != 1 {
				t.Fatalf("%d runs, want exactly 1 (codes %v)", got, codes)
			}
			ok := 0
			for _, c := range codes {
				switch c {
				case mcs.CodeOK:
					ok++
				case mcs.CodePending:
				default:
					t.Errorf("code %s, want ok or pending", c)
				}
			}
			if ok != 1 {
				t.Fatalf("%d calls ran, want 1 (codes %v)", ok, codes)
			}
			r, err := store.Get(ctx, id)
			if err != nil || r.State != approvals.Used {
				t.Fatalf("request %v, %v; want used", r.State, err)
			}
		})
	}
}

// brokenStore fails every method, as a database that is down does.
type brokenStore struct{ approvals.Store }

var errDown = errors.New("approvals: sqlite: database is locked")

func (brokenStore) Create(context.Context, approvals.Request) (approvals.Request, error) {
	return approvals.Request{}, errDown
}

func (brokenStore) List(context.Context, approvals.Filter) ([]approvals.Request, error) {
	return nil, errDown
}

func (brokenStore) Claim(context.Context, string) (approvals.Request, bool, error) {
	return approvals.Request{}, false, errDown
}

func (brokenStore) ClaimID(context.Context, string, string) (approvals.Request, bool, error) {
	return approvals.Request{}, false, errDown
}

// listFails claims and creates, but cannot look up.
type listFails struct{ approvals.Store }

func (listFails) List(context.Context, approvals.Filter) ([]approvals.Request, error) {
	return nil, errDown
}

// createFails claims and looks up, but cannot store a request.
type createFails struct{ approvals.Store }

func (createFails) Create(context.Context, approvals.Request) (approvals.Request, error) {
	return approvals.Request{}, errDown
}

// TestApprovalsFailClosed: when the store fails, the call fails with a
// ConsentError naming the store, and never runs.
func TestApprovalsFailClosed(t *testing.T) {
	closed, err := sqlite.Open(filepath.Join(t.TempDir(), "approvals.db"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	cases := []struct {
		name    string
		store   approvals.Store
		run     bool // the call is the run of an approval
		wantErr error
	}{
		{"down", brokenStore{}, false, errDown},
		{"down, run", brokenStore{}, true, errDown},
		{"lookup fails", listFails{approvals.NewMemoryStore()}, false, errDown},
		{"create fails", createFails{approvals.NewMemoryStore()}, false, errDown},
		{"closed sqlite", closed, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			drv := &defDriver{}
			d := mcs.NewBaseDriver(drv, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(c.store, time.Hour))))
			ctx := context.Background()
			if c.run {
				ctx = approvals.ContextWithRun(ctx, "someid")
			}
			res, err := d.ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"})
			var ce *permission.ConsentError
			if !errors.As(err, &ce) || ce.Reason != permission.ReasonApprovalStore {
				t.Fatalf("got %v, %v; want a ConsentError of reason %s", res, err, permission.ReasonApprovalStore)
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("error %v does not wrap %v", err, c.wantErr)
			}
			if !strings.Contains(err.Error(), "approval store failed") {
				t.Errorf("error %q does not name the store", err)
			}
			if drv.runs.Load() != 0 {
				t.Error("the tool ran")
			}
		})
	}
}

// TestApprovalsRunByID: a call marked as the run of an approval runs when it
// claims one, and otherwise fails without making a new request.
func TestApprovalsRunByID(t *testing.T) {
	store := approvals.NewMemoryStore()
	drv := &defDriver{}
	d := mcs.NewBaseDriver(drv, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(store, time.Hour))))
	ctx := context.Background()
	args := map[string]any{"path": "a.txt"}
	res, err := d.ExecuteTool(ctx, "delete_file", args)
	_, id := outcomeOf(res, err)
	run := approvals.ContextWithRun(ctx, id)

	_, err = d.ExecuteTool(run, "delete_file", args) // still pending
	var ce *permission.ConsentError
	if !errors.As(err, &ce) || ce.Reason != permission.ReasonNotApproved || !strings.Contains(err.Error(), id) {
		t.Fatalf("run of a pending request: %v; want a ConsentError of reason %s naming the id", err, permission.ReasonNotApproved)
	}
	if _, err := store.Decide(ctx, id, approvals.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if res, err := d.ExecuteTool(run, "delete_file", args); err != nil || res != "deleted a.txt" {
		t.Fatalf("run of the approval: %v, %v", res, err)
	}
	if _, err = d.ExecuteTool(run, "delete_file", args); !errors.As(err, &ce) || ce.Reason != permission.ReasonNotApproved {
		t.Fatalf("second run: %v; want ReasonNotApproved", err)
	}
	reqs, err := store.List(ctx, approvals.Filter{})
	if err != nil || len(reqs) != 1 || drv.runs.Load() != 1 {
		t.Fatalf("%d requests (%v), %d runs; want 1 and 1", len(reqs), err, drv.runs.Load())
	}
}

// TestApprovalsRunByIDTakesThatRequest: of two approvals of one call, the run of
// one id uses that request and leaves the other approved.
func TestApprovalsRunByIDTakesThatRequest(t *testing.T) {
	store := approvals.NewMemoryStore()
	drv := &defDriver{}
	d := mcs.NewBaseDriver(drv, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(store, time.Hour))))
	ctx := context.Background()
	args := map[string]any{"path": "a.txt"}
	res, err := d.ExecuteTool(ctx, "delete_file", args)
	_, first := outcomeOf(res, err)
	if _, err := store.Decide(ctx, first, approvals.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecuteTool(ctx, "delete_file", args); err != nil { // runs, using first
		t.Fatal(err)
	}
	res, err = d.ExecuteTool(ctx, "delete_file", args)
	_, second := outcomeOf(res, err)
	res, err = d.ExecuteTool(ctx, "delete_file", map[string]any{"path": "b.txt"})
	_, other := outcomeOf(res, err)
	r, err := store.Create(ctx, approvals.Request{Tool: "delete_file", Arguments: args, Fingerprint: mustGet(t, store, second).Fingerprint, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	third := r.ID
	for _, id := range []string{second, third, other} {
		if _, err := store.Decide(ctx, id, approvals.Decision{Approve: true}); err != nil {
			t.Fatal(err)
		}
	}
	// The run of second's id uses second, though third is newer.
	if _, err := d.ExecuteTool(approvals.ContextWithRun(ctx, second), "delete_file", args); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, store, second).State; got != approvals.Used {
		t.Errorf("the request run by id is %s; want used", got)
	}
	if got := mustGet(t, store, third).State; got != approvals.Approved {
		t.Errorf("the other approval of the same call is %s; want approved (unused)", got)
	}
	// The id of another call's approval does not let this call run.
	var ce *permission.ConsentError
	if _, err := d.ExecuteTool(approvals.ContextWithRun(ctx, other), "delete_file", args); !errors.As(err, &ce) || ce.Reason != permission.ReasonNotApproved {
		t.Fatalf("run with another call's approval id: %v; want ReasonNotApproved", err)
	}
	if got := mustGet(t, store, other).State; got != approvals.Approved {
		t.Errorf("the other call's approval is %s after a mismatched run; want approved", got)
	}
}

func mustGet(t *testing.T, s approvals.Store, id string) approvals.Request {
	t.Helper()
	r, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestApprovalsPendingJSON is the text the model reads for a waiting call, and
// what it reads for a denied one.
func TestApprovalsPendingJSON(t *testing.T) {
	store := approvals.NewMemoryStore()
	d := mcs.NewBaseDriver(&defDriver{}, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(store, time.Hour))))
	ctx := context.Background()
	res, err := d.ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"})
	_, id := outcomeOf(res, err)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"approval_pending":true,"id":"ID","message":"The call to 'delete_file' did not run: it waits for a person's approval, under the approval id ID. Tell the user that it waits for approval and give them the id. Do not call it again until the user says it was approved.","tool":"delete_file"}`
	if diff := cmp.Diff(strings.ReplaceAll(want, "ID", id), string(b)); diff != "" {
		t.Errorf("pending JSON (-want +got):\n%s", diff)
	}
	if _, err := store.Decide(ctx, id, approvals.Decision{By: "ops", Reason: "use the trash instead"}); err != nil {
		t.Fatal(err)
	}
	res, _ = d.ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"})
	b, _ = json.Marshal(res)
	want = `{"id":"ID","message":"A person denied execution of 'delete_file'. Reason: use the trash instead","permission_denied":true,"tool":"delete_file"}`
	if diff := cmp.Diff(strings.ReplaceAll(want, "ID", id), string(b)); diff != "" {
		t.Errorf("denied JSON (-want +got):\n%s", diff)
	}
}

// TestApprovalsAudit: the hooks audit outside the permission middleware records
// a waiting call as pending and a denied one as denied, each with the request's
// id, and the approved run as ok with the id of the approval it used; the
// decisions reach the file from the store's journal.
func TestApprovalsAudit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := hooks.OpenAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	store := approvals.NewMemoryStore()
	d := mcs.NewBaseDriver(&defDriver{}, mcs.WithMiddleware(
		hooks.New(hooks.WithSet(audit.Hooks())),
		permission.New(nil, permission.WithApprovals(store, time.Hour)),
	))
	ctx := context.Background()
	call := func() string {
		res, err := d.ExecuteTool(ctx, "delete_file", map[string]any{"path": "a.txt"})
		_, id := outcomeOf(res, err)
		return id
	}
	first := call()
	if _, err := store.Decide(ctx, first, approvals.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	call() // runs
	second := call()
	if _, err := store.Decide(ctx, second, approvals.Decision{Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	call() // denied
	// The decisions reach the audit file from the store's journal.
	if n, err := approvals.Deliver(ctx, store, path, audit.WriteDecisions); n != 2 || err != nil {
		t.Fatalf("Deliver = %d, %v; want the 2 decisions", n, err)
	}
	if err := audit.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Outcome    string `json:"outcome"`
		Decision   string `json:"decision"`
		ApprovalID string `json:"approval_id"`
	}
	var got []line
	for l := range strings.Lines(string(data)) {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	want := []line{
		{Outcome: "pending", ApprovalID: first},
		{Outcome: "ok", ApprovalID: first}, // the run records the approval it used
		{Outcome: "pending", ApprovalID: second},
		{Outcome: "denied", ApprovalID: second},
		{Decision: "approved", ApprovalID: first},
		{Decision: "denied", ApprovalID: second},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit lines (-want +got):\n%s", diff)
	}
}

// TestDescriberDetails: the consent handler sees the details beside the
// arguments, an approval request keeps them, and neither the tool nor the
// fingerprint sees them.
func TestDescriberDetails(t *testing.T) {
	describe := func(_ context.Context, name string, args map[string]any) map[string]any {
		if name != "delete_file" {
			return nil
		}
		return map[string]any{"would_delete": "/srv/" + args["path"].(string), "path": "a detail never replaces an argument"}
	}
	ctx := context.Background()
	args := map[string]any{"path": "a.txt"}

	var seen map[string]any
	drv := &defDriver{}
	d := mcs.NewBaseDriver(drv, mcs.WithMiddleware(permission.New(func(_ context.Context, _ string, view map[string]any) (bool, error) {
		seen = view
		return true, nil
	}, permission.WithDescriber(describe), permission.WithDescriber(nil))))
	if _, err := d.ExecuteTool(ctx, "delete_file", args); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"path": "a.txt", "would_delete": "/srv/a.txt"}, seen); diff != "" {
		t.Errorf("the consent handler saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"path": "a.txt"}, args); diff != "" {
		t.Errorf("the arguments changed (-want +got):\n%s", diff)
	}

	store := approvals.NewMemoryStore()
	q := mcs.NewBaseDriver(&defDriver{}, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(store, time.Hour), permission.WithDescriber(describe))))
	res, err := q.ExecuteTool(ctx, "delete_file", args)
	_, id := outcomeOf(res, err)
	r := mustGet(t, store, id)
	if diff := cmp.Diff(map[string]any{"would_delete": "/srv/a.txt"}, r.Details); diff != "" {
		t.Errorf("request Details (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(args, r.Arguments); diff != "" {
		t.Errorf("request Arguments (-want +got):\n%s", diff)
	}
	plainStore := approvals.NewMemoryStore()
	plain := mcs.NewBaseDriver(&defDriver{}, mcs.WithMiddleware(permission.New(nil, permission.WithApprovals(plainStore, time.Hour))))
	res, err = plain.ExecuteTool(ctx, "delete_file", args)
	_, other := outcomeOf(res, err)
	if fp := mustGet(t, plainStore, other).Fingerprint; fp != r.Fingerprint {
		t.Errorf("the details changed the fingerprint: %s with them, %s without", r.Fingerprint, fp)
	}
}
