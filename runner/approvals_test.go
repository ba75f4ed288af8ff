package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/sqlite"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
	"github.com/mcs-go/mcs/runner"
)

// filesDriver publishes delete_file and counts its runs.
type filesDriver struct{ runs atomic.Int64 }

func (d *filesDriver) Meta() mcs.Meta { return mcs.Meta{ID: "files", Name: "Files", Version: "1.0.0"} }

func (d *filesDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "delete_file", Description: "Delete a file.", Parameters: []mcs.Parameter{{Name: "path", Required: true}}}}, nil
}

func (d *filesDriver) ExecuteTool(_ context.Context, _ string, args map[string]any) (any, error) {
	d.runs.Add(1)
	return "deleted " + args["path"].(string), nil
}

// approvalStack is an orchestrator over two drivers, files and backup, each with
// the permission middleware queueing its calls in store.
func approvalStack(t *testing.T, store approvals.Store) (mcs.Driver, *filesDriver) {
	t.Helper()
	files := &filesDriver{}
	o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing()))
	for label, drv := range map[string]*filesDriver{"files": files, "backup": {}} {
		m := permission.New(nil, permission.WithApprovals(store, time.Hour))
		if err := o.AddDriver(label, mcs.NewBaseDriver(drv, mcs.WithMiddleware(m))); err != nil {
			t.Fatal(err)
		}
	}
	return o, files
}

// lastUser returns the content of the last user message of msgs.
func lastUser(msgs []map[string]any) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "user" {
			s, _ := msgs[i]["content"].(string)
			return s
		}
	}
	return ""
}

// TestApprovalsBetweenRuns: a call that waits ends the round honestly (the model
// is asked once more and answers the user, the history holds the pending
// signal); an approval made before the next Run runs the call once, before the
// model's request, and the model reads its result; a third Run runs nothing. A
// denial is reported once, with its reason.
func TestApprovalsBetweenRuns(t *testing.T) {
	stores := map[string]func(t *testing.T) approvals.Store{
		"memory": func(*testing.T) approvals.Store { return approvals.NewMemoryStore() },
		"sqlite": func(t *testing.T) approvals.Store {
			s, err := sqlite.Open(filepath.Join(t.TempDir(), "approvals.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	protocols := map[string]struct {
		call   map[string]any
		native bool
	}{
		"native": {call("c1", "files__delete_file", `{"path":"a.txt"}`), true},
		"text":   {answer(`{"tool":"files__delete_file","arguments":{"path":"a.txt"}}`), false},
	}
	decisions := []struct {
		approve  bool
		wantNote string
		wantRuns int64
	}{
		{true, "The approved call to 'delete_file' (approval ID) ran.", 1},
		{false, "The call to 'delete_file' (approval ID) was denied; it did not run. Reason: keep it", 0},
	}
	for sname, open := range stores {
		for pname, p := range protocols {
			for _, dec := range decisions {
				t.Run(sname+"/"+pname+"/"+map[bool]string{true: "approved", false: "denied"}[dec.approve], func(t *testing.T) {
					store := open(t)
					d, files := approvalStack(t, store)
					m := &script{name: "m", replies: []map[string]any{
						p.call, answer("It waits for approval."),
						answer("Done."),
						answer("Nothing new."),
					}}
					r := runner.New(d, m, runner.WithNativeTools(p.native), runner.WithApprovals(store))
					ctx := context.Background()

					// Run 1: the call waits; the model answers the user.
					res, err := r.Run(ctx, nil, "delete a.txt")
					if err != nil {
						t.Fatal(err)
					}
					if res.Text != "It waits for approval." || res.Rounds != 2 || len(res.Calls) != 1 {
						t.Fatalf("run 1: text %q, %d rounds, %d calls", res.Text, res.Rounds, len(res.Calls))
					}
					rec := res.Calls[0]
					if mcs.CodeOf(rec.Result, rec.Err) != mcs.CodePending {
						t.Fatalf("run 1: the call is %v, %v; want pending", rec.Result, rec.Err)
					}
					id, _ := rec.Result.(mcs.Signal).Data["id"].(string)
					found := false
					for _, msg := range res.History {
						walk(msg, func(s string) {
							found = found || (strings.Contains(s, `"approval_pending":true`) && strings.Contains(s, id))
						})
					}
					if !found || files.runs.Load() != 0 {
						t.Fatalf("run 1: pending signal in history %v, %d runs", found, files.runs.Load())
					}

					if _, err := store.Decide(ctx, id, approvals.Decision{Approve: dec.approve, By: "ops", Reason: "keep it"}); err != nil {
						t.Fatal(err)
					}

					// Run 2: the approved call runs once, before the model's request.
					res, err = r.Run(ctx, res.History, "is it done?")
					if err != nil {
						t.Fatal(err)
					}
					if got := files.runs.Load(); got != dec.wantRuns {
						t.Fatalf("run 2: %d runs, want %d (calls %+v)", got, dec.wantRuns, res.Calls)
					}
					read := lastUser(m.reqs[2].Messages)
					want := strings.ReplaceAll(dec.wantNote, "ID", id)
					if !strings.HasPrefix(read, want) || !strings.HasSuffix(read, "\n\nis it done?") {
						t.Fatalf("run 2: the model read %q, want %q first and the input last", read, want)
					}
					if dec.approve {
						if !strings.Contains(read, "deleted a.txt") {
							t.Fatalf("run 2: the result is not in %q", read)
						}
						if len(res.Calls) != 1 || res.Calls[0].Name != "files__delete_file" || res.Calls[0].Result != "deleted a.txt" {
							t.Fatalf("run 2: calls %+v", res.Calls)
						}
						if r, err := store.Get(ctx, id); err != nil || r.State != approvals.Used {
							t.Fatalf("run 2: request %v, %v; want used", r.State, err)
						}
					} else if len(res.Calls) != 0 {
						t.Fatalf("run 2: calls %+v, want none", res.Calls)
					}
					if res.Text != "Done." {
						t.Fatalf("run 2: text %q", res.Text)
					}

					// Run 3: nothing runs or is reported again.
					res, err = r.Run(ctx, res.History, "thanks")
					if err != nil {
						t.Fatal(err)
					}
					if got := files.runs.Load(); got != dec.wantRuns || len(res.Calls) != 0 {
						t.Fatalf("run 3: %d runs, %d calls", got, len(res.Calls))
					}
					if read := lastUser(m.reqs[3].Messages); read != "thanks" {
						t.Fatalf("run 3: the model read %q, want the input alone", read)
					}
					reqs, err := store.List(ctx, approvals.Filter{})
					if err != nil || len(reqs) != 1 {
						t.Fatalf("%d requests (%v), want 1", len(reqs), err)
					}
				})
			}
		}
	}
}

// walk calls f with every string in v.
func walk(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case map[string]any:
		for _, e := range x {
			walk(e, f)
		}
	case []any:
		for _, e := range x {
			walk(e, f)
		}
	}
}

// TestApprovalsRunStoreDown: a store that fails fails Run before any request,
// and nothing runs.
func TestApprovalsRunStoreDown(t *testing.T) {
	store, err := sqlite.Open(filepath.Join(t.TempDir(), "approvals.db"))
	if err != nil {
		t.Fatal(err)
	}
	d, files := approvalStack(t, store)
	sig := permission.Pending("delete_file", "abc")
	history := []map[string]any{
		{"role": "user", "content": "delete a.txt"},
		call("c1", "files__delete_file", `{"path":"a.txt"}`),
		{"role": "tool", "tool_call_id": "c1", "content": sig.String()},
		answer("It waits."),
	}
	store.Close()
	m := &script{name: "m", replies: []map[string]any{answer("never")}}
	res, err := runner.New(d, m, runner.WithApprovals(store)).Run(context.Background(), history, "done?")
	if err == nil || !strings.Contains(err.Error(), "approvals") {
		t.Fatalf("err = %v, want the store's error", err)
	}
	if len(m.reqs) != 0 || files.runs.Load() != 0 || res == nil {
		t.Fatalf("%d model requests, %d runs", len(m.reqs), files.runs.Load())
	}
}

// TestApprovalsRacingRunners: two runners that go on from the same history
// after an approval run the call once between them; the other tells its model
// that the call could not run.
func TestApprovalsRacingRunners(t *testing.T) {
	store := approvals.NewMemoryStore()
	d, files := approvalStack(t, store)
	ctx := context.Background()
	first := &script{name: "m", replies: []map[string]any{call("c1", "files__delete_file", `{"path":"a.txt"}`), answer("It waits.")}}
	res, err := runner.New(d, first, runner.WithNativeTools(true)).Run(ctx, nil, "delete a.txt")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.Calls[0].Result.(mcs.Signal).Data["id"].(string)
	if _, err := store.Decide(ctx, id, approvals.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	const n = 4
	models := make([]*script, n)
	results := make([]*runner.Result, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		models[i] = &script{name: "m", replies: []map[string]any{answer("ok")}}
		r := runner.New(d, models[i], runner.WithNativeTools(true), runner.WithApprovals(store))
		wg.Go(func() {
			<-start
			results[i], errs[i] = r.Run(ctx, res.History, "done?")
		})
	}
	close(start)
	wg.Wait()
	if got := files.runs.Load(); got != 1 {
		t.Fatalf("%d runs, want exactly 1", got)
	}
	ran := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		read := lastUser(models[i].reqs[0].Messages)
		switch {
		case strings.Contains(read, "(approval "+id+") ran."):
			ran++
		case strings.Contains(read, "(approval "+id+")"):
			// lost the race: told that it failed, or that it already ran
		default:
			t.Errorf("runner %d: the model read %q", i, read)
		}
	}
	if ran != 1 {
		t.Fatalf("%d runners say the call ran, want 1", ran)
	}
}
