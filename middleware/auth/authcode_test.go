package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

func newCodeProvider(t *testing.T, srv *oauthtest.Server, store auth.TokenStore, mod ...func(*auth.AuthCodeConfig)) *auth.AuthCodeProvider {
	t.Helper()
	cfg := auth.AuthCodeConfig{
		OAuth2: oauth2.Config{
			ClientID: srv.ClientID,
			Endpoint: oauth2.Endpoint{AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL()},
			Scopes:   []string{"repo", "read:user"},
		},
		Store:  store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, m := range mod {
		m(&cfg)
	}
	p, err := auth.NewAuthCodeProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// challenge calls Token and wants a *Challenge.
func challenge(t *testing.T, p *auth.AuthCodeProvider, scope string) *auth.Challenge {
	t.Helper()
	tok, err := p.Token(context.Background(), scope)
	ch, ok := errors.AsType[*auth.Challenge](err)
	if !ok {
		t.Fatalf("Token = %q, %v; want a *Challenge", tok, err)
	}
	return ch
}

// noSecrets fails when any text holds a token, code or verifier the server made.
func noSecrets(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, marker := range []string{"at-", "rt-", "code-", "code_verifier"} {
			if strings.Contains(s, marker) {
				t.Errorf("text holds a secret (%q): %s", marker, s)
			}
		}
	}
}

func TestAuthCodeSignIn(t *testing.T) {
	srv := oauthtest.New(t)
	store := auth.NewMemoryStore()
	p := newCodeProvider(t, srv, store)
	ch := challenge(t, p, "github")

	u, err := url.Parse(ch.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	redirect, _ := url.Parse(q.Get("redirect_uri"))
	checks := []struct{ what, got, want string }{
		{"challenge method", q.Get("code_challenge_method"), "S256"},
		{"scope", q.Get("scope"), "repo read:user"},
		{"redirect host", redirect.Hostname(), "127.0.0.1"},
		{"redirect path", redirect.Path, auth.CallbackPath},
		{"challenge scope", ch.Scope, "github"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if len(q.Get("state")) < 32 || len(q.Get("code_challenge")) < 43 {
		t.Errorf("state %q or code challenge %q too short", q.Get("state"), q.Get("code_challenge"))
	}
	if !strings.Contains(ch.Message, ch.URL) {
		t.Errorf("message %q does not show the link", ch.Message)
	}
	// A second call while pending shows the same link.
	if again := challenge(t, p, "github"); again.URL != ch.URL {
		t.Errorf("second challenge URL differs")
	}

	status, page := oauthtest.Browser(t, ch.URL)
	if status != http.StatusOK || !strings.Contains(page, "signed in") {
		t.Fatalf("browser: %d %s", status, page)
	}
	tok, err := p.Token(context.Background(), "github")
	if err != nil {
		t.Fatal(err)
	}
	if !srv.Valid(tok) || !strings.HasPrefix(tok, "at-") {
		t.Errorf("Token = %q: not an access token the server issued", tok)
	}
	if tok2, err := p.Token(context.Background(), "github"); err != nil || tok2 != tok {
		t.Errorf("second Token = %q, %v; want the cached %q", tok2, err, tok)
	}
	if n := srv.Exchanges.Load(); n != 1 {
		t.Errorf("%d code exchanges, want 1 (failures: %v)", n, srv.Failures)
	}
	st, err := p.Status(context.Background(), "github")
	if err != nil || !st.SignedIn || !st.Refreshable || strings.Join(st.Scopes, " ") != "repo read:user" || st.Expiry.IsZero() {
		t.Errorf("Status = %+v, %v", st, err)
	}
	// The redirect listener is gone.
	if _, err := http.Get(redirect.String()); err == nil {
		t.Errorf("the loopback listener still answers after the sign-in")
	}
	noSecrets(t, ch.Message, ch.URL)

	if err := p.Forget(context.Background(), "github"); err != nil {
		t.Fatal(err)
	}
	if st, _ := p.Status(context.Background(), "github"); st.SignedIn {
		t.Errorf("still signed in after Forget")
	}
	challenge(t, p, "github")
}

// stopAtListener is a browser that stops at the redirect to the loopback
// listener and returns its URL.
func stopAtListener(t *testing.T, authURL string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		t.Fatalf("authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	return loc
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAuthCodeRedirectsRefused(t *testing.T) {
	srv := oauthtest.New(t)
	p := newCodeProvider(t, srv, auth.NewMemoryStore())
	ch := challenge(t, p, "github")
	loc := stopAtListener(t, ch.URL)
	u, _ := url.Parse(loc)

	bad := []struct {
		name   string
		mutate func(u url.URL) string
		status int
	}{
		{"wrong state", func(u url.URL) string {
			q := u.Query()
			q.Set("state", "forged")
			u.RawQuery = q.Encode()
			return u.String()
		}, http.StatusBadRequest},
		{"no state", func(u url.URL) string { q := u.Query(); q.Del("state"); u.RawQuery = q.Encode(); return u.String() }, http.StatusBadRequest},
		{"other path", func(u url.URL) string { u.Path = "/other"; return u.String() }, http.StatusNotFound},
		{"error with wrong state", func(u url.URL) string {
			u.RawQuery = url.Values{"state": {"forged"}, "error": {"access_denied"}}.Encode()
			return u.String()
		}, http.StatusBadRequest},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if status, _ := get(t, b.mutate(*u)); status != b.status {
				t.Errorf("status %d, want %d", status, b.status)
			}
			// Still pending: the challenge is the same.
			if again := challenge(t, p, "github"); again.URL != ch.URL {
				t.Errorf("the sign-in was replaced after a refused redirect")
			}
		})
	}
	// The right one is accepted once.
	if status, page := get(t, loc); status != http.StatusOK {
		t.Fatalf("the real redirect: %d %s", status, page)
	}
	tok, err := p.Token(context.Background(), "github")
	if err != nil || !srv.Valid(tok) {
		t.Fatalf("Token after the redirect = %q, %v", tok, err)
	}
	// A second redirect, even with the right state, is not accepted.
	if status, _ := get(t, loc); status == http.StatusOK {
		t.Errorf("a second redirect was accepted")
	}
	if n := srv.Exchanges.Load(); n != 1 {
		t.Errorf("%d exchanges, want 1", n)
	}
}

func TestAuthCodeFailures(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*oauthtest.Server)
		want  string
	}{
		{"access denied", func(s *oauthtest.Server) { s.Deny.Store(true) }, "declined"},
		{"token endpoint html", func(s *oauthtest.Server) { s.TokenMode.Store("html") }, "not JSON"},
		{"token endpoint 500", func(s *oauthtest.Server) { s.TokenMode.Store("500") }, "HTTP 500"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := oauthtest.New(t)
			store := auth.NewMemoryStore()
			p := newCodeProvider(t, srv, store)
			ch := challenge(t, p, "github")
			c.setup(srv)
			status, page := oauthtest.Browser(t, ch.URL)
			if status == 0 || strings.Contains(page, "Internal error") {
				t.Errorf("browser page: %d %s", status, page)
			}
			if err := p.Wait(context.Background(), "github"); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Wait = %v, want an error containing %q", err, c.want)
			}
			tok, err := p.Token(context.Background(), "github")
			if err == nil || !strings.Contains(err.Error(), c.want) || tok != "" {
				t.Fatalf("Token = %q, %v; want an error containing %q", tok, err, c.want)
			}
			if _, ok := errors.AsType[*auth.Challenge](err); ok {
				t.Errorf("the failure came back as a challenge")
			}
			if strings.Contains(err.Error(), "<html") || strings.Contains(err.Error(), "Internal error") {
				t.Errorf("the error quotes the server's page: %v", err)
			}
			noSecrets(t, err.Error(), page)
			if st, _ := p.Status(context.Background(), "github"); st.SignedIn {
				t.Errorf("a token was stored after a failed sign-in")
			}
			// The next call starts a new sign-in.
			srv.Deny.Store(false)
			srv.TokenMode.Store("")
			if again := challenge(t, p, "github"); again.URL == ch.URL {
				t.Errorf("the failed sign-in's link was shown again")
			}
		})
	}
}

func TestAuthCodeTimeout(t *testing.T) {
	srv := oauthtest.New(t)
	p := newCodeProvider(t, srv, auth.NewMemoryStore(), func(c *auth.AuthCodeConfig) { c.Timeout = 20 * time.Millisecond })
	ch := challenge(t, p, "github")
	if err := p.Wait(context.Background(), "github"); err == nil || !strings.Contains(err.Error(), "not completed within") {
		t.Fatalf("Wait = %v, want the timeout", err)
	}
	if status, _ := get(t, stopAtListener(t, ch.URL)); status == http.StatusOK {
		t.Errorf("the listener accepted a redirect after the timeout")
	}
	if _, err := p.Token(context.Background(), "github"); err == nil || !strings.Contains(err.Error(), "not completed within") {
		t.Errorf("Token after the timeout = %v", err)
	}
}

func TestAuthCodeRefresh(t *testing.T) {
	srv := oauthtest.New(t)
	srv.ExpiresIn = 30 // inside ExpiryMargin: every call finds it expiring
	store := auth.NewMemoryStore()
	p := newCodeProvider(t, srv, store)
	oauthtest.Browser(t, challenge(t, p, "github").URL)
	if err := p.Wait(context.Background(), "github"); err != nil {
		t.Fatal(err)
	}
	first, err := p.Token(context.Background(), "github")
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Refreshes.Load(); n != 1 || !srv.Valid(first) {
		t.Errorf("after the first call: %d refreshes, valid %v", n, srv.Valid(first))
	}
	second, err := p.Token(context.Background(), "github")
	if err != nil || second == first || srv.Refreshes.Load() != 2 {
		t.Errorf("second call: %q, %v, %d refreshes", second, err, srv.Refreshes.Load())
	}
	st, _ := p.Status(context.Background(), "github")
	if strings.Join(st.Scopes, " ") != "repo read:user" {
		t.Errorf("scopes after refresh: %v", st.Scopes)
	}

	// A token endpoint that answers a refresh with HTML or a 500 is an error;
	// the refresh token is kept and works once the server is back.
	for _, mode := range []string{"html", "500"} {
		srv.TokenMode.Store(mode)
		_, err := p.Token(context.Background(), "github")
		if err == nil || !strings.Contains(err.Error(), "kept for the next call") || strings.Contains(err.Error(), "<html") {
			t.Errorf("refresh against %s: %v", mode, err)
		}
		if _, ok := errors.AsType[*auth.Challenge](err); ok {
			t.Errorf("refresh against %s started a sign-in", mode)
		}
	}
	srv.TokenMode.Store("")
	if tok, err := p.Token(context.Background(), "github"); err != nil || !srv.Valid(tok) {
		t.Errorf("refresh after the server is back: %q, %v", tok, err)
	}

	// A refresh token the server no longer knows starts a new sign-in.
	key := storeKeyOf(t, store)
	store.Save(key, `{"access_token":"old","refresh_token":"unknown"}`, time.Now().Add(-time.Hour))
	if ch := challenge(t, p, "github"); ch.Scope != "github" {
		t.Errorf("challenge scope %q", ch.Scope)
	}
	if _, _, ok, _ := store.Load(key); ok {
		t.Errorf("the dead token was kept")
	}
}

// storeKeyOf returns the one key a memory store holds.
func storeKeyOf(t *testing.T, s *auth.MemoryStore) string {
	t.Helper()
	keys := auth.MemoryStoreKeys(s)
	if len(keys) != 1 {
		t.Fatalf("store holds %d keys, want 1", len(keys))
	}
	return keys[0]
}

// failingStore is a store that is down.
type failingStore struct{}

func (failingStore) Load(string) (string, time.Time, bool, error) {
	return "", time.Time{}, false, errors.New("dial tcp 127.0.0.1:5432: connection refused")
}
func (failingStore) Save(string, string, time.Time) error {
	return errors.New("dial tcp 127.0.0.1:5432: connection refused")
}
func (failingStore) Delete(string) error {
	return errors.New("dial tcp 127.0.0.1:5432: connection refused")
}

func TestAuthCodeStoreDown(t *testing.T) {
	srv := oauthtest.New(t)
	p := newCodeProvider(t, srv, failingStore{})
	_, err := p.Token(context.Background(), "github")
	if _, ok := errors.AsType[*auth.StoreError](err); !ok || !strings.Contains(err.Error(), "token store") {
		t.Fatalf("Token with the store down = %v; want a *StoreError", err)
	}
	if _, ok := errors.AsType[*auth.Challenge](err); ok {
		t.Errorf("a store that is down started a sign-in")
	}
}

func TestAuthCodeEncryptionWrongKey(t *testing.T) {
	srv := oauthtest.New(t)
	inner := auth.NewMemoryStore()
	keyA, keyB := make([]byte, 32), make([]byte, 32)
	keyB[0] = 1
	sealedA, err := auth.Seal(inner, keyA)
	if err != nil {
		t.Fatal(err)
	}
	p := newCodeProvider(t, srv, sealedA)
	oauthtest.Browser(t, challenge(t, p, "github").URL)
	if err := p.Wait(context.Background(), "github"); err != nil {
		t.Fatal(err)
	}
	tok, err := p.Token(context.Background(), "github")
	if err != nil {
		t.Fatal(err)
	}
	raw, _, _, _ := inner.Load(storeKeyOf(t, inner))
	if strings.Contains(raw, tok) || strings.Contains(raw, "access_token") {
		t.Errorf("the store holds the token in the clear: %s", raw)
	}
	sealedB, _ := auth.Seal(inner, keyB)
	for name, store := range map[string]auth.TokenStore{"wrong key": sealedB, "no key": inner} {
		t.Run(name, func(t *testing.T) {
			q := newCodeProvider(t, srv, store)
			_, err := q.Token(context.Background(), "github")
			if _, ok := errors.AsType[*auth.KeyError](err); !ok {
				t.Fatalf("Token = %v; want a *KeyError", err)
			}
			if !strings.Contains(err.Error(), auth.EnvTokenKey) {
				t.Errorf("the error does not say which key: %v", err)
			}
		})
	}
	// A key on an unsealed store is refused too.
	plain := auth.NewMemoryStore()
	pp := newCodeProvider(t, srv, plain)
	oauthtest.Browser(t, challenge(t, pp, "github").URL)
	pp.Wait(context.Background(), "github")
	sealedPlain, _ := auth.Seal(plain, keyA)
	if _, err := newCodeProvider(t, srv, sealedPlain).Token(context.Background(), "github"); err == nil {
		t.Errorf("a sealed view of an unsealed store handed out a token")
	}
}

func TestParseKey(t *testing.T) {
	good := []string{
		"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	}
	for _, s := range good {
		if k, err := auth.ParseKey(s); err != nil || len(k) != 32 || k[31] != 31 {
			t.Errorf("ParseKey(%q) = %v, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "short", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg=="} {
		if _, err := auth.ParseKey(s); err == nil || (s != "" && strings.Contains(err.Error(), s)) {
			t.Errorf("ParseKey(%q) = %v", s, err)
		}
	}
}

func TestNewAuthCodeProviderConfig(t *testing.T) {
	base := oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{AuthURL: "https://as.example/authorize", TokenURL: "https://as.example/token"}}
	cases := []struct {
		name string
		mod  func(*auth.AuthCodeConfig)
		want string
	}{
		{"no client", func(c *auth.AuthCodeConfig) { c.OAuth2.ClientID = "" }, "ClientID"},
		{"no auth url", func(c *auth.AuthCodeConfig) { c.OAuth2.Endpoint.AuthURL = "" }, "AuthURL"},
		{"http token url", func(c *auth.AuthCodeConfig) { c.OAuth2.Endpoint.TokenURL = "http://as.example/token" }, "https"},
		{"remote listener", func(c *auth.AuthCodeConfig) { c.Listen = "0.0.0.0:0" }, "loopback"},
		{"ok", func(*auth.AuthCodeConfig) {}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := auth.AuthCodeConfig{OAuth2: base}
			c.mod(&cfg)
			_, err := auth.NewAuthCodeProvider(cfg)
			if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}
