package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/postgres"
	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/internal/pgtest"
	"github.com/mcs-go/mcs/middleware/auth"
	_ "github.com/mcs-go/mcs/middleware/auth/postgres" // the postgres:// token store
	"github.com/mcs-go/mcs/middleware/permission"
)

// counted counts the calls a replica's driver ran.
type counted struct {
	mcs.ToolDriver
	ran atomic.Int64
}

func (c *counted) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	c.ran.Add(1)
	return c.ToolDriver.ExecuteTool(ctx, name, args)
}

// Two stateless replicas behind a reverse proxy serve one client's calls in
// turn. Calls of remove_* wait for approval in one PostgreSQL store the
// replicas share: a call queued through one replica, approved by a person,
// runs once through the other, and the same call after that waits again.
func TestStatelessReplicasShareApprovals(t *testing.T) {
	dsn := pgtest.New(t)
	ctx := testCtx(t)
	type replica struct {
		driver *counted
		srv    *httptest.Server
	}
	var replicas [2]replica
	for i := range replicas {
		store, err := postgres.Open(ctx, dsn) // one pool per replica, as in two processes
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		perm := permission.New(nil, permission.WithRules(permission.Allow("greet")), permission.WithApprovals(store, time.Hour))
		d := &counted{ToolDriver: &fake{}} // behind the middleware: counts what ran
		s := New(mcs.NewBaseDriver(d, mcs.WithMiddleware(perm)), WithStateless(), WithLogger(quietLog()))
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(func() {
			ts.Close()
			_ = s.Close()
		})
		replicas[i] = replica{driver: d, srv: ts}
	}
	// The proxy sends each request to the replica the test chose; the test
	// alternates them call by call.
	var next atomic.Int32
	var served [2]atomic.Int64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := next.Load()
		served[i].Add(1)
		u, _ := url.Parse(replicas[i].srv.URL)
		r.SetURL(u)
	}})
	t.Cleanup(proxy.Close)

	hc := &http.Client{}
	t.Cleanup(hc.CloseIdleConnections)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "client", Version: "1"}, nil).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: proxy.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	call := func(on int32, name string, args map[string]any) string {
		t.Helper()
		next.Store(on)
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s through replica %d: %v", name, on, err)
		}
		return callText(t, res)
	}

	for i := range 4 {
		if got := call(int32(i%2), "greet", map[string]any{"name": "ada"}); got != "hello ada" {
			t.Errorf("greet through replica %d = %q", i%2, got)
		}
	}
	remove := map[string]any{"path": "/tmp/x"}
	pending := call(0, "remove_file", remove)
	if !strings.Contains(pending, `"approval_pending":true`) {
		t.Fatalf("remove_file = %s; want it to wait for approval", pending)
	}
	id := pendingID(t, pending)
	if again := call(1, "remove_file", remove); pendingID(t, again) != id {
		t.Errorf("the same call through the other replica = %s; want the same id %s", again, id)
	}

	person, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer person.Close()
	if _, err := person.Decide(ctx, id, approvals.Decision{Approve: true, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	ranBefore := replicas[1].driver.ran.Load()
	if got := call(1, "remove_file", remove); got != "removed" {
		t.Errorf("the approved call through replica 1 = %s; want it run", got)
	}
	if replicas[1].driver.ran.Load() != ranBefore+1 {
		t.Error("the approved call did not run on replica 1")
	}
	ran0 := replicas[0].driver.ran.Load()
	if got := call(0, "remove_file", remove); !strings.Contains(got, `"approval_pending":true`) || pendingID(t, got) == id {
		t.Errorf("the same call after its approval was used = %s; want a new request", got)
	}
	if replicas[0].driver.ran.Load() != ran0 {
		t.Error("a call waiting for approval ran")
	}
	for i := range served {
		if served[i].Load() == 0 || replicas[i].driver.ran.Load() < 2 {
			t.Errorf("replica %d served %d requests and ran %d calls; want both replicas to serve", i, served[i].Load(), replicas[i].driver.ran.Load())
		}
	}
}

func pendingID(t *testing.T, text string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, `"id":"`)
	id, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 || id == "" {
		t.Fatalf("no approval id in %s", text)
	}
	return id
}

// tokenDriver answers whoami with the bearer token of scope "api" its
// provider holds, and fails with the provider's challenge until a user signed in.
type tokenDriver struct {
	fake
	p *auth.AuthCodeProvider
}

func (d *tokenDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	if name != "greet" {
		return d.fake.ExecuteTool(ctx, name, args)
	}
	tok, err := d.p.Token(ctx, "api")
	if err != nil {
		return nil, err
	}
	return "signed in as " + tok[:8], nil
}

// Two stateless replicas behind a reverse proxy share their sign-in through one
// PostgreSQL token store: a user signs in through the challenge one replica
// answers, the other replica's calls use the same token at once, and a sign-out
// through either is seen by both.
func TestStatelessReplicasShareTokens(t *testing.T) {
	dsn := pgtest.New(t)
	ctx := testCtx(t)
	as := oauthtest.New(t)
	var providers [2]*auth.AuthCodeProvider
	var backends [2]*httptest.Server
	for i := range backends {
		store, err := auth.OpenStore(ctx, dsn) // one pool per replica, as in two processes
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.(io.Closer).Close() })
		p, err := auth.NewAuthCodeProvider(auth.AuthCodeConfig{
			OAuth2: oauth2.Config{ClientID: as.ClientID, Endpoint: oauth2.Endpoint{AuthURL: as.AuthURL(), TokenURL: as.TokenURL()}},
			Store:  store, Logger: quietLog(),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		providers[i] = p
		s := New(mcs.NewBaseDriver(&tokenDriver{p: p}, mcs.WithMiddleware(auth.New())), WithStateless(), WithLogger(quietLog()))
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(func() {
			ts.Close()
			_ = s.Close()
		})
		backends[i] = ts
	}
	var next atomic.Int32
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		u, _ := url.Parse(backends[next.Load()].URL)
		r.SetURL(u)
	}})
	t.Cleanup(proxy.Close)
	hc := &http.Client{}
	t.Cleanup(hc.CloseIdleConnections)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "client", Version: "1"}, nil).
		Connect(ctx, &mcpsdk.StreamableClientTransport{Endpoint: proxy.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	greet := func(on int32) string {
		t.Helper()
		next.Store(on)
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "ada"}})
		if err != nil {
			t.Fatalf("greet through replica %d: %v", on, err)
		}
		return callText(t, res)
	}

	challenge := greet(0)
	_, rest, ok := strings.Cut(challenge, `"url":"`)
	link, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 {
		t.Fatalf("the first call = %s; want a sign-in challenge with its link", challenge)
	}
	link = strings.ReplaceAll(link, `\u0026`, "&")
	if status, body := oauthtest.Browser(t, link); status != http.StatusOK {
		t.Fatalf("sign-in: %d %s", status, body)
	}
	if err := providers[0].Wait(ctx, "api"); err != nil {
		t.Fatal(err)
	}
	first := greet(1)
	if !strings.HasPrefix(first, "signed in as ") {
		t.Fatalf("through the other replica after the sign-in = %s; want the shared token", first)
	}
	if again := greet(0); again != first {
		t.Errorf("the replicas use different tokens: %q and %q", first, again)
	}
	if n := as.Exchanges.Load(); n != 1 {
		t.Errorf("the token endpoint exchanged %d codes; want 1 sign-in for both replicas", n)
	}
	if err := providers[1].Forget(ctx, "api"); err != nil {
		t.Fatal(err)
	}
	if after := greet(0); strings.HasPrefix(after, "signed in as ") {
		t.Errorf("after a sign-out through the other replica, greet = %s; want a new challenge", after)
	}
}
