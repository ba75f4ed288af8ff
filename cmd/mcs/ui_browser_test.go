package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcs-go/mcs/cmd/mcs/internal/browsertest"
	"github.com/mcs-go/mcs/cmd/mcs/internal/demo"
)

// browser starts a headless chromium; the returned context is its first tab.
func browser(tb testing.TB) context.Context { return browsertest.Start(tb) }

// urlWriter is the stdout of mcs ui: it hands over the URL it prints.
type urlWriter struct {
	once sync.Once
	url  chan string
	at   chan time.Time // when the URL was printed; nil: not wanted
}

var consoleURL = regexp.MustCompile(`http://\S+`)

func (w *urlWriter) Write(p []byte) (int, error) {
	if u := consoleURL.Find(p); u != nil {
		w.once.Do(func() {
			if w.at != nil {
				w.at <- time.Now()
			}
			w.url <- string(u)
		})
	}
	return len(p), nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startUI runs mcs ui on the embedded demo (with the demo's API key, so that
// its writes can run) and returns the printed URL and when it was printed.
func startUI(tb testing.TB, args ...string) (string, time.Time, *lockedBuffer) {
	tb.Helper()
	tb.Chdir(tb.TempDir())
	return startUIHere(tb, args...)
}

// startUIHere runs mcs ui in the current directory.
func startUIHere(tb testing.TB, args ...string) (string, time.Time, *lockedBuffer) {
	tb.Helper()
	tb.Setenv("MCS_TOKEN_PETS", demo.APIKey)
	ctx, cancel := context.WithCancel(context.Background())
	w := &urlWriter{url: make(chan string, 1), at: make(chan time.Time, 1)}
	stderr := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"ui", "--no-open"}, args...), strings.NewReader(""), w, stderr)
	}()
	tb.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			tb.Errorf("mcs ui exited %d:\n%s", code, stderr.String())
		}
	})
	select {
	case at := <-w.at:
		return <-w.url, at, stderr
	case code := <-done:
		done <- code
		tb.Fatalf("mcs ui exited %d before printing its URL:\n%s", code, stderr.String())
	}
	return "", time.Time{}, nil
}

// shot saves a screenshot of the tab as docs/console/NAME.png, with
// -update-screenshots.
func shot(t *testing.T, ctx context.Context, name string) { browsertest.Shot(t, ctx, name) }

// within bounds browser steps; the browser test must not hang.
func within(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	return browsertest.Within(ctx, steps...)
}

func text(ctx context.Context, sel string) string {
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	s, _ := chromedp.Run(c, chromedp.Text(chromedp.CSS(sel)))
	return s
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return browsertest.Eval[T](t, ctx, expr)
}

// TestUIInBrowser drives mcs ui on the demo in chromium: search a tool, fill
// its form and run it; run a write that waits for consent, allow it on the
// Approvals page and see it run once; a result that holds <script> is shown as
// text and never runs; paste a reply on Process.
func TestUIInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts chromium")
	}
	ctx := browser(t)
	url, _, stderr := startUI(t)
	base := url[:strings.Index(url, "/?")]
	fail := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v\nmcs ui stderr:\n%s", step, err, stderr.String())
		}
	}
	find := `details[data-name="pets__findPetsByStatus"]`
	fail("open the console and search", within(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS("#search")),
		chromedp.SendKeys(chromedp.CSS("#search"), "findPets"),
		chromedp.WaitVisible(chromedp.CSS(find+" form")),
	))
	if got := eval[string](t, ctx, "location.search"); got != "" {
		t.Errorf("the token stays in the URL: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("details.tool:not([hidden])").length`); n != 1 {
		t.Errorf("the search left %d tools, want 1", n)
	}
	fail("run findPetsByStatus", within(ctx,
		chromedp.SetValue(chromedp.CSS(find+` select[name="status"]`), "available"),
		chromedp.SendKeys(chromedp.CSS(find+` input[name="limit"]`), "5"),
		chromedp.Click(chromedp.CSS(find+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(find+" .outcome.kind-result")),
	))
	if got := text(ctx, find+" .outcome pre"); !strings.Contains(got, "Mimi") {
		t.Errorf("the result %q does not list Mimi", got)
	}
	shot(t, ctx, "tools")

	// A write: the permission middleware asks; the question waits on the
	// Approvals page of another tab.
	hostileName := `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`
	add := `details[data-name="pets__addPet"]`
	fail("run addPet", within(ctx,
		clearSearch,
		chromedp.SendKeys(chromedp.CSS("#search"), "addPet"),
		chromedp.WaitVisible(chromedp.CSS(add+" form")),
		chromedp.SetValue(chromedp.CSS(add+` input[name="name"]`), hostileName),
		chromedp.SetValue(chromedp.CSS(add+` input[name="species"]`), "cat"),
		chromedp.Click(chromedp.CSS(add+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(add+" .outcome.kind-running")),
	))
	tab2, cancel2 := chromedp.NewContext(ctx)
	defer cancel2()
	fail("open a second tab", chromedp.Do(tab2)) // opened without a deadline: it lives as long as tab2
	fail("allow it on the Approvals page", within(tab2,
		chromedp.Navigate(base+"/approvals"),
		chromedp.WaitVisible(chromedp.CSS("#questions .question button.approve")),
	))
	if got := eval[string](t, tab2, `document.querySelector("#questions .question pre").textContent`); !strings.Contains(got, "window.pwned") {
		t.Errorf("the question does not show the full arguments: %q", got)
	}
	shot(t, tab2, "approvals")
	eval[bool](t, tab2, `(() => { document.querySelector("#questions .question button.approve").click(); return true })()`)
	fail("see the write run", within(ctx, chromedp.WaitVisible(chromedp.CSS(add+" .outcome.kind-result"))))

	// The hostile name comes back in a result: shown as text, never run.
	fail("list the pets again", within(ctx,
		clearSearch,
		chromedp.SendKeys(chromedp.CSS("#search"), "findPets"),
		chromedp.Click(chromedp.CSS(find+` button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(find+" .outcome.kind-result")),
	))
	if got := text(ctx, find+" .outcome pre"); !strings.Contains(got, "<script>window.pwned=1</script>") {
		t.Errorf("the result %q does not show the script as text", got)
	}
	if pwned := eval[bool](t, ctx, `window.pwned !== undefined || document.querySelectorAll("main img, .outcome script").length > 0`); pwned {
		t.Fatal("markup from a tool result ran or was inserted as elements")
	}

	// It ran once: one successful addPet in the audit of this process.
	fail("open the audit", within(tab2,
		chromedp.Navigate(base+"/audit"),
		chromedp.WaitVisible(chromedp.CSS("#audit tr")),
	))
	count := `Array.from(document.querySelectorAll("#audit tr")).filter(r => r.cells[2].textContent === "pets__addPet" && r.cells[3].textContent === "ok").length`
	if _, err := chromedp.Run(tab2, chromedp.Poll[bool](count+" >= 1", chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("no addPet in the audit: %v", err)
	}
	if n := eval[int](t, tab2, count); n != 1 {
		t.Errorf("addPet ran %d times, want once", n)
	}
	shot(t, tab2, "audit")

	// Process a pasted reply.
	fail("process a reply", within(ctx,
		chromedp.Navigate(base+"/process"),
		chromedp.SetValue(chromedp.CSS(`textarea[name="reply"]`), `I will look. {"tool": "shelter__list_csv_files", "arguments": {}} and {"tool": "nope", "arguments": {}}`),
		chromedp.Click(chromedp.CSS(`#process button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#process-out tbody tr")),
	))
	rows := text(ctx, "#process-out tbody")
	for _, want := range []string{"shelter__list_csv_files", "yes", "nope", "no tool of the stack"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the calls found %q lack %q", rows, want)
		}
	}
	if got := text(ctx, "#process-out .response"); !strings.Contains(got, `"call_executed": true`) {
		t.Errorf("the Response %q is not shown", got)
	}
	shot(t, ctx, "process")

	for _, p := range []string{"prompt", "auth", "chat"} {
		fail("open "+p, within(ctx, chromedp.Navigate(base+"/"+p), chromedp.WaitVisible(chromedp.CSS("main h1"))))
		// The chat's screenshot is TestUIChatInBrowser's, with a model; the
		// Auth page's is TestAuthInBrowser's (cmd/mcs/internal/console), with
		// a driver that signs in.
		if p == "prompt" {
			shot(t, ctx, p)
		}
	}
	if got := text(ctx, "main"); !strings.Contains(got, "No model is configured") {
		t.Errorf("the chat page without a model says %q", got)
	}
	fail("open prompt for a model", within(ctx, chromedp.Navigate(base+"/prompt?model=gpt-4o"), chromedp.WaitVisible(chromedp.CSS("#b-tools"))))
	if got := text(ctx, "#b-tools"); got != "10" {
		t.Errorf("the budget counts %q tools, want 10", got)
	}
}

// BenchmarkUIFirstPage measures the first page of a fresh tab on the printed
// URL (token exchange, redirect, page, script), on the demo: ns/op until the
// search box can be used, and the browser's own navigation timing as
// ttfb-ms (the redirect and the first byte of the page) and dcl-ms
// (DOMContentLoaded, the deferred script run).
func BenchmarkUIFirstPage(b *testing.B) {
	ctx := browser(b)
	url, _, _ := startUI(b)
	var ttfb, dcl float64
	n := 0
	for b.Loop() {
		b.StopTimer()
		tab, cancel := chromedp.NewContext(ctx)
		if err := chromedp.Do(tab); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := within(tab, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#search"))); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		timing := browsertest.Eval[[]float64](b, tab, `(() => { const n = performance.getEntriesByType("navigation")[0]; return [n.responseStart, n.domContentLoadedEventEnd] })()`)
		ttfb += timing[0]
		dcl += timing[1]
		n++
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(ttfb/float64(n), "ttfb-ms")
	b.ReportMetric(dcl/float64(n), "dcl-ms")
}

// BenchmarkUIRun measures a Run round trip over loopback for a demo tool:
// the request the Tools page sends, through the whole stack, and its answer.
func BenchmarkUIRun(b *testing.B) {
	url, _, _ := startUI(b)
	base := url[:strings.Index(url, "/?")]
	jar := newJar()
	c := &http.Client{Jar: jar}
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	var page bytes.Buffer
	_, _ = page.ReadFrom(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`).FindSubmatch(page.Bytes())
	if m == nil {
		b.Fatal("no CSRF token on the page")
	}
	body := `{"tool": "shelter__list_csv_files", "fields": {}}`
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/run", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", base)
		req.Header.Set("X-CSRF-Token", string(m[1]))
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		_, _ = out.ReadFrom(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(out.Bytes(), []byte(`"kind":"result"`)) {
			b.Fatal(errors.New(out.String()))
		}
	}
}

func newJar() http.CookieJar {
	j, _ := cookiejar.New(nil)
	return j
}

// clearSearch empties the search box, as a person selecting its text and
// deleting it does.
var clearSearch = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := chromedp.Evaluate[bool](`(() => { const s = document.querySelector("#search"); s.value = ""; s.dispatchEvent(new Event("input")); return true })()`)(ctx, t)
	return err
})
