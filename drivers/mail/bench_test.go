package mail

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// BenchmarkSearchMessages searches a 10,000-message in-process mailbox over
// loopback (target: at most 100 ms per search).
func BenchmarkSearchMessages(b *testing.B) {
	im := startIMAP(b, nil, nil)
	for i := range 10_000 {
		from := "carol@example.com"
		if i%100 == 0 {
			from = "bob@partner.org"
		}
		im.add(b, "INBOX", fmt.Sprintf("From: %s\nTo: alice@example.com\nSubject: Report %d\nDate: Mon, 09 Mar 2026 10:00:00 +0000\n\nNumbers for week %d.\n", from, i, i))
	}
	d := newTestDriver(b, im, nil, nil)
	args := map[string]any{"from": "bob@partner.org", "subject": "Report", "limit": 20}
	call(b, d, "search_messages", args) // connect and select
	b.ReportAllocs()
	for b.Loop() {
		res, err := d.ExecuteTool(context.Background(), "search_messages", args)
		if err != nil {
			b.Fatal(err)
		}
		if n := res.(map[string]any)["total"]; n != 100 {
			b.Fatalf("found %v, want 100", n)
		}
	}
}

// BenchmarkFetchMessage reads a typical message (HTML alternative and an
// attachment) over loopback (target: at most 20 ms).
func BenchmarkFetchMessage(b *testing.B) {
	im := startIMAP(b, nil, nil)
	uid := im.add(b, "INBOX", strings.Replace(htmlMsg, "Two <b>for</b> one.", strings.Repeat("Two <b>for</b> one. ", 200), 1))
	d := newTestDriver(b, im, nil, nil)
	args := map[string]any{"uid": float64(uid)}
	call(b, d, "fetch_message", args)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.ExecuteTool(context.Background(), "fetch_message", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMIMEBombRefusal refuses a message of 5,000 parts (target: at most
// 100 ms and 16 MiB). heap-MiB/op is the memory allocated per refusal, the
// in-process server's share included.
func BenchmarkMIMEBombRefusal(b *testing.B) {
	im := startIMAP(b, nil, nil)
	uid := im.addBytes(b, "INBOX", mimeBomb(5000, 0), imap.FlagSeen)
	d := newTestDriver(b, im, nil, nil)
	args := map[string]any{"uid": float64(uid)}
	call(b, d, "list_folders", nil)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if _, err := d.ExecuteTool(context.Background(), "fetch_message", args); err == nil {
			b.Fatal("the bomb was not refused")
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "heap-MiB/op")
}
