package main

import (
	"encoding/json"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// smtpSink is an SMTP server on loopback that counts the messages it accepts.
type smtpSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *smtpSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.msgs)
}

type sinkSession struct{ s *smtpSink }

func (sinkSession) Reset()                               {}
func (sinkSession) Logout() error                        { return nil }
func (sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (x sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	x.s.msgs = append(x.s.msgs, string(b))
	x.s.mu.Unlock()
	return nil
}

// startSMTPSink serves SMTP on a loopback port and returns its address.
func startSMTPSink(t *testing.T) (*smtpSink, string) {
	t.Helper()
	sink := &smtpSink{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return sinkSession{sink}, nil }))
	srv.Domain = "localhost"
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return sink, ln.Addr().String()
}

// TestMailApprovalAcrossRuns drafts a message in one run of mcs and sends it,
// queued for approval, in later runs: each run builds its own mail driver, so
// the draft reaches the sending run only through the drafts directory next to
// the stack file, and it is sent once.
func TestMailApprovalAcrossRuns(t *testing.T) {
	sink, addr := startSMTPSink(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "mcs.toml")
	stack := `[[driver]]
label = "mail"
type = "mail"
smtp = "` + addr + `"
tls = "none"
from = "Alice <alice@example.com>"
allow_recipients = ["*@example.com"]

[[driver]]
label = "shelter"
type = "csv"
root = "."

[middleware.permission]
allow = ["*create_draft", "*discard_draft"]
ask = "queue"

[approvals]
store = "sqlite:approvals.db"
ttl = "1h"
`
	if err := os.WriteFile(file, []byte(stack), 0o600); err != nil {
		t.Fatal(err)
	}
	mcs := func(args ...string) result {
		t.Helper()
		return mcsRun(t, "", append([]string{"--stack", file}, args...)...)
	}

	r := mcs("call", "mail__create_draft", "--args", `{"to": ["bob@example.com"], "subject": "Minutes", "body": "Here they are."}`)
	if r.code != 0 {
		t.Fatalf("create_draft: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var created struct {
		ID string `json:"draft_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &created); err != nil || created.ID == "" {
		t.Fatalf("create_draft printed no draft id (%v):\n%s", err, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcs-drafts", created.ID)); err != nil {
		t.Fatalf("the draft is not in mcs-drafts next to the stack file: %v", err)
	}

	r = mcs("call", "mail__send_draft", "draft_id="+created.ID)
	if r.code != exitPending {
		t.Fatalf("send_draft: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitPending, r.stdout, r.stderr)
	}
	id := pendingOf(t, r.stdout)
	if sink.count() != 0 {
		t.Fatal("a queued send_draft sent mail")
	}
	if r := mcs("approvals", "approve", id, "--reason", "read the draft"); r.code != 0 {
		t.Fatalf("approve: exit %d\n%s", r.code, r.stderr)
	}
	r = mcs("approvals", "run", id)
	if r.code != 0 || !strings.Contains(r.stdout, `"sent": true`) || !strings.Contains(r.stdout, `"message_id"`) {
		t.Fatalf("approvals run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := sink.count(); n != 1 {
		t.Fatalf("%d messages sent, want 1", n)
	}
	if !strings.Contains(sink.msgs[0], "Here they are.") {
		t.Errorf("the message sent is not the draft:\n%s", sink.msgs[0])
	}
	if r := mcs("approvals", "run", id); r.code != exitFailed {
		t.Errorf("second run: exit %d, want %d", r.code, exitFailed)
	}
	if es, err := os.ReadDir(filepath.Join(dir, "mcs-drafts")); err != nil || len(es) != 0 {
		t.Errorf("drafts left after the send: %v, %v", es, err)
	}
	if n := sink.count(); n != 1 {
		t.Errorf("%d messages sent, want 1", n)
	}
}
