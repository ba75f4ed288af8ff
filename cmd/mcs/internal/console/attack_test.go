package console

import (
	"encoding/json"

	"golang.org/x/net/html"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
)

func fakeConsole(t *testing.T) (*testConsole, *fakeTools) {
	f := &fakeTools{}
	return newTestConsole(t, nil, mcs.NewBaseDriver(f), nil, Config{}), f
}

// Every way in without the token, or around the checks, is refused, and the
// tool does not run.
func TestAttacksAreRefused(t *testing.T) {
	tc, f := fakeConsole(t)
	run := map[string]any{"tool": "echo", "fields": map[string]string{"text": "hi"}}
	for _, c := range []struct {
		name string
		edit func(*http.Request)
		want int
	}{
		{"cross-origin POST", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
		{"no Origin", func(r *http.Request) { r.Header.Del("Origin") }, http.StatusForbidden},
		{"null Origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, http.StatusForbidden},
		{"missing CSRF token", func(r *http.Request) { r.Header.Del(CSRFHeader) }, http.StatusForbidden},
		{"wrong CSRF token", func(r *http.Request) { r.Header.Set(CSRFHeader, tc.csrf+"x") }, http.StatusForbidden},
		{"form post", func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, http.StatusUnsupportedMediaType},
		{"rebinding Host", func(r *http.Request) { r.Host = "evil.example:" + tc.ts.URL[strings.LastIndex(tc.ts.URL, ":")+1:] }, http.StatusMisdirectedRequest},
		{"no cookie", func(r *http.Request) {}, http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			saved := tc.c
			if c.name == "no cookie" {
				tc.c = &http.Client{}
			}
			resp, _ := tc.post("/api/run", run, c.edit)
			tc.c = saved
			if resp.StatusCode != c.want {
				t.Errorf("status %d, want %d", resp.StatusCode, c.want)
			}
		})
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("the tool ran %d times; a refused request must not run it", n)
	}
	if resp, out := tc.post("/api/run", run, nil); resp.StatusCode != http.StatusOK || out["kind"] != "result" {
		t.Fatalf("the console's own request: status %d, %v", resp.StatusCode, out)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// A wrong token gives no cookie; the right one gives an HttpOnly, SameSite=
// Strict cookie and a redirect to the page without the token; a rebinding Host
// is refused even with the right token.
func TestTokenExchange(t *testing.T) {
	tc, _ := fakeConsole(t)
	noRedirect := func(c *http.Client) *http.Client {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return c
	}
	c := noRedirect(&http.Client{})
	for _, path := range []string{"/tools", "/events", "/api/approvals"} {
		resp, err := c.Get(tc.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "csrf") {
			t.Errorf("GET %s without the cookie: status %d, body %q; want 401 and nothing of the console", path, resp.StatusCode, body)
		}
	}
	resp, err := c.Get(tc.ts.URL + "/process?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Errorf("wrong token: status %d, cookies %v; want 403 and none", resp.StatusCode, resp.Cookies())
	}
	resp, err = c.Get(tc.ts.URL + "/process?token=" + tc.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/process" {
		t.Errorf("right token: status %d, Location %q; want 303 to /process", resp.StatusCode, resp.Header.Get("Location"))
	}
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || cs[0].Value == tc.srv.Token() {
		t.Fatalf("cookie %+v; want one HttpOnly SameSite=Strict cookie that is not the token", cs)
	}
	resp, err = c.Get(tc.ts.URL + "//evil.example/x?token=" + tc.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/" {
		t.Errorf("token on //evil.example/x: status %d, Location %q; want a redirect to / on the console", resp.StatusCode, loc)
	}
	req, _ := http.NewRequest(http.MethodGet, tc.ts.URL+"/tools?token="+tc.srv.Token(), nil)
	req.Host = "rebind.example.com"
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || len(resp.Cookies()) != 0 {
		t.Errorf("rebinding Host with the token: status %d, cookies %v; want 421 and none", resp.StatusCode, resp.Cookies())
	}
}

// A hostile tool description is text on the page: the only script is the
// console's, with the nonce of the response's CSP, and no element carries an
// event handler.
func TestXSSInDescriptionIsText(t *testing.T) {
	tc, _ := fakeConsole(t)
	var nonces []string
	for range 2 {
		resp, doc := tc.get("/tools")
		csp := resp.Header.Get("Content-Security-Policy")
		var scripts []string
		walk(doc, func(n *html.Node) {
			for _, a := range n.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("<%s> has an event handler %s=%q", n.Data, a.Key, a.Val)
				}
			}
			if n.Data == "script" {
				src, _ := attr(n, "src")
				nonce, _ := attr(n, "nonce")
				scripts = append(scripts, src)
				if nonce == "" || !strings.Contains(csp, "'nonce-"+nonce+"'") {
					t.Errorf("script %q has nonce %q, not the CSP's (%s)", src, nonce, csp)
				}
				nonces = append(nonces, nonce)
			}
			if n.Data == "img" {
				t.Errorf("an <img> made it into the page: %v", n.Attr)
			}
		})
		if len(scripts) != 1 || scripts[0] != "/assets/app.js" {
			t.Fatalf("scripts %v; want only /assets/app.js", scripts)
		}
		for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) || strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q lacks %q or allows unsafe sources", csp, want)
			}
		}
		var desc string
		for _, n := range byClass(doc, "tool") {
			if v, _ := attr(n, "data-name"); v == "xss" {
				desc = text(n)
			}
		}
		if !strings.Contains(desc, hostile) {
			t.Errorf("the hostile description is not shown as text: %q", desc)
		}
	}
	if nonces[0] == nonces[1] {
		t.Errorf("two responses share the nonce %q", nonces[0])
	}
}

// A hostile result comes back as JSON text, with < and > escaped, for the
// script to insert as text.
func TestXSSInResultIsText(t *testing.T) {
	tc, _ := fakeConsole(t)
	b, _ := json.Marshal(map[string]any{"tool": "xss", "fields": map[string]string{}})
	req, _ := http.NewRequest(http.MethodPost, tc.ts.URL+"/api/run", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", tc.ts.URL)
	req.Header.Set(CSRFHeader, tc.csrf)
	resp, err := tc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || strings.Contains(string(raw), "<script") {
		t.Fatalf("Content-Type %q, body %s; want JSON with markup escaped", ct, raw)
	}
	var out Outcome
	if err := json.Unmarshal(raw, &out); err != nil || out.Kind != "result" || out.Text != hostile {
		t.Fatalf("outcome %+v (%v); want the hostile text as the result", out, err)
	}
}
