package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/middleware/hooks"
)

var decidedAt = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

func decisionEvents() []approvals.Event {
	return []approvals.Event{
		{Seq: 7, ID: "id1", Label: "files", Tool: "delete_file", Decision: approvals.Decision{Approve: true, By: "alice", At: decidedAt}},
		{Seq: 8, ID: "id2", Tool: "send_mail", Decision: approvals.Decision{By: "bob", Reason: "the token=s3cr3t leaked", At: decidedAt}},
	}
}

// TestAuditFileWriteDecisions: one line per decision, the reason redacted,
// after the lines of calls; a closed file is an error.
func TestAuditFileWriteDecisions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := hooks.OpenAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteDecisions(context.Background(), decisionEvents()); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteDecisions(context.Background(), nil); err != nil {
		t.Fatalf("WriteDecisions of none: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteDecisions(context.Background(), decisionEvents()); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("WriteDecisions after Close = %v; want fs.ErrClosed", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for l := range strings.Lines(string(data)) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, m)
	}
	want := []map[string]any{
		{"time": "2026-12-04T10:00:00Z", "decision": "approved", "approval_id": "id1", "tool": "delete_file", "label": "files", "by": "alice", "seq": 7.0},
		{"time": "2026-12-04T10:00:00Z", "decision": "denied", "approval_id": "id2", "tool": "send_mail", "by": "bob", "reason": "the token=[REDACTED] leaked", "seq": 8.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision lines (-want +got):\n%s", diff)
	}
}

// TestSlogDecisions: one record per decision, the reason redacted.
func TestSlogDecisions(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	if err := hooks.SlogDecisions(logger)(context.Background(), decisionEvents()); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for l := range strings.Lines(buf.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "time")
		got = append(got, m)
	}
	want := []map[string]any{
		{"level": "INFO", "msg": "approval decision", "decision": "approved", "approval_id": "id1", "tool": "delete_file", "label": "files", "by": "alice", "decided_at": "2026-12-04T10:00:00Z", "seq": 7.0},
		{"level": "INFO", "msg": "approval decision", "decision": "denied", "approval_id": "id2", "tool": "send_mail", "by": "bob", "reason": "the token=[REDACTED] leaked", "decided_at": "2026-12-04T10:00:00Z", "seq": 8.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

// The decisions of an approval store reach an audit file from the store's
// journal, each once, however often they are delivered.
func ExampleAuditFile_WriteDecisions() {
	ctx := context.Background()
	store := approvals.NewMemoryStore()
	r, err := store.Create(ctx, approvals.Request{Tool: "delete_file", Arguments: map[string]any{"path": "a.txt"}, Fingerprint: "fp", Expires: time.Now().Add(time.Hour)})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Decide(ctx, r.ID, approvals.Decision{Approve: true, By: "alice", Reason: "checked"}); err != nil {
		log.Fatal(err)
	}

	path := filepath.Join(os.TempDir(), "mcs-example-decisions.jsonl")
	defer os.Remove(path)
	audit, err := hooks.OpenAuditFile(path)
	if err != nil {
		log.Fatal(err)
	}
	defer audit.Close()
	for range 2 {
		n, err := approvals.Deliver(ctx, store, path, audit.WriteDecisions)
		fmt.Println("delivered:", n, err)
	}
	// Output:
	// delivered: 1 <nil>
	// delivered: 0 <nil>
}
