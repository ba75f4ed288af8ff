package approvals_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/mcs-go/mcs/approvals"
)

// TestClaimID holds every store to the claim of one chosen request.
func TestClaimID(t *testing.T) {
	ctx := context.Background()
	args := map[string]any{"city": "Oslo"}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := newClock()
			s := b.mustOpen(t, b.fresh(t), approvals.WithClock(c.Now))
			older := mustCreate(t, s, request("weather", args, c.Now(), time.Hour))
			c.Advance(time.Second)
			newer := mustCreate(t, s, request("weather", args, c.Now(), time.Hour))
			other := mustCreate(t, s, request("weather", map[string]any{"city": "Rome"}, c.Now(), time.Hour))
			pending := mustCreate(t, s, request("weather", args, c.Now(), time.Hour))
			for _, r := range []approvals.Request{older, newer, other} {
				mustDecide(t, s, r.ID, true)
			}

			// The older of two approvals of one call is claimed by its id, and
			// the newer stays approved (Claim by fingerprint would take the newer).
			got, ok, err := s.ClaimID(ctx, older.ID, older.Fingerprint)
			if err != nil || !ok || got.ID != older.ID || got.State != approvals.Used {
				t.Fatalf("ClaimID(older) = %s %s, %v, %v; want it used", got.ID, got.State, ok, err)
			}
			if r, _ := s.Get(ctx, newer.ID); r.State != approvals.Approved {
				t.Errorf("the newer approval is %s after the older was claimed by id; want approved", r.State)
			}
			for _, tc := range []struct {
				name, id, fp string
			}{
				{"used already", older.ID, older.Fingerprint},
				{"another call's fingerprint", other.ID, older.Fingerprint},
				{"pending", pending.ID, pending.Fingerprint},
				{"unknown id", "aaaaaaaaaaaaaaaaaaaaaaaaaa", older.Fingerprint},
			} {
				if got, ok, err := s.ClaimID(ctx, tc.id, tc.fp); ok || err != nil {
					t.Errorf("ClaimID, %s = %s, %v, %v; want false, nil", tc.name, got.ID, ok, err)
				}
			}
			if _, _, err := s.ClaimID(ctx, newer.ID, ""); err == nil {
				t.Error("ClaimID with an empty fingerprint succeeded")
			}
			c.Advance(2 * time.Hour)
			if _, ok, err := s.ClaimID(ctx, newer.ID, newer.Fingerprint); ok || err != nil {
				t.Errorf("ClaimID of an expired approval = %v, %v; want false, nil", ok, err)
			}
		})
	}
}

// TestClaimIDRace has eight stores on one database claim one request by id at
// the same moment: exactly one wins.
func TestClaimIDRace(t *testing.T) {
	trials := 100
	if testing.Short() {
		trials = 10
	}
	for _, b := range backends() {
		if !b.shared {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			where := b.fresh(t)
			stores := make([]approvals.Store, 8)
			for i := range stores {
				stores[i] = b.mustOpen(t, where)
			}
			for range trials {
				r := mustCreate(t, stores[0], request("weather", map[string]any{"city": "Lima"}, time.Now(), time.Hour))
				mustDecide(t, stores[1], r.ID, true)
				start := make(chan struct{})
				var wg sync.WaitGroup
				var mu sync.Mutex
				wins := 0
				for _, s := range stores {
					wg.Go(func() {
						<-start
						_, ok, err := s.ClaimID(context.Background(), r.ID, r.Fingerprint)
						if err != nil {
							t.Errorf("ClaimID: %v", err)
						}
						if ok {
							mu.Lock()
							wins++
							mu.Unlock()
						}
					})
				}
				close(start)
				wg.Wait()
				if wins != 1 {
					t.Fatalf("%d of 8 stores claimed request %s; want exactly 1", wins, r.ID)
				}
			}
		})
	}
}

// TestJournal holds every store to the journal of decisions and its delivery.
func TestJournal(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := newClock()
			s := b.mustOpen(t, b.fresh(t), approvals.WithClock(c.Now))
			j, ok := s.(approvals.Journal)
			if !ok {
				t.Fatalf("the %s store does not implement approvals.Journal", b.name)
			}
			if evs, err := j.Events(ctx, 0, 10); err != nil || len(evs) != 0 {
				t.Fatalf("Events of an empty store = %v, %v", evs, err)
			}
			var want []approvals.Event
			for i, city := range []string{"Oslo", "Rome", "Lima"} {
				r := mustCreate(t, s, request("weather", map[string]any{"city": city}, c.Now(), time.Hour))
				c.Advance(time.Second)
				d, err := s.Decide(ctx, r.ID, approvals.Decision{Approve: i != 1, By: "alice", Reason: "because " + city})
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, approvals.Event{Seq: int64(i + 1), ID: r.ID, Label: "weather", Tool: weatherTool.Name, Decision: *d.Decision})
			}
			// A decision that fails writes no event.
			if _, err := s.Decide(ctx, want[0].ID, approvals.Decision{Approve: true}); !errors.Is(err, approvals.ErrDecided) {
				t.Fatalf("second Decide = %v, want ErrDecided", err)
			}
			evs, err := j.Events(ctx, 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			// Sequence numbers need only grow; compare them apart.
			for i := range evs {
				if i > 0 && evs[i].Seq <= evs[i-1].Seq {
					t.Errorf("Seq %d after %d: the journal is not in order", evs[i].Seq, evs[i-1].Seq)
				}
			}
			if diff := cmp.Diff(want, evs, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Seq" }, cmp.Ignore())); diff != "" {
				t.Errorf("Events (-want +got):\n%s", diff)
			}
			if page, err := j.Events(ctx, evs[0].Seq, 1); err != nil || len(page) != 1 || page[0].ID != evs[1].ID {
				t.Errorf("Events(after first, limit 1) = %v, %v; want the second event", page, err)
			}
			if _, err := j.Events(ctx, 0, 0); err == nil {
				t.Error("Events with limit 0 succeeded")
			}

			// Delivery: a failing write keeps the events for the next delivery.
			var got []approvals.Event
			boom := errors.New("disk full")
			n, err := approvals.Deliver(ctx, s, "file-a", func(_ context.Context, evs []approvals.Event) error { return boom })
			if n != 0 || !errors.Is(err, boom) {
				t.Fatalf("Deliver with a failing write = %d, %v; want 0 and the write's error", n, err)
			}
			write := func(_ context.Context, evs []approvals.Event) error { got = append(got, evs...); return nil }
			if n, err := approvals.Deliver(ctx, s, "file-a", write); n != 3 || err != nil {
				t.Fatalf("Deliver = %d, %v; want 3", n, err)
			}
			if n, err := approvals.Deliver(ctx, s, "file-a", write); n != 0 || err != nil {
				t.Fatalf("second Deliver = %d, %v; want 0, nothing new", n, err)
			}
			if diff := cmp.Diff(evs, got); diff != "" {
				t.Errorf("delivered (-journal +delivered):\n%s", diff)
			}
			// Another sink starts from the beginning; a sink never moves back.
			if seq, err := j.Delivered(ctx, "file-b"); seq != 0 || err != nil {
				t.Errorf("Delivered(file-b) = %d, %v; want 0", seq, err)
			}
			if err := j.SetDelivered(ctx, "file-a", 1); err != nil {
				t.Fatal(err)
			}
			if seq, err := j.Delivered(ctx, "file-a"); seq != evs[2].Seq || err != nil {
				t.Errorf("Delivered(file-a) after moving back = %d, %v; want %d", seq, err, evs[2].Seq)
			}
			if _, err := approvals.Deliver(ctx, s, " ", write); err == nil {
				t.Error("Deliver to an empty sink name succeeded")
			}
		})
	}
}

// TestDecisionCommitsWithItsJournal breaks the journal of a database store:
// the decision fails and the request stays pending, so that a decision never
// exists without its record.
func TestDecisionCommitsWithItsJournal(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		if !b.shared {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			where := b.fresh(t)
			s := b.mustOpen(t, where)
			r := mustCreate(t, s, request("weather", map[string]any{"city": "Oslo"}, time.Now(), time.Hour))
			dropJournal(t, b.name, where)
			if _, err := s.Decide(ctx, r.ID, approvals.Decision{Approve: true, By: "alice"}); err == nil {
				t.Fatal("Decide succeeded without a journal")
			}
			got, err := s.Get(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != approvals.Pending || got.Decision != nil {
				t.Errorf("after a decision that could not be journaled the request is %s with %+v; want pending, undecided", got.State, got.Decision)
			}
		})
	}
}

// dropJournal drops the journal table of the database at where.
func dropJournal(t *testing.T, kind, where string) {
	t.Helper()
	switch kind {
	case "sqlite":
		db, err := sql.Open("sqlite", where)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`DROP TABLE mcs_approval_events`); err != nil {
			t.Fatal(err)
		}
	case "postgres":
		conn, err := pgx.Connect(t.Context(), where)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(t.Context(), `DROP TABLE mcs_approval_events`); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no way to break the journal of a %s store", kind)
	}
}

// TestSQLiteMigratesVersion1 opens a database of the first schema (no journal):
// its requests stay, and decisions are journaled from then on.
func TestSQLiteMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/v1.db"
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`CREATE TABLE mcs_approvals (
	id TEXT PRIMARY KEY, label TEXT NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL, fingerprint TEXT NOT NULL,
	created INTEGER NOT NULL, expires INTEGER NOT NULL, state TEXT NOT NULL,
	decided INTEGER NOT NULL DEFAULT 0, approve INTEGER NOT NULL DEFAULT 0, decided_by TEXT NOT NULL DEFAULT '',
	decided_reason TEXT NOT NULL DEFAULT '', decided_at INTEGER NOT NULL DEFAULT 0);
INSERT INTO mcs_approvals (id, label, tool, arguments, fingerprint, created, expires, state)
	VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaa', 'weather', 'get_weather', '{"city":"Oslo"}', 'fp', 1, 9999999999999999, 'pending');
PRAGMA user_version = 1;`)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	b := backends()[1]
	s := b.mustOpen(t, path)
	r, err := s.Decide(ctx, "aaaaaaaaaaaaaaaaaaaaaaaaaa", approvals.Decision{Approve: true, By: "alice"})
	if err != nil {
		t.Fatalf("Decide on a migrated database: %v", err)
	}
	evs, err := s.(approvals.Journal).Events(ctx, 0, 10)
	if err != nil || len(evs) != 1 || evs[0].ID != r.ID || !evs[0].Decision.Approve {
		t.Fatalf("Events after the migration = %+v, %v; want the one approval", evs, err)
	}
}

// TestDetails holds every store to keeping a request's Details apart from its
// arguments and fingerprint.
func TestDetails(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s := b.mustOpen(t, b.fresh(t))
			r := request("mail", map[string]any{"draft_id": "abc"}, time.Now(), time.Hour)
			plain := mustCreate(t, s, r)
			if plain.Details != nil {
				t.Errorf("Details of a request without any = %v, want nil", plain.Details)
			}
			r.Details = map[string]any{"draft": map[string]any{"to": []any{"bob@example.com"}, "subject": "Q3 <numbers>", "size": 3}}
			created := mustCreate(t, s, r)
			got, err := s.Get(ctx, created.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"draft": map[string]any{"to": []any{"bob@example.com"}, "subject": "Q3 <numbers>", "size": json.Number("3")}}
			if diff := cmp.Diff(want, got.Details); diff != "" {
				t.Errorf("Details after Get (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(created.Details, got.Details); diff != "" {
				t.Errorf("Create and Get disagree on Details (-create +get):\n%s", diff)
			}
			if got.Fingerprint != plain.Fingerprint {
				t.Error("Details changed the fingerprint")
			}
			if _, err := s.Create(ctx, approvals.Request{Tool: "t", Fingerprint: "fp", Expires: time.Now().Add(time.Hour), Details: map[string]any{"c": make(chan int)}}); err == nil {
				t.Error("Create with details that do not encode as JSON succeeded")
			}
		})
	}
}
