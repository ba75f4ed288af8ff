package approvals_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/approvals"
)

// A URL of a known store whose package is not linked in is an error that says
// which package to import, without the password.
func TestOpenNotLinked(t *testing.T) {
	for _, tc := range []struct{ scheme, url, want string }{
		{"sqlite", "sqlite:x.db", `approvals: open "sqlite:x.db": the sqlite store is not linked in; import _ "github.com/mcs-go/mcs/approvals/sqlite"`},
		{"sqlite", "SQLite://x.db", `approvals: open "SQLite://x.db": the sqlite store is not linked in; import _ "github.com/mcs-go/mcs/approvals/sqlite"`},
		{"postgres", "postgres://app:s3cret@db.example/approvals", `approvals: open "postgres://app:xxxxx@db.example/approvals": the postgres store is not linked in; import _ "github.com/mcs-go/mcs/approvals/postgres"`},
		{"postgresql", "postgresql://db.example/approvals", `approvals: open "postgresql://db.example/approvals": the postgres store is not linked in; import _ "github.com/mcs-go/mcs/approvals/postgres"`},
	} {
		t.Run(tc.url, func(t *testing.T) {
			approvals.WithoutScheme(t, tc.scheme)
			s, err := approvals.Open(context.Background(), tc.url)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded without the store linked in", tc.url)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("Open(%q) error (-want +got):\n%s", tc.url, diff)
			}
		})
	}
	t.Run("memory needs nothing", func(t *testing.T) {
		approvals.WithoutScheme(t, "sqlite")
		s, err := approvals.Open(context.Background(), "memory:")
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
}

// A store registered for a scheme opens its URLs, whatever their case, with
// the options given to Open; the scheme then counts among the accepted forms.
func TestRegisterScheme(t *testing.T) {
	approvals.WithoutScheme(t, "kv")
	var gotURL string
	var gotOpts int
	approvals.RegisterScheme("KV", func(_ context.Context, url string, opts ...approvals.Option) (approvals.Store, error) {
		gotURL, gotOpts = url, len(opts)
		return approvals.NewMemoryStore(opts...), nil
	})
	s, err := approvals.Open(context.Background(), "kv://cache/approvals", approvals.WithClock(nil))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if gotURL != "kv://cache/approvals" || gotOpts != 1 {
		t.Errorf("the opener got %q and %d options; want the whole URL and 1 option", gotURL, gotOpts)
	}
	_, err = approvals.Open(context.Background(), "redis://cache")
	if err == nil || !strings.Contains(err.Error(), "kv:...") {
		t.Errorf("Open of an unknown scheme = %v; want the error to list kv:...", err)
	}

	for _, tc := range []struct {
		name, scheme string
		open         approvals.OpenFunc
	}{
		{"empty", "", approvals.Open},
		{"colon", "kv:", approvals.Open},
		{"nil", "other", nil},
		{"twice", "kv", approvals.Open},
		{"twice, other case", "Kv", approvals.Open},
		{"memory", "memory", approvals.Open},
	} {
		t.Run("panics on "+tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterScheme(%q) did not panic", tc.scheme)
				}
			}()
			approvals.RegisterScheme(tc.scheme, tc.open)
		})
	}
}

// The kit for store implementations: a filter is checked, a request is
// prepared as created, a row reads back as the request, and a request that
// cannot be decided says why.
func TestKit(t *testing.T) {
	for _, tc := range []struct {
		f    approvals.Filter
		want string
	}{
		{approvals.Filter{}, ""},
		{approvals.Filter{State: approvals.Expired, Limit: 3}, ""},
		{approvals.Filter{State: "waiting"}, `unknown state "waiting"`},
		{approvals.Filter{Limit: -1}, "negative limit"},
	} {
		err := tc.f.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v.Validate() = %v; want %q", tc.f, err, tc.want)
		}
	}

	cfg := approvals.Configure(approvals.WithClock(newClock().Now))
	if want := epoch.Truncate(time.Microsecond); !cfg.Now().Equal(want) || cfg.Now().Location() != epoch.Location() {
		t.Errorf("Config.Now() = %v; want %v", cfg.Now(), want)
	}
	if cfg := approvals.Configure(); cfg.Clock == nil || cfg.BusyTimeout != 0 {
		t.Errorf("Configure() = %+v; want time.Now and no busy timeout", cfg)
	}

	r, row, err := approvals.Prepare(request("weather", map[string]any{"city": "Oslo", "days": 2}, cfg.Now(), time.Hour), cfg.Now())
	if err != nil {
		t.Fatal(err)
	}
	if row.ID != r.ID || row.State != "pending" || row.Arguments != `{"city":"Oslo","days":2}` || row.Decided {
		t.Errorf("Prepare row = %+v", row)
	}
	back, err := row.Request(cfg.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("row.Request (-prepared +read):\n%s", diff)
	}
	if err := back.DecideError(); err != nil {
		t.Errorf("DecideError of a pending request = %v", err)
	}
	if expired, _ := row.Request(row.Expires); !errors.Is(expired.DecideError(), approvals.ErrExpired) {
		t.Errorf("DecideError at Expires = %v; want ErrExpired", expired.DecideError())
	}
	row.State, row.Decided, row.Approve = "used", true, true
	used, _ := row.Request(cfg.Now())
	if !errors.Is(used.DecideError(), approvals.ErrDecided) {
		t.Errorf("DecideError of a used request = %v; want ErrDecided", used.DecideError())
	}
	row.Approve = false
	if _, err := row.Request(cfg.Now()); !errors.Is(err, approvals.ErrCorrupt) || !strings.Contains(err.Error(), r.ID) {
		t.Errorf("Request of a used row without an approval = %v; want ErrCorrupt naming %s", err, r.ID)
	}
}
