package stack

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// TestOAuthCredentials builds a REST driver with credentials = "oauth": the
// first call returns the sign-in link in band, a scripted browser signs in, and
// the next call reaches the API with the access token; the token is in the
// [auth] table's SQLite store, where a second stack (a restart) finds it.
func TestOAuthCredentials(t *testing.T) {
	as := oauthtest.New(t)
	var seen atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization"))
		w.Write([]byte(`{"login": "octocat"}`))
	}))
	defer api.Close()
	dir := t.TempDir()
	spec, err := os.ReadFile("testdata/secured.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "secured.json"), spec, 0o600)
	file := `[[driver]]
label = "me"
type = "rest"
spec = "secured.json"
base_url = "` + api.URL + `/api"
credentials = "oauth"
[driver.oauth]
client_id = "` + as.ClientID + `"
authorize_url = "` + as.AuthURL() + `"
token_url = "` + as.TokenURL() + `"
scopes = ["read:user"]

[auth]
store = "sqlite:tokens.db"

[middleware]
order = ["auth"]
`
	load := func() *Stack {
		s, err := Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := load()
	want := []SignIn{{Label: "me", Mode: "oauth", Scopes: []string{"me"}, Store: "sqlite:" + filepath.Join(dir, "tokens.db")}}
	if diff := cmp.Diff(want, s.SignIns()); diff != "" {
		t.Errorf("SignIns (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	td := d.(mcs.ToolDriver)
	res, err := td.ExecuteTool(ctx, "getMe", nil)
	sig, _ := res.(mcs.Signal)
	if err != nil || sig.Kind != mcs.CodeChallenge {
		t.Fatalf("first call = %v, %v; want a challenge", res, err)
	}
	link, _ := sig.Data["url"].(string)
	if !strings.HasPrefix(link, as.AuthURL()+"?") {
		t.Fatalf("challenge link %q", link)
	}
	// The provider the CLI gets is the driver's: same pending sign-in.
	p, err := s.CredentialProvider(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Token(ctx, "me")
	if ch, ok := errors.AsType[*auth.Challenge](err); !ok || ch.URL != link {
		t.Errorf("CredentialProvider's challenge = %v, want the driver's", err)
	}
	oauthtest.Browser(t, link)
	if err := p.(*auth.AuthCodeProvider).Wait(ctx, "me"); err != nil {
		t.Fatal(err)
	}
	res, err = td.ExecuteTool(ctx, "getMe", nil)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	bearer, _ := seen.Load().(string)
	if tok := strings.TrimPrefix(bearer, "Bearer "); !as.Valid(tok) {
		t.Errorf("the API got %q, not a token the server issued", bearer)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := load()
	defer s2.Close()
	p2, err := s2.CredentialProvider(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	st, err := p2.(*auth.AuthCodeProvider).Status(ctx, "me")
	if err != nil || !st.SignedIn || strings.Join(st.Scopes, " ") != "read:user" {
		t.Errorf("after a restart: %+v, %v", st, err)
	}
	if _, err := s2.CredentialProvider(ctx, "nobody"); err == nil {
		t.Errorf("CredentialProvider of an unknown label succeeded")
	}
}

func TestOAuthCredentialsErrors(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"missing authorize_url", `credentials = "oauth"
[driver.oauth]
client_id = "c"
token_url = "https://as.example/token"
`, `key "authorize_url": is required for credentials = "oauth"`},
		{"bad store", `credentials = "oauth"
[driver.oauth]
client_id = "c"
authorize_url = "https://as.example/authorize"
token_url = "https://as.example/token"
token_store = "mongodb://x"
`, `unknown token store "mongodb"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("s.toml", []byte("[[driver]]\nlabel = \"me\"\ntype = \"rest\"\nspec = \"x.json\"\n"+c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
	_, err := Parse("s.toml", []byte("[[driver]]\nlabel = \"me\"\ntype = \"rest\"\nspec = \"x.json\"\n[auth]\nstore = \"redis://:s3cretPassw0rd@127.0.0.1:6379/0\"\n"))
	if err == nil || !strings.Contains(err.Error(), "REDISCLI_AUTH") || strings.Contains(err.Error(), "s3cretPassw0rd") {
		t.Errorf("a password in the [auth] store: %v", err)
	}
	_, err = Parse("s.toml", []byte("[[driver]]\nlabel = \"me\"\ntype = \"rest\"\nspec = \"x.json\"\n[auth]\nstore = \"\"\n"))
	if err == nil || !strings.Contains(err.Error(), `[auth], key "store": is required`) {
		t.Errorf("empty [auth] store: %v", err)
	}
}

func TestTokenKeyFromEnvironment(t *testing.T) {
	t.Setenv(auth.EnvTokenKey, "not a key")
	s, err := Parse(filepath.Join(t.TempDir(), "mcs.toml"), []byte(`[[driver]]
label = "me"
type = "rest"
spec = "x.json"
credentials = "oauth"
[driver.oauth]
client_id = "c"
authorize_url = "https://as.example/authorize"
token_url = "https://as.example/token"
`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.CredentialProvider(context.Background(), "me")
	if err == nil || !strings.Contains(err.Error(), auth.EnvTokenKey) || strings.Contains(err.Error(), "not a key") {
		t.Errorf("a bad key: %v", err)
	}
}
