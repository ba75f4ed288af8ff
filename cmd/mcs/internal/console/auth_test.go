package console

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/stack"
)

// oauthStack is a stack of a REST driver labelled gh that signs in with the
// authorization code flow at as, keeping its tokens in store (relative to
// dir);
// its API (getMe) answers only a live access token of as. The stack's audit
// goes to the console's Audit page.
func oauthStack(t *testing.T, as *oauthtest.Server, dir, store string, audit func() *Server) (*stack.Stack, mcs.Driver) {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !as.Valid(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			http.Error(w, "no valid token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"login": "octocat"}`)
	}))
	t.Cleanup(api.Close)
	spec, err := os.ReadFile("../../../../stack/testdata/secured.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secured.json"), spec, 0o600); err != nil {
		t.Fatal(err)
	}
	file := `[[driver]]
label = "gh"
type = "rest"
spec = "secured.json"
base_url = "` + api.URL + `"
credentials = "oauth"
[driver.oauth]
client_id = "` + as.ClientID + `"
authorize_url = "` + as.AuthURL() + `"
token_url = "` + as.TokenURL() + `"
scopes = ["repo", "read:user"]

[auth]
store = "` + store + `"

[middleware.hooks]
`
	st, err := stack.Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if audit != nil {
		st.Host.Audit = audit().AuditLogger()
	}
	d, err := st.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, d
}

// waitAuth reads events until an "auth" one after which the Auth page's
// scope gh is in state want.
func waitAuth(t *testing.T, tc *testConsole, events chan event, want string) *html.Node {
	t.Helper()
	for ev := range events {
		if ev.name != "auth" {
			continue
		}
		// The token store says "signed in" a moment before the sign-in's
		// follower ends and keeps its outcome, so an event of the challenge
		// may show the new state with the sign-in still pending: wait for
		// the page that has both the state and the outcome line.
		if _, doc := tc.get("/auth"); scopeState(doc, "gh") == want && len(byClass(doc, "outcome-line")) > 0 && len(byClass(doc, "pending")) == 0 {
			return doc
		}
	}
	t.Fatalf("the event stream ended before scope gh was %q", want)
	return nil
}

// scopeState is the state the Auth page shows for scope.
func scopeState(doc *html.Node, scope string) string {
	state := ""
	walk(doc, func(n *html.Node) {
		if v, _ := attr(n, "data-scope"); n.Data == "tr" && v == scope {
			for _, td := range byClass(n, "state") {
				state = text(td)
			}
		}
	})
	return state
}

// linkOf is the href of the first element with class.
func linkOf(doc *html.Node, class string) string {
	for _, n := range byClass(doc, class) {
		if href, ok := attr(n, "href"); ok {
			return href
		}
	}
	return ""
}

// The Auth page signs a driver in: the link of the loopback sign-in, live
// news when it completes, the token's status as mcs auth status gives it, and
// sign out; every change needs the CSRF token.
func TestAuthSignInAndOut(t *testing.T) {
	as := oauthtest.New(t)
	st, d := oauthStack(t, as, t.TempDir(), "sqlite:tokens.db", nil)
	tc := newTestConsole(t, st, d, nil, Config{})

	_, doc := tc.get("/auth")
	if got := scopeState(doc, "gh"); got != "not signed in" {
		t.Errorf("before: state %q, want not signed in", got)
	}
	page := text(doc)
	for _, want := range []string{"gh", "sign in in the browser", "sqlite:" + filepath.Dir(st.File), "Sign in", "Sign out"} {
		if !strings.Contains(page, want) {
			t.Errorf("the Auth page lacks %q:\n%s", want, page)
		}
	}
	if n := len(byClass(doc, "signin-start")); n != 1 {
		t.Errorf("%d sign-in buttons, want 1 (scope gh)", n)
	}
	for _, path := range []string{"/api/auth/signin", "/api/auth/signout"} {
		if resp, _ := tc.post(path, map[string]any{"label": "gh"}, func(r *http.Request) { r.Header.Del(CSRFHeader) }); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s without the CSRF token: %d, want 403", path, resp.StatusCode)
		}
	}
	if resp, out := tc.post("/api/auth/signin", map[string]any{"label": "nobody"}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown label: %d %v, want 404", resp.StatusCode, out)
	}
	if resp, out := tc.post("/api/auth/signin", map[string]any{"label": "gh", "scope": "other"}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown scope: %d %v, want 404", resp.StatusCode, out)
	}

	events, _ := tc.srv.hub.subscribe(1 << 62)
	defer tc.srv.hub.unsubscribe(events)
	resp, out := tc.post("/api/auth/signin", map[string]any{"label": "gh"}, nil)
	link := fmtAny(out["url"])
	if resp.StatusCode != http.StatusOK || out["ok"] != "waiting" || !strings.HasPrefix(link, as.AuthURL()+"?") {
		t.Fatalf("sign in: %d %v; want a link to %s", resp.StatusCode, out, as.AuthURL())
	}
	_, doc = tc.get("/auth")
	if got := linkOf(doc, "signin-link"); got != link {
		t.Errorf("the page links %q, want the sign-in's %q", got, link)
	}
	if n := len(byClass(doc, "signin-start")); n != 0 {
		t.Errorf("a pending sign-in still offers Sign in")
	}
	if resp, out := tc.post("/api/auth/signin", map[string]any{"label": "gh"}, nil); resp.StatusCode != http.StatusOK || out["url"] != link {
		t.Errorf("a second sign in: %v; want the same link", out)
	}

	if code, _ := oauthtest.Browser(t, link); code != http.StatusOK {
		t.Fatalf("the loopback listener answered %d", code)
	}
	doc = waitAuth(t, tc, events, "signed in")
	page = text(doc)
	for _, want := range []string{"repo read:user", "Signed in at"} {
		if !strings.Contains(page, want) {
			t.Errorf("after the sign-in the page lacks %q:\n%s", want, page)
		}
	}
	if linkOf(doc, "signin-link") != "" {
		t.Error("the page still shows the sign-in link")
	}
	if resp, out := tc.post("/api/auth/signin", map[string]any{"label": "gh"}, nil); out["ok"] != "signed in" {
		t.Errorf("signing in when signed in: %d %v", resp.StatusCode, out)
	}

	if resp, out := tc.post("/api/auth/signout", map[string]any{"label": "gh"}, nil); resp.StatusCode != http.StatusOK || out["ok"] != "signed out" {
		t.Fatalf("sign out: %d %v", resp.StatusCode, out)
	}
	_, doc = tc.get("/auth")
	if got := scopeState(doc, "gh"); got != "not signed in" || !strings.Contains(text(doc), "signed out at") {
		t.Errorf("after sign out: state %q\n%s", got, text(doc))
	}
}

// tokenPattern is what the test authorization server's tokens look like.
var tokenPattern = regexp.MustCompile(`(at|rt)-[A-Z2-7]{20,}`)

// Attack: with a stack signed in (through a call's challenge, followed live),
// no page, API answer or event carries the access or the refresh token.
func TestAuthNeverShowsTheTokens(t *testing.T) {
	as := oauthtest.New(t)
	dir := t.TempDir()
	u := newUnattached(t)
	st, d := oauthStack(t, as, dir, "sqlite:tokens.db", func() *Server { return u.srv })
	u.attach(st, d)
	tc := u.login()

	// The whole event stream, as a browser reads it, until the console closes.
	req, _ := http.NewRequest(http.MethodGet, tc.ts.URL+"/events", nil)
	stream, err := tc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stream.Body.Close()
		sc := bufio.NewScanner(stream.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			streamed.WriteString(sc.Text() + "\n")
		}
	}()

	events, _ := tc.srv.hub.subscribe(1 << 62)
	defer tc.srv.hub.unsubscribe(events)
	var answers []string
	run := func() map[string]any {
		tools, err := d.(mcs.ToolDriver).ListTools(context.Background())
		if err != nil || len(tools) != 1 {
			t.Fatalf("tools %v %v; want getMe", tools, err)
		}
		_, out := tc.post("/api/run", map[string]any{"tool": tools[0].Name, "fields": map[string]string{}}, nil)
		b, _ := json.Marshal(out)
		answers = append(answers, string(b))
		return out
	}
	if out := run(); out["kind"] != "challenge" {
		t.Fatalf("the first call: %v; want a challenge", out)
	}
	_, doc := tc.get("/auth")
	link := linkOf(doc, "signin-link")
	if !strings.HasPrefix(link, as.AuthURL()+"?") {
		t.Fatalf("the Auth page links %q, not the sign-in of the call\n%s", link, text(doc))
	}
	oauthtest.Browser(t, link)
	waitAuth(t, tc, events, "signed in")
	if out := run(); out["kind"] != "result" || !strings.Contains(fmtAny(out["text"]), "octocat") {
		t.Fatalf("the call once signed in: %v", out)
	}

	// The tokens, as the store holds them.
	p, err := st.CredentialProvider(context.Background(), "gh")
	if err != nil {
		t.Fatal(err)
	}
	store, err := auth.OpenStore(context.Background(), "sqlite:"+filepath.Join(dir, "tokens.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.(io.Closer).Close()
	raw, _, ok, err := store.Load(p.(*auth.AuthCodeProvider).StoreKey("gh"))
	var tok struct {
		Access  string `json:"access_token"`
		Refresh string `json:"refresh_token"`
	}
	if err != nil || !ok || json.Unmarshal([]byte(raw), &tok) != nil || tok.Access == "" || tok.Refresh == "" {
		t.Fatalf("the store holds no token: %v %v", ok, err)
	}
	if !tokenPattern.MatchString(tok.Access) || !tokenPattern.MatchString(tok.Refresh) {
		t.Fatalf("the token pattern misses the tokens of the server")
	}

	var scraped []string
	for _, pg := range pages {
		resp, err := tc.c.Get(tc.ts.URL + "/" + pg.Path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		scraped = append(scraped, "page "+pg.Path+":\n"+string(b))
	}
	if s := scraped[slices.IndexFunc(pages, func(p pageDef) bool { return p.Path == "auth" })]; !strings.Contains(s, "signed in") || !strings.Contains(s, "repo read:user") {
		t.Errorf("the Auth page does not show the sign-in:\n%s", s)
	}
	resp, err := tc.c.Get(tc.ts.URL + "/api/approvals")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	scraped = append(scraped, "approvals:\n"+string(b))
	for _, a := range answers {
		scraped = append(scraped, "answer:\n"+a)
	}
	tc.srv.Close() // ends the stream
	wg.Wait()
	scraped = append(scraped, "events:\n"+streamed.String())
	if !strings.Contains(streamed.String(), "event: auth") || !strings.Contains(streamed.String(), "event: audit") {
		t.Errorf("the stream lacks the auth and audit events:\n%s", streamed.String())
	}
	for _, s := range scraped {
		for _, secret := range []string{tok.Access, tok.Refresh} {
			if strings.Contains(s, secret) {
				t.Errorf("a token is shown in %s", s)
			}
		}
		if m := tokenPattern.FindString(s); m != "" {
			t.Errorf("%q, a token, is shown in %s", m, s)
		}
	}
}
