package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/html"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/stack"
)

// hostile is what a hostile driver puts in a description and a result.
const hostile = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">"'><b>`

// fakeTools is a tool driver with a tool of each parameter kind, one whose
// description and result are hostile markup, and one whose result holds
// secrets. It counts the calls that reach it.
type fakeTools struct{ calls atomic.Int64 }

func (*fakeTools) Meta() mcs.Meta { return mcs.Meta{ID: "test/fake", Name: "fake"} }

func (*fakeTools) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "echo", Description: "Echoes its arguments.", Annotations: &mcs.ToolAnnotations{ReadOnly: true}, Parameters: []mcs.Parameter{
			{Name: "text", Required: true, Schema: map[string]any{"type": "string"}},
			{Name: "n", Schema: map[string]any{"type": "integer"}},
			{Name: "mode", Schema: map[string]any{"type": "string", "enum": []any{"fast", "slow"}}},
			{Name: "flag", Schema: map[string]any{"type": "boolean"}},
			{Name: "list", Schema: map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
			{Name: "obj", Schema: map[string]any{"type": "object"}},
		}},
		{Name: "xss", Title: hostile, Description: "Shows markup. " + hostile, Annotations: &mcs.ToolAnnotations{Destructive: true}},
		{Name: "secret", Description: "Returns secrets.", Parameters: []mcs.Parameter{{Name: "api_key", Schema: map[string]any{"type": "string"}}}},
	}, nil
}

func (f *fakeTools) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	f.calls.Add(1)
	switch name {
	case "echo":
		return args, nil
	case "xss":
		return hostile, nil
	case "secret":
		return map[string]any{"password": "hunter2", "note": "sent with Authorization: Bearer sk-live-abcdef123456", "echo": args["api_key"]}, nil
	}
	return nil, mcs.ErrUnknownTool
}

// testConsole is a console over httptest with a browser-like client that
// has traded the token for the cookie.
type testConsole struct {
	t    *testing.T
	srv  *Server
	ts   *httptest.Server
	c    *http.Client // logged in
	csrf string
}

func newTestConsole(t *testing.T, st *stack.Stack, d mcs.Driver, buildErr error, cfg Config) *testConsole {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	cfg.Hosts = AllowedHosts(ts.Listener.Addr().String())
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	srv.Attach(context.Background(), st, d, buildErr)
	tc := &testConsole{t: t, srv: srv, ts: ts}
	jar, _ := cookiejar.New(nil)
	tc.c = &http.Client{Jar: jar}
	resp, err := tc.c.Get(ts.URL + "/?token=" + srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, resp)
	tc.csrf = metaContent(doc, "csrf-token")
	if tc.csrf == "" {
		t.Fatal("the page has no CSRF token")
	}
	return tc
}

// post sends a change as the console's script does; edit may spoil it.
func (tc *testConsole) post(path string, body any, edit func(*http.Request)) (*http.Response, map[string]any) {
	tc.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, tc.ts.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", tc.ts.URL)
	req.Header.Set(CSRFHeader, tc.csrf)
	if edit != nil {
		edit(req)
	}
	resp, err := tc.c.Do(req)
	if err != nil {
		tc.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp, out
}

func (tc *testConsole) get(path string) (*http.Response, *html.Node) {
	tc.t.Helper()
	resp, err := tc.c.Get(tc.ts.URL + path)
	if err != nil {
		tc.t.Fatal(err)
	}
	return resp, parse(tc.t, resp)
}

func parse(t *testing.T, resp *http.Response) *html.Node {
	t.Helper()
	defer resp.Body.Close()
	doc, err := html.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// walk calls f on every element of n.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func metaContent(doc *html.Node, name string) string {
	out := ""
	walk(doc, func(n *html.Node) {
		if v, _ := attr(n, "name"); n.Data == "meta" && v == name {
			out, _ = attr(n, "content")
		}
	})
	return out
}

// text is the text of n and its descendants.
func text(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

// byClass returns the elements with the class.
func byClass(doc *html.Node, class string) []*html.Node {
	var out []*html.Node
	walk(doc, func(n *html.Node) {
		if v, ok := attr(n, "class"); ok && strings.Contains(" "+v+" ", " "+class+" ") {
			out = append(out, n)
		}
	})
	return out
}

// unattached is a console served before its stack is built, as mcs ui does.
type unattached struct {
	t   *testing.T
	srv *Server
	ts  *httptest.Server
}

func newUnattached(t *testing.T) *unattached {
	ts := httptest.NewUnstartedServer(nil)
	srv, err := New(Config{Hosts: AllowedHosts(ts.Listener.Addr().String())})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	return &unattached{t: t, srv: srv, ts: ts}
}

func (u *unattached) attach(st *stack.Stack, d mcs.Driver) {
	u.srv.Attach(context.Background(), st, d, nil)
}

func (u *unattached) login() *testConsole {
	tc := &testConsole{t: u.t, srv: u.srv, ts: u.ts}
	jar, _ := cookiejar.New(nil)
	tc.c = &http.Client{Jar: jar}
	resp, err := tc.c.Get(u.ts.URL + "/?token=" + u.srv.Token())
	if err != nil {
		u.t.Fatal(err)
	}
	tc.csrf = metaContent(parse(u.t, resp), "csrf-token")
	return tc
}

func fmtAny(v any) string {
	if v == nil {
		return ""
	}
	s, _ := v.(string)
	return s
}
