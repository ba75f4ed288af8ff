package console

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/stack"
)

// The form of a tool follows its schema: enums and booleans as selects,
// numbers as text read as mcs call reads them, arrays and objects as JSON.
func TestToolFormFollowsTheSchema(t *testing.T) {
	tc, _ := fakeConsole(t)
	_, doc := tc.get("/tools")
	got := map[string]string{}
	for _, form := range byClass(doc, "run") {
		if v, _ := attr(form, "data-tool"); v != "echo" {
			continue
		}
		walk(form, func(n *html.Node) {
			name, ok := attr(n, "name")
			if !ok {
				return
			}
			kind := n.Data
			if m, ok := attr(n, "inputmode"); ok {
				kind += ":" + m
			}
			if n.Data == "select" {
				var opts []string
				walk(n, func(o *html.Node) {
					if o.Data == "option" {
						opts = append(opts, text(o))
					}
				})
				kind += ":" + strings.Join(opts, "|")
			}
			got[name] = kind
		})
	}
	want := map[string]string{
		"text": "input", "n": "input:decimal", "mode": "select:(unset)|fast|slow", "flag": "select:(unset)|true|false",
		"list": "textarea", "obj": "textarea",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	var badges []string
	for _, b := range byClass(doc, "badge") {
		badges = append(badges, text(b))
	}
	if diff := cmp.Diff([]string{"read-only", "destructive", "unknown effects"}, badges); diff != "" {
		t.Errorf("badges (-want +got):\n%s", diff)
	}
}

// Run reads each field as mcs call reads key=value, with the same messages,
// and shows results, errors and signals as such, redacted.
func TestRun(t *testing.T) {
	tc, f := fakeConsole(t)
	for _, c := range []struct {
		name   string
		tool   string
		fields map[string]string
		kind   string
		text   []string
		absent []string
	}{
		{"values converted", "echo", map[string]string{"text": "hi", "n": "3", "mode": "fast", "flag": "true", "list": "a, b", "obj": `{"k": 1}`, "ignored": ""},
			"result", []string{`"n": 3`, `"flag": true`, `"list": [`, `"a"`, `"k": 1`}, nil},
		{"bad integer", "echo", map[string]string{"text": "hi", "n": "three"}, "invalid", []string{`parameter n wants an integer, not "three"`}, nil},
		{"bad boolean and object", "echo", map[string]string{"flag": "maybe", "obj": "{"}, "invalid", []string{`parameter flag wants true or false, not "maybe"`, "parameter obj wants a JSON object"}, nil},
		{"unknown parameter", "echo", map[string]string{"nope": "1"}, "invalid", []string{`tool echo has no parameter "nope"`}, nil},
		{"unknown tool", "gone", nil, "invalid", []string{`no tool is called "gone"`}, nil},
		{"secrets redacted", "secret", map[string]string{"api_key": "k-9f8e7d6c5b4a"}, "result", []string{`"password": "[REDACTED]"`}, []string{"hunter2", "sk-live-abcdef123456", "k-9f8e7d6c5b4a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, out := tc.post("/api/run", map[string]any{"tool": c.tool, "fields": c.fields}, nil)
			if out["kind"] != c.kind {
				t.Fatalf("kind %v, want %s (%v)", out["kind"], c.kind, out)
			}
			txt, _ := out["text"].(string)
			for _, w := range c.text {
				if !strings.Contains(txt, w) {
					t.Errorf("text %q lacks %q", txt, w)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(txt, a) {
					t.Errorf("text %q shows the secret %q", txt, a)
				}
			}
		})
	}
	if n := f.calls.Load(); n != 2 {
		t.Errorf("the tools ran %d times, want 2 (invalid arguments never reach them)", n)
	}
}

// A consent question waits in the browser; allowed, the call runs once;
// refused, it does not run.
func TestConsentInTheBrowser(t *testing.T) {
	f := &fakeTools{}
	var srv *Server
	consent := func(ctx context.Context, name string, args map[string]any) (bool, error) {
		return srv.Consent(ctx, name, args)
	}
	d := mcs.NewBaseDriver(f, mcs.WithMiddleware(permission.New(consent)))
	tc := newTestConsole(t, nil, d, nil, Config{})
	srv = tc.srv
	for _, allow := range []bool{true, false} {
		events, _ := srv.hub.subscribe(1 << 62)
		done := make(chan map[string]any, 1)
		go func() {
			_, out := tc.post("/api/run", map[string]any{"tool": "secret", "fields": map[string]string{"api_key": "k-1234567890"}}, nil)
			done <- out
		}()
		var q map[string]any
		for q == nil {
			ev := <-events
			if ev.name != "approvals" {
				continue
			}
			_, view := tc.getJSON("/api/approvals")
			if qs, _ := view["consent"].([]any); len(qs) == 1 {
				q = qs[0].(map[string]any)
			}
		}
		srv.hub.unsubscribe(events)
		if args := q["arguments"].(map[string]any); args["api_key"] != "[REDACTED]" || q["tool"] != "secret" {
			t.Errorf("question %v; want tool secret with api_key redacted", q)
		}
		if resp, out := tc.post("/api/consent", map[string]any{"id": q["id"], "approve": allow}, nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("answer: %d %v", resp.StatusCode, out)
		}
		out := <-done
		want := map[bool]string{true: "result", false: "denied"}[allow]
		if out["kind"] != want {
			t.Errorf("allow=%v: kind %v, want %s (%v)", allow, out["kind"], want, out)
		}
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
	if resp, _ := tc.post("/api/consent", map[string]any{"id": "q1", "approve": true}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("answering an answered question: %d, want 404", resp.StatusCode)
	}
}

func (tc *testConsole) getJSON(path string) (*http.Response, map[string]any) {
	tc.t.Helper()
	resp, err := tc.c.Get(tc.ts.URL + path)
	if err != nil {
		tc.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tc.t.Fatal(err)
	}
	return resp, out
}

// queueStack is a stack of the CSV driver whose calls wait in a memory
// approval store.
func queueStack(t *testing.T, srv func() *Server) (*stack.Stack, mcs.Driver) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("x,y\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := "[[driver]]\nlabel = \"d\"\ntype = \"csv\"\nroot = '" + dir + "'\n[middleware.hooks]\n[middleware.permission]\nask = \"queue\"\n[approvals]\nstore = \"memory:\"\n"
	st, err := stack.Parse(filepath.Join(dir, "mcs.toml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	st.Host.Audit = srv().AuditLogger()
	d, err := st.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, d
}

// With ask = "queue" a run waits for approval; approved on the Approvals
// page, it runs once, and the decision is in the audit.
func TestQueuedApproval(t *testing.T) {
	var srv *Server
	ts := newUnattached(t)
	srv = ts.srv
	st, d := queueStack(t, func() *Server { return srv })
	ts.attach(st, d)
	tc := ts.login()
	audit, _ := srv.hub.subscribe(0)
	defer srv.hub.unsubscribe(audit)

	_, out := tc.post("/api/run", map[string]any{"tool": "read_csv_head", "fields": map[string]string{"path": "a.csv"}}, nil)
	id, _ := out["approval"].(string)
	if out["kind"] != "pending" || id == "" {
		t.Fatalf("run: %v; want pending with an approval id", out)
	}
	_, view := tc.getJSON("/api/approvals")
	if p, _ := view["pending"].([]any); len(p) != 1 || p[0].(map[string]any)["id"] != id {
		t.Fatalf("pending %v; want the request %s", view["pending"], id)
	}
	if resp, out := tc.post("/api/approvals/run", map[string]any{"id": id}, nil); resp.StatusCode != http.StatusOK || out["kind"] != "not-run" {
		t.Errorf("running a pending request: %v; want not-run", out)
	}
	if resp, out := tc.post("/api/approvals/decide", map[string]any{"id": id, "approve": true, "reason": "checked"}, nil); resp.StatusCode != http.StatusOK || out["ok"] != "approved" {
		t.Fatalf("approve: %d %v", resp.StatusCode, out)
	}
	if resp, _ := tc.post("/api/approvals/decide", map[string]any{"id": id, "approve": false}, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("deciding twice: %d, want 409", resp.StatusCode)
	}
	_, out = tc.post("/api/approvals/run", map[string]any{"id": id}, nil)
	if out["kind"] != "result" || !strings.Contains(out["text"].(string), `"x"`) {
		t.Fatalf("run approved: %v; want the result", out)
	}
	_, out = tc.post("/api/approvals/run", map[string]any{"id": id}, nil)
	if out["kind"] == "result" {
		t.Errorf("the approval ran twice: %v", out)
	}
	_, view = tc.getJSON("/api/approvals")
	decided, _ := view["decided"].([]any)
	if len(decided) != 1 || decided[0].(map[string]any)["state"] != "used" {
		t.Fatalf("decided %v; want the request used", decided)
	}
	dec := decided[0].(map[string]any)["decision"].(map[string]any)
	if dec["by"] != "mcs ui" || dec["reason"] != "checked" || dec["approve"] != true {
		t.Errorf("decision %v; want approved by mcs ui, reason checked", dec)
	}
	var msgs []string
	for len(msgs) < 3 {
		ev := <-audit
		if ev.name == "audit" {
			var rec struct {
				Msg    string         `json:"msg"`
				Fields map[string]any `json:"fields"`
			}
			_ = json.Unmarshal(ev.data, &rec)
			msgs = append(msgs, rec.Msg+" "+fmtAny(rec.Fields["outcome"])+fmtAny(rec.Fields["decision"]))
		}
	}
	want := []string{"tool call pending", "approval decision approved", "tool call ok"}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// A stack that fails to build is shown on every page with its file, line and key.
func TestStackErrorShown(t *testing.T) {
	_, err := stack.Parse("bad.toml", []byte("[[driver]]\nlabel = \"a\"\ntype = \"csv\"\nrot = \".\"\n"))
	if err == nil {
		t.Fatal("the stack parsed")
	}
	tc := newTestConsole(t, nil, nil, err, Config{})
	for _, p := range []string{"/tools", "/approvals"} {
		_, doc := tc.get(p)
		probs := byClass(doc, "problems")
		if len(probs) != 1 {
			t.Fatalf("%s: no problems section", p)
		}
		got := text(probs[0])
		for _, w := range []string{"bad.toml:4", "rot", "unknown key"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems %q lack %q", p, got, w)
			}
		}
	}
	if _, out := tc.post("/api/run", map[string]any{"tool": "x"}, nil); out["kind"] != "error" {
		t.Errorf("run on a broken stack: %v", out)
	}
}

// A stream that reconnects with Last-Event-ID gets the audit records it missed, and only those.
func TestEventsReplayAfterReconnect(t *testing.T) {
	tc, _ := fakeConsole(t)
	for i := range 3 {
		tc.srv.AuditLogger().Info("tool call", "tool", "t"+string(rune('0'+i)))
	}
	req, _ := http.NewRequest(http.MethodGet, tc.ts.URL+"/events", nil)
	req.Header.Set("Last-Event-ID", "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := tc.c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var ids []string
	for sc.Scan() && len(ids) < 2 {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	if diff := cmp.Diff([]string{"2", "3"}, ids); diff != "" {
		t.Errorf("replayed ids (-want +got):\n%s", diff)
	}
}

// The embedded assets stay small: no framework, no build step.
func TestAssetsSize(t *testing.T) {
	total := 0
	err := fs.WalkDir(Assets(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Assets(), path)
		total += len(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > 200<<10 {
		t.Errorf("the embedded assets are %d bytes, more than 200 KiB", total)
	}
}

func TestAllowedHosts(t *testing.T) {
	for _, c := range []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:8765", []string{"127.0.0.1:8765", "localhost:8765", "[::1]:8765"}},
		{"[::1]:80", []string{"[::1]:80", "localhost:80", "127.0.0.1:80"}},
		{"192.0.2.10:8765", []string{"192.0.2.10:8765"}},
	} {
		if diff := cmp.Diff(c.want, AllowedHosts(c.addr)); diff != "" {
			t.Errorf("AllowedHosts(%q) (-want +got):\n%s", c.addr, diff)
		}
	}
}

// A page that shows no audit asks for no backlog; it still gets what comes.
func TestEventsWithoutBacklog(t *testing.T) {
	tc, _ := fakeConsole(t)
	tc.srv.AuditLogger().Info("tool call", "tool", "old")
	req, _ := http.NewRequest(http.MethodGet, tc.ts.URL+"/events?backlog=0", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := tc.c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // retry:
	sc.Scan() // blank: the stream is open, the backlog (none) sent
	tc.srv.AuditLogger().Info("tool call", "tool", "new")
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if !strings.Contains(data, `"new"`) {
				t.Errorf("first record %s; want the new one only", data)
			}
			return
		}
	}
	t.Fatal("the stream ended")
}

// A request's details (what its driver adds for the person deciding, such as a
// mail draft) reach the Approvals page beside its arguments: redacted as the
// other values are, and as JSON text whose markup is escaped, never markup.
func TestApprovalDetails(t *testing.T) {
	u := newUnattached(t)
	st, d := queueStack(t, func() *Server { return u.srv })
	u.attach(st, d)
	tc := u.login()
	body := "Hello,\n" + hostile + "\nthe password: hunter2"
	rq, err := u.srv.store.Create(context.Background(), approvals.Request{
		Label: "mail", Tool: "send_draft", Fingerprint: "f1", Expires: time.Now().Add(time.Hour),
		Arguments: map[string]any{"draft_id": "d1", "token": "tok-in-args-123"},
		Details: map[string]any{
			"draft":    map[string]any{"to": "a@example.com", "subject": "<b>hi</b>", "body": body, "note": "tok-in-args-123"},
			"api_key":  "sk-live-abcdef123456",
			"draft_id": "d1",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tc.c.Get(tc.ts.URL + "/api/approvals")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, bad := range []string{"<script", "<img", "<b>", "hunter2", "sk-live-abcdef123456", "tok-in-args-123"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("the approvals answer holds %q:\n%s", bad, raw)
		}
	}
	var view struct {
		Pending []struct {
			ID      string         `json:"id"`
			Details map[string]any `json:"details"`
		} `json:"pending"`
	}
	if err := json.Unmarshal(raw, &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Pending) != 1 || view.Pending[0].ID != rq.ID {
		t.Fatalf("pending %+v; want the request %s", view.Pending, rq.ID)
	}
	want := map[string]any{
		"draft": map[string]any{
			"to": "a@example.com", "subject": "<b>hi</b>",
			"body": "Hello,\n" + hostile + "\nthe password: [REDACTED]", "note": "[REDACTED]",
		},
		"api_key":  "[REDACTED]",
		"draft_id": "d1",
	}
	if diff := cmp.Diff(want, view.Pending[0].Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}
