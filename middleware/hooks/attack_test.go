package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/hooks"
	"github.com/mcs-go/mcs/orchestrator"
)

// auditOnce runs one call of name with args through a driver audited to a file
// and returns the decoded line. fail, when set, is the tool's error.
func auditOnce(t *testing.T, ctx context.Context, args map[string]any, fail error) map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := hooks.OpenAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	td := &fakeDriver{exec: func(context.Context, string, map[string]any) (any, error) {
		if fail != nil {
			return nil, fail
		}
		return "ok", nil
	}}
	d := mcs.NewBaseDriver(td, mcs.WithMiddleware(hooks.New(hooks.WithSet(a.Hooks()))))
	d.ExecuteTool(ctx, "write_file", args)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := decodeLines(t, data)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1: %s", len(lines), data)
	}
	return lines[0]
}

// TestAttackErrorEchoesSecret: an upstream error that echoes the request (the
// call's api_key, a bearer header) and floods the log with 100 KB is redacted and
// cut in the audit record, like every other value.
func TestAttackErrorEchoesSecret(t *testing.T) {
	const key = "sk-live-0123456789"
	const tok = "eyJhbGciOiJIUzI1NiJ9.payload.sig"
	upstream := errors.New("upstream 400: request {\"api_key\":\"" + key + "\"} with Authorization: Bearer " + tok + " " + strings.Repeat("A", 100_000))
	line := auditOnce(t, context.Background(), map[string]any{"api_key": key, "path": "a"}, upstream)
	msg, _ := line["error"].(string)
	for _, secret := range []string{key, tok} {
		if strings.Contains(msg, secret) {
			t.Errorf("error field carries the secret %q: %.300s", secret, msg)
		}
	}
	if len(msg) > hooks.DefaultMaxValueLen+40 || !strings.Contains(msg, "more bytes)") {
		t.Errorf("error field is %d bytes, not cut: %.300s", len(msg), msg)
	}
	if !strings.HasPrefix(msg, "upstream 400: ") {
		t.Errorf("error field lost its start: %.100s", msg)
	}
}

// TestAttackRedactionKeys: common names of secrets are redacted, in any spelling.
func TestAttackRedactionKeys(t *testing.T) {
	keys := []string{"pwd", "pass", "db_pass", "auth", "X-Auth-Token", "bearer", "access_key", "AWS_ACCESS_KEY_ID",
		"accessKey", "session_id", "sessionId", "jwt", "api.key", "apiKey", "password", "client_secret", "signature"}
	args := map[string]any{"path": "kept"}
	for _, k := range keys {
		args[k] = "value-of-" + k
	}
	line := auditOnce(t, context.Background(), args, nil)
	got, _ := line["args"].(map[string]any)
	want := map[string]any{"path": "kept"}
	for _, k := range keys {
		want[k] = hooks.Redacted
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

// TestAttackSecretsInsideValues: secrets that travel inside values and in
// name/value pair lists are redacted; the rest of the value is kept.
func TestAttackSecretsInsideValues(t *testing.T) {
	args := map[string]any{
		"command": "curl -H 'Authorization: Bearer abcdefgh12345678' https://api.example/x",
		"url":     "https://api.example/x?token=t0ps3cr3t&page=2",
		"env":     "API_KEY=k3yk3yk3y HOME=/root",
		"body":    `{"password":"hunter2hunter2","user":"bob"}`,
		"note":    "pass it on: Bearer zyxwvutsrq987654",
		"headers": []any{
			map[string]any{"name": "Authorization", "value": "Basic dXNlcjpwYXNz"},
			map[string]any{"name": "Accept", "value": "application/json"},
		},
		"pairs":  []any{[]any{"X-Api-Key", "k-123456789"}, []any{"Accept", "text/plain"}},
		"hdrmap": map[string]string{"Cookie": "sid=abcdef123456"},
	}
	line := auditOnce(t, context.Background(), args, nil)
	got, _ := line["args"].(map[string]any)
	b, _ := json.Marshal(got)
	for _, secret := range []string{"abcdefgh12345678", "t0ps3cr3t", "k3yk3yk3y", "hunter2hunter2", "zyxwvutsrq987654", "dXNlcjpwYXNz", "k-123456789", "abcdef123456"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("record carries %q: %s", secret, b)
		}
	}
	for _, kept := range []string{"https://api.example/x", "page=2", "HOME=/root", `\"user\":\"bob\"`, "application/json", "text/plain", "Accept", "Authorization: Bearer [REDACTED]"} {
		if !bytes.Contains(b, []byte(kept)) {
			t.Errorf("record lost %q: %s", kept, b)
		}
	}
}

// TestAuditRecordsCallInfo: the audit records name the driver, the orchestrator
// label and the provider's call id, in the file and in slog.
func TestAuditRecordsCallInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := hooks.OpenAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	audit := hooks.New(hooks.WithSet(a.Hooks()), hooks.WithSet(hooks.SlogAudit(slog.New(slog.NewJSONHandler(&logs, nil)))))
	o := orchestrator.New(orchestrator.Flat())
	if err := o.AddDriver("scratch", mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(audit))); err != nil {
		t.Fatal(err)
	}
	ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{CallID: "call_42"})
	if _, err := o.ExecuteTool(ctx, "read_file", map[string]any{"path": "a"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for name, raw := range map[string][]byte{"file": data, "slog": logs.Bytes()} {
		lines := decodeLines(t, raw)
		if len(lines) != 1 {
			t.Fatalf("%s: %d lines", name, len(lines))
		}
		got := map[string]any{"driver": lines[0]["driver"], "label": lines[0]["label"], "call_id": lines[0]["call_id"]}
		want := map[string]any{"driver": "fake", "label": "scratch", "call_id": "call_42"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
