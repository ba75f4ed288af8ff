package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/approvals"
)

// TestStores holds every store to one contract.
func TestStores(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { testStore(t, b) })
	}
}

// testStore is the conformance test of one kind of store: every state change,
// every way of not matching, and the errors.
func testStore(t *testing.T, b backend) {
	ctx := context.Background()
	// open returns a fresh, empty store on its own clock.
	open := func(t *testing.T) (approvals.Store, *clock) {
		c := newClock()
		return b.mustOpen(t, b.fresh(t), approvals.WithClock(c.Now)), c
	}
	const ttl = time.Hour
	args := map[string]any{"city": "Paris", "days": 3}

	t.Run("create and get", func(t *testing.T) {
		s, c := open(t)
		r := request("weather", args, c.Now(), ttl)
		created := mustCreate(t, s, r)
		want := approvals.Request{
			ID:          created.ID,
			Label:       "weather",
			Tool:        "get_weather",
			Arguments:   map[string]any{"city": "Paris", "days": json.Number("3")},
			Fingerprint: r.Fingerprint,
			Created:     epoch.Truncate(time.Microsecond),
			Expires:     epoch.Add(ttl).Truncate(time.Microsecond),
			State:       approvals.Pending,
		}
		if diff := cmp.Diff(want, created); diff != "" {
			t.Errorf("Create (-want +got):\n%s", diff)
		}
		if !regexp.MustCompile(`^[a-z2-7]{26}$`).MatchString(created.ID) {
			t.Errorf("ID %q is not 26 characters of base32 (128 bits)", created.ID)
		}
		got, err := s.Get(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Get (-want +got):\n%s", diff)
		}
		// The store assigns the id, the state and no decision, whatever the
		// caller passed.
		r.ID, r.State, r.Decision = "chosen-by-caller", approvals.Approved, &approvals.Decision{Approve: true}
		second := mustCreate(t, s, r)
		if second.ID == created.ID || second.ID == r.ID || second.State != approvals.Pending || second.Decision != nil {
			t.Errorf("second Create = %+v; want a new id, pending, no decision", second)
		}
	})

	t.Run("create rejects", func(t *testing.T) {
		s, c := open(t)
		good := request("weather", args, c.Now(), ttl)
		for _, tc := range []struct {
			name   string
			change func(*approvals.Request)
		}{
			{"no tool", func(r *approvals.Request) { r.Tool = "" }},
			{"no fingerprint", func(r *approvals.Request) { r.Fingerprint = "" }},
			{"no expiry", func(r *approvals.Request) { r.Expires = time.Time{} }},
			{"expires when created", func(r *approvals.Request) { r.Created, r.Expires = epoch, epoch }},
			{"arguments that are not JSON", func(r *approvals.Request) { r.Arguments = map[string]any{"c": make(chan int)} }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := good
				tc.change(&r)
				if got, err := s.Create(ctx, r); err == nil {
					t.Errorf("Create = %+v, nil; want an error", got)
				}
			})
		}
		if list, err := s.List(ctx, approvals.Filter{}); err != nil || len(list) != 0 {
			t.Errorf("List after rejected creates = %v, %v; want nothing stored", list, err)
		}
	})

	t.Run("decide", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			decision approvals.Decision
			want     approvals.State
			wantAt   time.Time
		}{
			{"approve", approvals.Decision{Approve: true, By: "alice", Reason: "fine"}, approvals.Approved, epoch.Add(time.Minute)},
			{"deny", approvals.Decision{By: "bob", Reason: "not today"}, approvals.Denied, epoch.Add(time.Minute)},
			{"approve at a given time", approvals.Decision{Approve: true, At: epoch.Add(time.Second)}, approvals.Approved, epoch.Add(time.Second)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s, c := open(t)
				created := mustCreate(t, s, request("weather", args, c.Now(), ttl))
				c.Advance(time.Minute)
				got, err := s.Decide(ctx, created.ID, tc.decision)
				if err != nil {
					t.Fatal(err)
				}
				want := created
				want.State = tc.want
				d := tc.decision
				d.At = tc.wantAt.Truncate(time.Microsecond)
				want.Decision = &d
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Decide (-want +got):\n%s", diff)
				}
				stored, err := s.Get(ctx, created.ID)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, stored); diff != "" {
					t.Errorf("Get after Decide (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("decide fails", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			prepare func(t *testing.T, s approvals.Store, c *clock) string // returns the id to decide
			approve bool
			want    error
		}{
			{"unknown id", func(*testing.T, approvals.Store, *clock) string { return "nosuchrequest" }, true, approvals.ErrNotFound},
			{"empty id", func(*testing.T, approvals.Store, *clock) string { return "" }, true, approvals.ErrNotFound},
			{"approved, approve again", decided(args, true), true, approvals.ErrDecided},
			{"approved, then deny", decided(args, true), false, approvals.ErrDecided},
			{"denied, then approve", decided(args, false), true, approvals.ErrDecided},
			{"used", func(t *testing.T, s approvals.Store, c *clock) string {
				id := decided(args, true)(t, s, c)
				if _, ok, err := s.Claim(ctx, approvals.Fingerprint("weather", weatherTool, args)); !ok || err != nil {
					t.Fatalf("Claim = %v, %v", ok, err)
				}
				return id
			}, false, approvals.ErrDecided},
			{"expired exactly at Expires", func(t *testing.T, s approvals.Store, c *clock) string {
				r := mustCreate(t, s, request("weather", args, c.Now(), ttl))
				c.Advance(ttl)
				return r.ID
			}, true, approvals.ErrExpired},
			{"expired long ago", func(t *testing.T, s approvals.Store, c *clock) string {
				r := mustCreate(t, s, request("weather", args, c.Now(), ttl))
				c.Advance(48 * time.Hour)
				return r.ID
			}, false, approvals.ErrExpired},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s, c := open(t)
				id := tc.prepare(t, s, c)
				before, _ := s.Get(ctx, id)
				got, err := s.Decide(ctx, id, approvals.Decision{Approve: tc.approve, By: "mallory"})
				if !errors.Is(err, tc.want) {
					t.Fatalf("Decide = %+v, %v; want an error wrapping %v", got, err, tc.want)
				}
				if id != "" && !regexp.MustCompile(regexp.QuoteMeta(id)).MatchString(err.Error()) {
					t.Errorf("error %q does not name the id %s", err, id)
				}
				after, _ := s.Get(ctx, id)
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("a failed Decide changed the request (-before +after):\n%s", diff)
				}
			})
		}
	})

	t.Run("get unknown", func(t *testing.T) {
		s, _ := open(t)
		if _, err := s.Get(ctx, "nosuchrequest"); !errors.Is(err, approvals.ErrNotFound) {
			t.Errorf("Get = %v; want ErrNotFound", err)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		s, c := open(t)
		pending := mustCreate(t, s, request("weather", map[string]any{"city": "A"}, c.Now(), ttl))
		approved := mustCreate(t, s, request("weather", map[string]any{"city": "B"}, c.Now(), ttl))
		mustDecide(t, s, approved.ID, true)
		denied := mustCreate(t, s, request("weather", map[string]any{"city": "C"}, c.Now(), ttl))
		mustDecide(t, s, denied.ID, false)
		used := mustCreate(t, s, request("weather", map[string]any{"city": "D"}, c.Now(), ttl))
		mustDecide(t, s, used.ID, true)
		if _, ok, err := s.Claim(ctx, used.Fingerprint); !ok || err != nil {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		states := func() map[string]approvals.State {
			m := map[string]approvals.State{}
			for name, id := range map[string]string{"pending": pending.ID, "approved": approved.ID, "denied": denied.ID, "used": used.ID} {
				r, err := s.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				m[name] = r.State
			}
			return m
		}
		c.Advance(ttl - time.Microsecond)
		if diff := cmp.Diff(map[string]approvals.State{"pending": "pending", "approved": "approved", "denied": "denied", "used": "used"}, states()); diff != "" {
			t.Errorf("just before Expires (-want +got):\n%s", diff)
		}
		c.Advance(time.Microsecond)
		if diff := cmp.Diff(map[string]approvals.State{"pending": "expired", "approved": "expired", "denied": "denied", "used": "used"}, states()); diff != "" {
			t.Errorf("at Expires (-want +got):\n%s", diff)
		}
		if r, ok, err := s.Claim(ctx, approved.Fingerprint); ok || err != nil {
			t.Errorf("Claim of an expired approval = %+v, %v, %v; want nothing", r, ok, err)
		}
	})

	t.Run("claim", func(t *testing.T) {
		s, c := open(t)
		created := mustCreate(t, s, request("weather", args, c.Now(), ttl))
		approved := mustDecide(t, s, created.ID, true)
		c.Advance(time.Minute)
		got, ok, err := s.Claim(ctx, created.Fingerprint)
		if err != nil || !ok {
			t.Fatalf("Claim = %v, %v; want the request", ok, err)
		}
		want := approved
		want.State = approvals.Used
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Claim (-want +got):\n%s", diff)
		}
		if stored, err := s.Get(ctx, created.ID); err != nil || stored.State != approvals.Used {
			t.Errorf("Get after Claim = %v, %v; want used", stored.State, err)
		}
		if again, ok, err := s.Claim(ctx, created.Fingerprint); ok || err != nil {
			t.Errorf("second Claim = %+v, %v, %v; want nothing: an approval runs once", again, ok, err)
		}
	})

	t.Run("claim finds nothing", func(t *testing.T) {
		other := map[string]any{"city": "Paris", "days": 4}
		changed := weatherTool
		changed.Description = "Current weather and a forecast."
		for _, tc := range []struct {
			name        string
			prepare     func(t *testing.T, s approvals.Store, c *clock)
			fingerprint string
		}{
			{"no request", func(*testing.T, approvals.Store, *clock) {}, approvals.Fingerprint("weather", weatherTool, args)},
			{"pending", func(t *testing.T, s approvals.Store, c *clock) {
				mustCreate(t, s, request("weather", args, c.Now(), ttl))
			}, approvals.Fingerprint("weather", weatherTool, args)},
			{"denied", func(t *testing.T, s approvals.Store, c *clock) { decided(args, false)(t, s, c) }, approvals.Fingerprint("weather", weatherTool, args)},
			{"approved, then expired", func(t *testing.T, s approvals.Store, c *clock) {
				decided(args, true)(t, s, c)
				c.Advance(ttl)
			}, approvals.Fingerprint("weather", weatherTool, args)},
			{"other arguments", func(t *testing.T, s approvals.Store, c *clock) { decided(args, true)(t, s, c) }, approvals.Fingerprint("weather", weatherTool, other)},
			{"another driver", func(t *testing.T, s approvals.Store, c *clock) { decided(args, true)(t, s, c) }, approvals.Fingerprint("weather2", weatherTool, args)},
			{"changed definition", func(t *testing.T, s approvals.Store, c *clock) { decided(args, true)(t, s, c) }, approvals.Fingerprint("weather", changed, args)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s, c := open(t)
				tc.prepare(t, s, c)
				if r, ok, err := s.Claim(ctx, tc.fingerprint); ok || err != nil {
					t.Errorf("Claim = %+v, %v, %v; want nothing", r, ok, err)
				}
			})
		}
	})

	t.Run("claim empty fingerprint", func(t *testing.T) {
		s, _ := open(t)
		if _, ok, err := s.Claim(ctx, ""); ok || err == nil {
			t.Errorf("Claim(\"\") = %v, %v; want an error", ok, err)
		}
	})

	t.Run("claim newest first", func(t *testing.T) {
		s, c := open(t)
		older := mustCreate(t, s, request("weather", args, c.Now(), ttl))
		c.Advance(time.Second)
		newer := mustCreate(t, s, request("weather", args, c.Now(), ttl))
		c.Advance(time.Second)
		pending := mustCreate(t, s, request("weather", args, c.Now(), ttl))
		mustDecide(t, s, older.ID, true)
		mustDecide(t, s, newer.ID, true)
		var got []string
		for range 3 {
			r, ok, err := s.Claim(ctx, older.Fingerprint)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				got = append(got, r.ID)
			}
		}
		if diff := cmp.Diff([]string{newer.ID, older.ID}, got); diff != "" {
			t.Errorf("claimed (-want +got):\n%s", diff)
		}
		if r, _ := s.Get(ctx, pending.ID); r.State != approvals.Pending {
			t.Errorf("the pending request is %s; a claim must not touch it", r.State)
		}
	})

	t.Run("concurrent claims", func(t *testing.T) {
		s, c := open(t)
		created := mustCreate(t, s, request("weather", args, c.Now(), ttl))
		mustDecide(t, s, created.ID, true)
		if got := raceClaims(t, []approvals.Store{s, s, s, s, s, s, s, s}, created.Fingerprint); got != 1 {
			t.Errorf("%d of 8 concurrent claims won; want exactly 1", got)
		}
	})

	t.Run("list", func(t *testing.T) {
		s, c := open(t)
		mk := func(label, tool, city string) approvals.Request {
			c.Advance(time.Second)
			r := request(label, map[string]any{"city": city}, c.Now(), ttl)
			r.Tool = tool
			return mustCreate(t, s, r)
		}
		p1 := mk("weather", "get_weather", "p1")
		p2 := mk("weather", "get_forecast", "p2")
		a1 := mk("maps", "get_weather", "a1")
		mustDecide(t, s, a1.ID, true)
		d1 := mk("weather", "get_weather", "d1")
		mustDecide(t, s, d1.ID, false)
		u1 := mk("weather", "get_weather", "u1")
		mustDecide(t, s, u1.ID, true)
		if _, ok, err := s.Claim(ctx, u1.Fingerprint); !ok || err != nil {
			t.Fatalf("Claim = %v, %v", ok, err)
		}
		c.Advance(ttl - 4*time.Second) // with p3's second: p1 and p2 expire, a1 does not
		p3 := mk("weather", "get_weather", "p3")
		ids := func(rs []approvals.Request) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		for _, tc := range []struct {
			name   string
			filter approvals.Filter
			want   []approvals.Request
		}{
			{"all, newest first", approvals.Filter{}, []approvals.Request{p3, u1, d1, a1, p2, p1}},
			{"pending", approvals.Filter{State: approvals.Pending}, []approvals.Request{p3}},
			{"expired", approvals.Filter{State: approvals.Expired}, []approvals.Request{p2, p1}},
			{"approved", approvals.Filter{State: approvals.Approved}, []approvals.Request{a1}},
			{"denied", approvals.Filter{State: approvals.Denied}, []approvals.Request{d1}},
			{"used", approvals.Filter{State: approvals.Used}, []approvals.Request{u1}},
			{"label", approvals.Filter{Label: "maps"}, []approvals.Request{a1}},
			{"tool", approvals.Filter{Tool: "get_forecast"}, []approvals.Request{p2}},
			{"label and tool", approvals.Filter{Label: "weather", Tool: "get_weather"}, []approvals.Request{p3, u1, d1, p1}},
			{"state and label", approvals.Filter{State: approvals.Expired, Label: "weather", Tool: "get_weather"}, []approvals.Request{p1}},
			{"limit", approvals.Filter{Limit: 2}, []approvals.Request{p3, u1}},
			{"no match", approvals.Filter{Label: "nobody"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.List(ctx, tc.filter)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(ids(tc.want), ids(got)); diff != "" {
					t.Errorf("List(%+v) (-want +got):\n%s", tc.filter, diff)
				}
			})
		}
		all, err := s.List(ctx, approvals.Filter{Label: "maps"})
		if err != nil || len(all) != 1 {
			t.Fatalf("List = %v, %v", all, err)
		}
		want, _ := s.Get(ctx, a1.ID)
		if diff := cmp.Diff(want, all[0]); diff != "" {
			t.Errorf("List and Get disagree (-get +list):\n%s", diff)
		}
	})

	t.Run("list rejects", func(t *testing.T) {
		s, _ := open(t)
		for _, f := range []approvals.Filter{{State: "waiting"}, {Limit: -1}} {
			if got, err := s.List(ctx, f); err == nil {
				t.Errorf("List(%+v) = %v, nil; want an error", f, got)
			}
		}
	})

	t.Run("arguments keep their fingerprint", func(t *testing.T) {
		s, c := open(t)
		in := map[string]any{
			"big":    json.Number("123456789012345678901234567890"),
			"float":  1.5,
			"exp":    json.Number("1e2"),
			"nested": map[string]any{"z": []any{1, "two", nil, true}, "a": "<&>"},
			"empty":  map[string]any{},
		}
		created := mustCreate(t, s, request("weather", in, c.Now(), ttl))
		got, err := s.Get(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want, have := approvals.Fingerprint("weather", weatherTool, in), approvals.Fingerprint("weather", weatherTool, got.Arguments); want != have {
			t.Errorf("fingerprint after the round trip = %s, want %s; arguments now %v", have, want, got.Arguments)
		}
		if got.Arguments["big"] != json.Number("123456789012345678901234567890") {
			t.Errorf("big number came back as %#v", got.Arguments["big"])
		}
	})
}

// decided returns a prepare function that creates a request for args and
// decides it.
func decided(args map[string]any, approve bool) func(t *testing.T, s approvals.Store, c *clock) string {
	return func(t *testing.T, s approvals.Store, c *clock) string {
		r := mustCreate(t, s, request("weather", args, c.Now(), time.Hour))
		mustDecide(t, s, r.ID, approve)
		return r.ID
	}
}

// raceClaims has each store claim fingerprint at the same moment, one
// goroutine each, and returns how many won. Errors fail t.
func raceClaims(t *testing.T, stores []approvals.Store, fingerprint string) int {
	t.Helper()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for _, s := range stores {
		wg.Go(func() {
			<-start
			_, ok, err := s.Claim(context.Background(), fingerprint)
			if err != nil {
				t.Errorf("Claim: %v", err)
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
	return wins
}
