package console

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcs-go/mcs/cmd/mcs/internal/browsertest"
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
