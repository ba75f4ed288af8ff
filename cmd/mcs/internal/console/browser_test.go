package console

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/cmd/mcs/internal/browsertest"
	"github.com/mcs-go/mcs/internal/oauthtest"
)

// The Audit page's event stream reconnects when the connection drops, and
// gets the records it missed, each once.
func TestEventStreamReconnectsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts chromium")
	}
	ctx := browsertest.Start(t)
	tc, _ := fakeConsole(t)
	rows := `Array.from(document.querySelectorAll("#audit tr")).map(r => r.cells[2].textContent).join(",")`
	poll := func(expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v (rows: %s)", expr, err, browsertest.Eval[string](t, ctx, rows))
		}
	}
	if err := browsertest.Within(ctx,
		chromedp.Navigate(tc.ts.URL+"/?token="+tc.srv.Token()),
		chromedp.Navigate(tc.ts.URL+"/audit"),
		chromedp.WaitVisible(chromedp.CSS("#audit")),
	); err != nil {
		t.Fatal(err)
	}
	poll(`document.querySelector("#live").className === "live up"`)
	tc.srv.AuditLogger().Info("tool call", "tool", "before")
	poll(rows + ` === "before"`)

	tc.ts.CloseClientConnections() // the stream drops
	// The browser records a stream in its resource timing once it has ended.
	poll(`performance.getEntriesByType("resource").some(e => e.name.includes("/events"))`)
	tc.srv.AuditLogger().Info("tool call", "tool", "while-down")
	poll(rows + ` === "while-down,before"`)
	tc.srv.AuditLogger().Info("tool call", "tool", "after")
	poll(rows + ` === "after,while-down,before"`)
	if got := browsertest.Eval[string](t, ctx, rows); strings.Count(got, "before") != 1 {
		t.Errorf("rows %q; want each record once", got)
	}
}

// With ask = "queue", a Run waits for approval; approved with a reason on the
// Approvals page of another tab and run there, it runs once, and the decided
// request says who, when and why. A request whose details (from its driver)
// hold markup shows them as text beside its arguments, and no script runs.
func TestQueuedApprovalInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts chromium")
	}
	ctx := browsertest.Start(t)
	u := newUnattached(t)
	st, d := queueStack(t, func() *Server { return u.srv })
	u.attach(st, d)
	tool := `details[data-name="read_csv_head"]`
	if err := browsertest.Within(ctx,
		chromedp.Navigate(u.ts.URL+"/?token="+u.srv.Token()),
		chromedp.Click(chromedp.CSS(tool+" summary")),
		chromedp.SetValue(chromedp.CSS(tool+` input[name="path"]`), "a.csv"),
		chromedp.Click(chromedp.CSS(tool+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(tool+" .outcome.kind-pending")),
	); err != nil {
		t.Fatal(err)
	}
	tab2, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab2); err != nil {
		t.Fatal(err)
	}
	poll := func(c context.Context, expr string) {
		t.Helper()
		if _, err := chromedp.Run(c, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", expr, err)
		}
	}
	if err := browsertest.Within(tab2, chromedp.Navigate(u.ts.URL+"/approvals")); err != nil {
		t.Fatal(err)
	}
	poll(tab2, `document.querySelector("#pending .request button.approve") !== null`)
	if args := browsertest.Eval[string](t, tab2, `document.querySelector("#pending .request pre").textContent`); !strings.Contains(args, `"path": "a.csv"`) {
		t.Errorf("the pending request shows %q, not its arguments", args)
	}
	browsertest.Eval[bool](t, tab2, `(() => { const r = document.querySelector("#pending .request"); r.querySelector("input.reason").value = "looks fine"; r.querySelector("button.approve").click(); return true })()`)
	poll(tab2, `document.querySelector("#decided button.run") !== null`)
	browsertest.Eval[bool](t, tab2, `(() => { document.querySelector("#decided button.run").click(); return true })()`)
	poll(tab2, `document.querySelector("#run-outcome.kind-result") !== null`)
	if got := browsertest.Eval[string](t, tab2, `document.querySelector("#run-outcome pre").textContent`); !strings.Contains(got, `"x"`) {
		t.Errorf("the run shows %q, not the rows", got)
	}
	poll(tab2, `document.querySelector("#decided tr").cells[1].textContent === "used"`)
	row := browsertest.Eval[string](t, tab2, `Array.from(document.querySelector("#decided tr").cells).map(c => c.textContent).join("|")`)
	for _, want := range []string{"used", "read_csv_head", "approved", "mcs ui", "looks fine"} {
		if !strings.Contains(row, want) {
			t.Errorf("the decided row %q lacks %q", row, want)
		}
	}
	if n := browsertest.Eval[int](t, tab2, `document.querySelectorAll("#decided button.run").length`); n != 0 {
		t.Errorf("a used request still offers Run now")
	}

	if _, err := u.srv.store.Create(context.Background(), approvals.Request{
		Label: "mail", Tool: "send_draft", Fingerprint: "f-details", Expires: time.Now().Add(time.Hour),
		Arguments: map[string]any{"draft_id": "d1"},
		Details:   map[string]any{"draft": map[string]any{"subject": "hi", "body": hostile}},
	}); err != nil {
		t.Fatal(err)
	}
	poll(tab2, `document.querySelector("#pending .request pre.details") !== null`)
	got := browsertest.Eval[string](t, tab2, `document.querySelector("#pending .request pre.details").textContent`)
	if !strings.Contains(got, `<script>window.pwned=1</script>`) || !strings.Contains(got, `"subject": "hi"`) {
		t.Errorf("the details show %q, not the draft as text", got)
	}
	if n := browsertest.Eval[int](t, tab2, `document.querySelectorAll("#pending script, #pending img").length`); n != 0 {
		t.Errorf("the details were inserted as markup: %d elements", n)
	}
	if pwned := browsertest.Eval[bool](t, tab2, `window.pwned !== undefined`); pwned {
		t.Error("the script of the details ran")
	}
}

// The Auth page signs in in the browser: Sign in shows the link; the link,
// opened in another tab, signs in through the loopback listener of this
// process, and the first tab shows it without a reload by hand; Sign out
// signs out.
func TestAuthInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts chromium")
	}
	ctx := browsertest.Start(t)
	as := oauthtest.New(t)
	u := newUnattached(t)
	st, d := oauthStack(t, as, t.TempDir(), "memory:", nil)
	st.File = filepath.Base(st.File) // the screenshot names the file, not the temporary directory
	u.attach(st, d)
	// The page reloads on its own when a sign-in starts or ends: a poll that
	// a reload interrupts is run again on the new page.
	poll := func(c context.Context, expr string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			_, err := chromedp.Run(c, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
			if err == nil {
				return
			}
			if time.Now().After(deadline) || !strings.Contains(err.Error(), "(-32000)") {
				t.Fatalf("waiting for %s: %v", expr, err)
			}
		}
	}
	state := `document.querySelector('tr[data-scope="gh"] .state').textContent`
	if err := browsertest.Within(ctx,
		chromedp.Navigate(u.ts.URL+"/?token="+u.srv.Token()),
		chromedp.Navigate(u.ts.URL+"/auth"),
		chromedp.WaitVisible(chromedp.CSS(`section[data-label="gh"] button.signin-start`)),
	); err != nil {
		t.Fatal(err)
	}
	if got := browsertest.Eval[string](t, ctx, state); got != "not signed in" {
		t.Errorf("state %q before the sign-in", got)
	}
	poll(ctx, `document.querySelector("#live").className === "live up"`)
	browsertest.Eval[bool](t, ctx, `(() => { document.querySelector("button.signin-start").click(); return true })()`)
	poll(ctx, `document.querySelector("a.signin-link") !== null`)
	link := browsertest.Eval[string](t, ctx, `document.querySelector("a.signin-link").href`)
	if !strings.HasPrefix(link, as.AuthURL()+"?") {
		t.Fatalf("the sign-in link is %q", link)
	}
	poll(ctx, `document.querySelector("#live").className === "live up"`)

	tab2, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab2); err != nil {
		t.Fatal(err)
	}
	if err := browsertest.Within(tab2, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	poll(ctx, state+` === "signed in"`)
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('section[data-label="gh"]').textContent`); !strings.Contains(got, "repo read:user") || strings.Contains(got, "Open the sign-in page") {
		t.Errorf("after the sign-in the section reads %q", got)
	}
	browsertest.Shot(t, ctx, "auth")
	browsertest.Eval[bool](t, ctx, `(() => { document.querySelector("button.signout").click(); return true })()`)
	poll(ctx, state+` === "not signed in"`)
}
