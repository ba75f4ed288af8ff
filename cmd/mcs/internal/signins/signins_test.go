package signins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/stack"
)

func TestRowState(t *testing.T) {
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	format := func(t time.Time) string { return t.Format(time.RFC3339) }
	for _, c := range []struct {
		name           string
		row            Row
		state, expires string
		needsSignIn    bool
	}{
		{"nothing stored", Row{}, "not signed in", "-", true},
		{"signed in", Row{Token: auth.TokenStatus{SignedIn: true, Expiry: exp}}, "signed in", "2030-01-02T03:04:05Z", false},
		{"no expiry", Row{Token: auth.TokenStatus{SignedIn: true}}, "signed in", "never", false},
		{"expired, refreshable", Row{Token: auth.TokenStatus{SignedIn: true, Expiry: exp, Expired: true, Refreshable: true}}, "expired, refreshable", "2030-01-02T03:04:05Z", false},
		{"expired", Row{Token: auth.TokenStatus{SignedIn: true, Expiry: exp, Expired: true}}, "expired", "2030-01-02T03:04:05Z", true},
		{"unreadable", Row{Err: errors.New("store down")}, "not signed in", "-", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := []any{c.row.State(), c.row.Expires(format), c.row.NeedsSignIn()}
			if diff := cmp.Diff([]any{c.state, c.expires, c.needsSignIn}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Status reads each scope from the store, and SignOut empties it.
func TestStatusAndSignOut(t *testing.T) {
	as := oauthtest.New(t)
	dir := t.TempDir()
	spec, err := os.ReadFile("../../../../stack/testdata/secured.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "secured.json"), spec, 0o600)
	st, err := stack.Parse(filepath.Join(dir, "mcs.toml"), []byte(`[[driver]]
label = "gh"
type = "rest"
spec = "secured.json"
base_url = "http://127.0.0.1:1/api"
credentials = "oauth"
[driver.oauth]
client_id = "`+as.ClientID+`"
authorize_url = "`+as.AuthURL()+`"
token_url = "`+as.TokenURL()+`"
scopes = ["repo"]

[[driver]]
label = "plain"
type = "csv"
root = "."

[auth]
store = "memory:"
`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rows := Status(ctx, st)
	want := []Row{{Label: "gh", Mode: "oauth", Store: "memory:", Scope: "gh", Token: auth.TokenStatus{Scope: "gh"}}}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Fatalf("before (-want +got):\n%s", diff)
	}
	in, ok := Find(st, "gh")
	if !ok {
		t.Fatal("Find: no gh")
	}
	if _, ok := Find(st, "plain"); ok {
		t.Error("Find: plain does not sign in")
	}
	if by, ok := ByScope(st, "gh"); !ok || by.Label != "gh" {
		t.Errorf("ByScope(gh) = %v %v", by, ok)
	}
	p, err := st.CredentialProvider(ctx, "gh")
	if err != nil {
		t.Fatal(err)
	}
	err = auth.SignIn(ctx, p, "gh", func(ch *auth.Challenge) { oauthtest.Browser(t, ch.URL) })
	if err != nil {
		t.Fatal(err)
	}
	rows = Status(ctx, st)
	if len(rows) != 1 || rows[0].State() != "signed in" || !cmp.Equal(rows[0].Token.Scopes, []string{"repo"}) || !rows[0].Token.Refreshable {
		t.Fatalf("after the sign-in: %+v", rows)
	}
	if err := SignOut(ctx, st, in); err != nil {
		t.Fatal(err)
	}
	if rows = Status(ctx, st); rows[0].State() != "not signed in" {
		t.Errorf("after SignOut: %+v", rows)
	}
}
