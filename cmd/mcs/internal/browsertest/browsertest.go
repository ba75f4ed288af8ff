// Package browsertest starts the headless Chromium that the browser tests of
// mcs ui drive with chromedp. It is used by tests only.
package browsertest

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Path returns the Chromium to drive: $MCS_CHROMIUM, /usr/bin/chromium,
// /usr/bin/chromium-browser or chromium on PATH. It skips tb, saying how to
// install one, when there is none.
func Path(tb testing.TB) string {
	tb.Helper()
	for _, p := range []string{os.Getenv("MCS_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	tb.Skip("chromium is not installed (apt-get install chromium, or set MCS_CHROMIUM): the browser test of mcs ui cannot run")
	return ""
}

// Start starts a headless Chromium with a fresh profile, no network of its
// own (no QUIC, background networking, component updates or sync) and a
// 1280x900 window, and returns its first tab. The browser ends with tb.
func Start(tb testing.TB) context.Context {
	tb.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Path(tb)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, without a deadline
		tb.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Within runs browser steps with a deadline of 20 seconds, so that a test
// never hangs on a page.
func Within(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return chromedp.Do(c, steps...)
}

// Eval evaluates a JavaScript expression in the tab, within 20 seconds.
func Eval[T any](tb testing.TB, ctx context.Context, expr string) T {
	tb.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// updateScreenshots is the flag of the browser tests that take screenshots.
var updateScreenshots = flag.Bool("update-screenshots", false, "write a PNG screenshot of each page of mcs ui to docs/console/")

// repoRoot is the directory of go.mod above the test's working directory at
// start, before a test changes it; "" when there is none.
var repoRoot = func() string {
	d, err := os.Getwd()
	for err == nil {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return ""
}()

// Shot saves a screenshot of the tab as docs/console/NAME.png of the
// repository (the directory of go.mod above the test's), when the test runs
// with -update-screenshots; otherwise it does nothing.
func Shot(tb testing.TB, ctx context.Context, name string) {
	tb.Helper()
	if !*updateScreenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.Fatalf("screenshot %s: %v", name, err)
	}
	if repoRoot == "" {
		tb.Fatal("screenshot: no go.mod above the test's directory")
	}
	dir := filepath.Join(repoRoot, "docs", "console")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.Fatal(err)
	}
}
