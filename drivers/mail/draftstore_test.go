package mail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-smtp"
	"github.com/google/go-cmp/cmp"
)

// dirDriver returns a driver over sm that keeps its drafts in dir.
func dirDriver(t *testing.T, sm *smtpFixture, dir string) *ToolDriver {
	t.Helper()
	return newTestDriver(t, nil, sm, func(c *Config) { c.DraftDir = dir })
}

var draftArgsHello = map[string]any{"to": []any{`"Doe, Jane" <jane@example.com>`}, "cc": []any{"bob@partner.org"}, "subject": "Minutes", "body": "Hello,\nthe minutes.\n"}

// names lists the files of dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestDraftDirRestart makes a draft with one driver, closes it, and sends the
// draft with a new driver on the same directory, as an approval run in another
// process does.
func TestDraftDirRestart(t *testing.T) {
	sm := startSMTP(t, nil)
	dir := filepath.Join(t.TempDir(), "drafts")
	first := dirDriver(t, sm, dir)
	created := call(t, first, "create_draft", draftArgsHello)
	id := created["draft_id"].(string)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("drafts directory: %v, %v; want mode 0700", st, err)
	}
	if diff := cmp.Diff([]string{id}, names(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if st, err := os.Stat(filepath.Join(dir, id)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("draft file: %v, %v; want mode 0600", st, err)
	}

	second := dirDriver(t, sm, dir)
	dr, ok := second.Draft(id)
	want := Draft{ID: id, From: "Alice <alice@example.com>", To: []string{`"Doe, Jane" <jane@example.com>`}, Cc: []string{"bob@partner.org"},
		Subject: "Minutes", Body: "Hello,\nthe minutes.\n", Attachments: []string{}}
	if diff := cmp.Diff(want, dr); !ok || diff != "" {
		t.Errorf("Draft(%s) in a new driver: %v (-want +got):\n%s", id, ok, diff)
	}
	if got := second.DescribeCall("send_draft", map[string]any{"draft_id": id})["draft"]; !cmp.Equal(got, want) {
		t.Errorf("DescribeCall shows %v", got)
	}
	sent := call(t, second, "send_draft", map[string]any{"draft_id": id})
	if sent["sent"] != true || len(sm.messages()) != 1 {
		t.Fatalf("send_draft = %v; %d messages", sent, len(sm.messages()))
	}
	if diff := cmp.Diff([]string{"jane@example.com", "bob@partner.org"}, sm.messages()[0].To); diff != "" {
		t.Errorf("recipients (-want +got):\n%s", diff)
	}
	if n := names(t, dir); len(n) != 0 {
		t.Errorf("files left after the send: %v", n)
	}
	// A third driver finds nothing to send.
	third := dirDriver(t, sm, dir)
	if res := call(t, third, "send_draft", map[string]any{"draft_id": id}); res["error"] != "no such draft" {
		t.Errorf("send of a sent draft in another driver = %v", res)
	}
	if len(sm.messages()) != 1 {
		t.Errorf("%d messages, want 1", len(sm.messages()))
	}
}

// TestDraftDirFailedSendKeepsDraft: a send the server refuses leaves the
// draft in place, and it is sent by the next call.
func TestDraftDirFailedSendKeepsDraft(t *testing.T) {
	sm := startSMTP(t, nil)
	var refuse atomic.Bool
	refuse.Store(true)
	sm.onData = func() error {
		if refuse.Load() {
			return &smtp.SMTPError{Code: 451, Message: "try later"}
		}
		return nil
	}
	dir := t.TempDir()
	d := dirDriver(t, sm, dir)
	id := call(t, d, "create_draft", draftArgsHello)["draft_id"].(string)
	if err := callErr(t, d, "send_draft", map[string]any{"draft_id": id}); !strings.Contains(err.Error(), "try later") {
		t.Errorf("error %v", err)
	}
	if diff := cmp.Diff([]string{id}, names(t, dir)); diff != "" {
		t.Errorf("files after the failed send (-want +got):\n%s", diff)
	}
	refuse.Store(false)
	if res := call(t, d, "send_draft", map[string]any{"draft_id": id}); res["sent"] != true {
		t.Errorf("second send = %v", res)
	}
	if len(sm.messages()) != 1 || len(names(t, dir)) != 0 {
		t.Errorf("%d messages, files %v", len(sm.messages()), names(t, dir))
	}
}

// TestDraftDirTampered: a draft file changed after create_draft wrote it is
// never sent, whatever was changed.
func TestDraftDirTampered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(string) string
		want   string
	}{
		{"recipient", func(s string) string { return strings.Replace(s, "jane@example.com", "eve@example.com", 1) }, "does not match its id"},
		{"body", func(s string) string { return strings.Replace(s, "the minutes", "forward the inbox", 1) }, "does not match its id"},
		{"bcc added", func(s string) string {
			return strings.Replace(s, `"subject"`, `"bcc": ["eve@example.com"], "subject"`, 1)
		}, "does not match its id"},
		{"unknown field", func(s string) string { return strings.Replace(s, `"subject"`, `"x_extra": 1, "subject"`, 1) }, "is not a draft"},
		{"not JSON", func(string) string { return "From: eve" }, "is not a draft"},
		{"empty", func(string) string { return "" }, "is not a draft"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sm := startSMTP(t, nil)
			dir := t.TempDir()
			d := dirDriver(t, sm, dir)
			id := call(t, d, "create_draft", draftArgsHello)["draft_id"].(string)
			file := filepath.Join(dir, id)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			changed := tc.change(string(b))
			if changed == string(b) {
				t.Fatal("the change changed nothing")
			}
			if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
				t.Fatal(err)
			}
			err = callErr(t, dirDriver(t, sm, dir), "send_draft", map[string]any{"draft_id": id})
			if !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errDamaged) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
			if n := len(sm.messages()); n != 0 {
				t.Fatalf("a tampered draft was sent (%d messages)", n)
			}
			if _, ok := d.Draft(id); ok {
				t.Error("Draft returned a tampered draft")
			}
			if got, _ := d.DescribeCall("send_draft", map[string]any{"draft_id": id})["draft"].(string); !strings.Contains(got, "cannot be read") {
				t.Errorf("DescribeCall shows %q", got)
			}
			// The file stays for the operator to look at, and discard removes it.
			if diff := cmp.Diff([]string{id}, names(t, dir)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			// Creating the draft again replaces the damaged file.
			call(t, d, "create_draft", draftArgsHello)
			if dr, ok := d.Draft(id); !ok || dr.Body != "Hello,\nthe minutes.\n" {
				t.Errorf("Draft after creating it again = %v, %v", dr, ok)
			}
			if res := call(t, d, "discard_draft", map[string]any{"draft_id": id}); res["discarded"] != true {
				t.Errorf("discard = %v", res)
			}
			if n := names(t, dir); len(n) != 0 {
				t.Errorf("files after discard: %v", n)
			}
		})
	}
}

// TestDraftDirTraversal: an id that is not exactly one the driver makes is
// refused before any file is named, so no id reaches outside the directory.
func TestDraftDirTraversal(t *testing.T) {
	sm := startSMTP(t, nil)
	base := t.TempDir()
	dir := filepath.Join(base, "drafts")
	d := dirDriver(t, sm, dir)
	id := call(t, d, "create_draft", draftArgsHello)["draft_id"].(string)
	// A valid draft outside the directory, under names a traversal would reach.
	b, err := os.ReadFile(filepath.Join(dir, id))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{id, "x"} {
		if err := os.WriteFile(filepath.Join(base, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, id), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"../" + id, "../x", "draft-../../x", "/etc/passwd", "", ".", "..", "link",
		id + ".sending", id + "/", "./" + id, strings.ToUpper(id), "draft-" + strings.Repeat("0", 31),
		"draft-" + strings.Repeat("0", 33), id[:len(id)-1] + "g", id + "\x00", "draft-" + strings.Repeat("0", 30) + "/x",
	} {
		for _, tool := range []string{"send_draft", "discard_draft"} {
			err := callErr(t, d, tool, map[string]any{"draft_id": bad})
			if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "is not a draft id") {
				t.Errorf("%s(%q): %v", tool, bad, err)
			}
		}
		if _, ok := d.Draft(bad); ok {
			t.Errorf("Draft(%q) found a draft", bad)
		}
	}
	if n := len(sm.messages()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
	for _, name := range []string{id, "x"} {
		if _, err := os.Stat(filepath.Join(base, name)); err != nil {
			t.Errorf("a file outside the directory was touched: %v", err)
		}
	}
}

// TestDraftDirConcurrentSend: two drivers on one directory send the same
// draft; it goes out once. While the first send is with the server, the second
// is refused as already being sent; afterwards there is nothing to send.
func TestDraftDirConcurrentSend(t *testing.T) {
	sm := startSMTP(t, nil)
	entered, gate := make(chan struct{}), make(chan struct{})
	sm.onData = func() error {
		entered <- struct{}{}
		<-gate
		return nil
	}
	dir := t.TempDir()
	a, b := dirDriver(t, sm, dir), dirDriver(t, sm, dir)
	id := call(t, a, "create_draft", draftArgsHello)["draft_id"].(string)
	done := make(chan map[string]any)
	go func() {
		res, err := a.ExecuteTool(context.Background(), "send_draft", map[string]any{"draft_id": id})
		if err != nil {
			t.Error(err)
		}
		m, _ := res.(map[string]any)
		done <- m
	}()
	<-entered // a holds the draft and is sending it
	if diff := cmp.Diff([]string{id + sendingSuffix}, names(t, dir)); diff != "" {
		t.Errorf("files while sending (-want +got):\n%s", diff)
	}
	err := callErr(t, b, "send_draft", map[string]any{"draft_id": id})
	if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "already being sent or was sent") {
		t.Errorf("concurrent send: %v", err)
	}
	if res := call(t, b, "discard_draft", map[string]any{"draft_id": id}); res["discarded"] != false || res["error"] != "the draft is being sent" {
		t.Errorf("discard while sending = %v", res)
	}
	close(gate)
	if res := <-done; res["sent"] != true {
		t.Errorf("first send = %v", res)
	}
	if res := call(t, b, "send_draft", map[string]any{"draft_id": id}); res["error"] != "no such draft" {
		t.Errorf("send after the send = %v", res)
	}
	if n := len(sm.messages()); n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
}

// TestDraftDirRace: many calls on two drivers race to send one draft; the
// server receives it once.
func TestDraftDirRace(t *testing.T) {
	sm := startSMTP(t, nil)
	dir := t.TempDir()
	drivers := []*ToolDriver{dirDriver(t, sm, dir), dirDriver(t, sm, dir)}
	id := call(t, drivers[0], "create_draft", draftArgsHello)["draft_id"].(string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			<-start
			res, err := drivers[i%2].ExecuteTool(context.Background(), "send_draft", map[string]any{"draft_id": id})
			if m, ok := res.(map[string]any); err == nil && ok && m["sent"] == true && m["note"] == nil {
				mu.Lock()
				sent++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if n := len(sm.messages()); n != 1 || sent != 1 {
		t.Errorf("%d messages, %d calls say they sent it; want 1 and 1", n, sent)
	}
}

// TestDraftDirDiscardAndLimit: discard_draft removes the file; MaxDrafts
// counts the files in the directory, across drivers.
func TestDraftDirDiscardAndLimit(t *testing.T) {
	sm := startSMTP(t, nil)
	dir := t.TempDir()
	a := dirDriver(t, sm, dir)
	id := call(t, a, "create_draft", draftArgsHello)["draft_id"].(string)
	if res := call(t, dirDriver(t, sm, dir), "discard_draft", map[string]any{"draft_id": id}); res["discarded"] != true {
		t.Errorf("discard = %v", res)
	}
	if n := names(t, dir); len(n) != 0 {
		t.Errorf("files after discard: %v", n)
	}
	if res := call(t, a, "discard_draft", map[string]any{"draft_id": id}); res["error"] != "no such draft" {
		t.Errorf("second discard = %v", res)
	}
	for i := range MaxDrafts {
		call(t, a, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": strings.Repeat("x", i+1)})
	}
	b := dirDriver(t, sm, dir)
	err := callErr(t, b, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "one more"})
	if !strings.Contains(err.Error(), "drafts are waiting") {
		t.Errorf("create beyond MaxDrafts: %v", err)
	}
	// The same content again is the same draft, not one more.
	call(t, b, "create_draft", map[string]any{"to": []any{"jane@example.com"}, "subject": "s", "body": "x"})
	if n := len(names(t, dir)); n != MaxDrafts {
		t.Errorf("%d files, want %d", n, MaxDrafts)
	}
}

// TestDraftDirNotADirectory: a DraftDir that names a file is refused when the
// driver is made.
func TestDraftDirNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewToolDriver(Config{SMTPAddr: "127.0.0.1:25", TLS: TLSNone, From: "a@example.com", AllowRecipients: []string{"*"}, DraftDir: file})
	if err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("NewToolDriver: %v", err)
	}
}
