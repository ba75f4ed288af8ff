package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to lock the store
)

// queueStack is a stack file whose permission middleware makes every call but
// list_csv_files wait for approval in an SQLite store next to it.
const queueStack = `[[driver]]
label = "shelter"
type = "csv"
root = "data"

[[driver]]
label = "archive"
type = "csv"
root = "data"

[middleware.permission]
allow = ["*list_csv_files"]
ask = "queue"

[approvals]
store = "sqlite:approvals.db"
ttl = "1h"
`

// writeQueueStack writes queueStack and its data into a new directory and
// returns the stack file's path.
func writeQueueStack(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "pets.csv"), []byte("name,species\nRex,dog\nMimi,cat\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mcs.toml")
	if err := os.WriteFile(file, []byte(queueStack), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// pendingOf returns the approval id of the pending result a call printed on
// stdout, failing the test when there is none.
func pendingOf(t testing.TB, stdout string) string {
	t.Helper()
	var res struct {
		Pending bool   `json:"approval_pending"`
		ID      string `json:"id"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Pending || res.ID == "" {
		t.Fatalf("stdout is not a pending result (%v):\n%s", err, stdout)
	}
	return res.ID
}

// TestApprovalsCommands walks a call through the store with the approvals
// commands: it waits (exit 3), is listed and shown, cannot run or be decided
// twice, runs once when approved, and a denied call answers the denial.
func TestApprovalsCommands(t *testing.T) {
	file := writeQueueStack(t)
	mcs := func(args ...string) result {
		t.Helper()
		return mcsRun(t, "", append([]string{"--stack", file}, args...)...)
	}
	call := []string{"call", "shelter__describe_csv", "path=pets.csv"}

	r := mcs(call...)
	if r.code != exitPending {
		t.Fatalf("queued call: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitPending, r.stdout, r.stderr)
	}
	id := pendingOf(t, r.stdout)
	if want := "mcs: shelter__describe_csv waits for approval " + id + ": it did not run; approve it with mcs approvals approve " + id; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q; want it to contain %q", r.stderr, want)
	}
	if r := mcs(call...); r.code != exitPending || pendingOf(t, r.stdout) != id {
		t.Errorf("the same call while pending: exit %d, stdout %s; want the same id %s", r.code, r.stdout, id)
	}
	if r := mcs("call", "shelter__list_csv_files"); r.code != 0 {
		t.Errorf("allowed call: exit %d\n%s", r.code, r.stderr)
	}

	steps := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings
		stderr []string // substrings
	}{
		{name: "list", args: []string{"approvals", "list"}, stdout: []string{"ID", "STATE", id, "pending", "shelter__describe_csv", `{"path":"pets.csv"}`}},
		{name: "list other state", args: []string{"approvals", "list", "--state", "approved"}, stdout: []string{"no approved approval requests"}},
		{name: "list bad state", args: []string{"approvals", "list", "--state", "waiting"}, code: exitUsage,
			stderr: []string{`--state "waiting": unknown state; use pending, approved, denied, expired or used`}},
		{name: "show", args: []string{"approvals", "show", id}, stdout: []string{"state        pending", "tool         shelter__describe_csv", `"path": "pets.csv"`}},
		{name: "show unknown", args: []string{"approvals", "show", "nosuchid"}, code: exitUsage,
			stderr: []string{`mcs: no approval request has the id "nosuchid"; mcs approvals list shows the ids`}},
		{name: "approve unknown", args: []string{"approvals", "approve", "nosuchid"}, code: exitUsage,
			stderr: []string{`no approval request has the id "nosuchid"`}},
		{name: "run pending", args: []string{"approvals", "run", id}, code: exitFailed,
			stderr: []string{"approval request " + id + " is pending: approve it first (mcs approvals approve " + id + "), then run it"}},
		{name: "show without id", args: []string{"approvals", "show"}, code: exitUsage, stderr: []string{"usage: mcs approvals show ID"}},
		{name: "approve", args: []string{"approvals", "approve", id, "--reason", "checked", "--by", "alice"},
			stdout: []string{"approved " + id + `: shelter__describe_csv {"path":"pets.csv"}`}, stderr: []string{"mcs approvals run " + id}},
		{name: "approve twice", args: []string{"approvals", "approve", id}, code: exitFailed,
			stderr: []string{"cannot approve " + id + ": it was approved by alice at ", ": checked already, and a decision is final (state approved)"}},
		{name: "deny after approval", args: []string{"approvals", "deny", id}, code: exitFailed, stderr: []string{"cannot deny " + id}},
		{name: "show approved", args: []string{"approvals", "show", id, "--json"}, stdout: []string{`"state": "approved"`, `"by": "alice"`, `"reason": "checked"`}},
		{name: "run", args: []string{"approvals", "run", id}, stdout: []string{`"row_count": 2`}},
		{name: "run twice", args: []string{"approvals", "run", id}, code: exitFailed,
			stderr: []string{"approval request " + id + " was used: its call ran once already"}},
		{name: "list used", args: []string{"approvals", "list", "--state", "used"}, stdout: []string{id, "used"}},
	}
	for _, s := range steps {
		r := mcs(s.args...)
		if r.code != s.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.name, r.code, s.code, r.stdout, r.stderr)
		}
		for _, want := range s.stdout {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: stdout lacks %q:\n%s", s.name, want, r.stdout)
			}
		}
		for _, want := range s.stderr {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", s.name, want, r.stderr)
			}
		}
	}

	// Used: the same call waits for a new approval; denied, it answers the
	// denial.
	r = mcs(call...)
	if r.code != exitPending {
		t.Fatalf("call after the run: exit %d, want %d\n%s", r.code, exitPending, r.stderr)
	}
	second := pendingOf(t, r.stdout)
	if second == id {
		t.Errorf("call after the run answered the used request %s", id)
	}
	if r := mcs("approvals", "deny", second, "--reason", "not today"); r.code != 0 || !strings.Contains(r.stdout, "denied "+second) {
		t.Errorf("deny: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = mcs(call...)
	if r.code != exitFailed || !strings.Contains(r.stdout, "Reason: not today") || !strings.Contains(r.stderr, "shelter__describe_csv was denied") {
		t.Errorf("denied call: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := mcs("approvals", "run", second); r.code != exitFailed || !strings.Contains(r.stderr, "was denied by ") {
		t.Errorf("run denied: exit %d\n%s", r.code, r.stderr)
	}

	r = mcs("approvals", "list", "--json")
	var list []struct {
		ID, State string
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	want := []struct{ ID, State string }{{second, "denied"}, {id, "used"}}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("list --json (-want +got):\n%s", diff)
	}
}

// TestApprovalsWithoutStore: a stack without approvals, and a store that cannot
// be opened, are errors that say what to do.
func TestApprovalsWithoutStore(t *testing.T) {
	file := writeQueueStack(t)
	dir := filepath.Dir(file)
	plain := filepath.Join(dir, "plain.toml")
	if err := os.WriteFile(plain, []byte("[[driver]]\nlabel = \"shelter\"\ntype = \"csv\"\nroot = \"data\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mcsRun(t, "", "--stack", plain, "approvals", "list")
	if want := plain + ` has no approval store: add ask = "queue" to its [middleware.permission] table`; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("no store: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, want)
	}

	if err := os.Mkdir(filepath.Join(dir, "approvals.db"), 0o700); err != nil { // a directory is no database
		t.Fatal(err)
	}
	r = mcsRun(t, "", "--stack", file, "approvals", "list")
	if want := "mcs: open the approval store: stack " + file + ":15: [approvals] store: approvals: open sqlite " + filepath.Join(dir, "approvals.db") + ": the path is a directory"; r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("bad store: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitFailed, want)
	}
	r = mcsRun(t, "", "--stack", file, "call", "shelter__describe_csv", "path=pets.csv")
	if r.code != exitUsage || !strings.Contains(r.stderr, "the path is a directory") {
		t.Errorf("call with a bad store: exit %d, stderr %q", r.code, r.stderr)
	}

	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte(strings.Replace(queueStack, "sqlite:approvals.db", "mysql://db/approvals", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	r = mcsRun(t, "", "--stack", bad, "approvals", "list")
	if want := bad + `:16: [approvals], key "store": unknown store "mysql"`; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("bad URL: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
}

var idPattern = regexp.MustCompile(`\b[a-z2-7]{26}\b`)

// TestApprovalsOperatorStack: a stack file with only an [approvals] table
// naming another stack's store lists and decides its requests, but does not
// run them: its permission middleware could not use the approval.
func TestApprovalsOperatorStack(t *testing.T) {
	file := writeQueueStack(t)
	ops := filepath.Join(filepath.Dir(file), "ops.toml")
	if err := os.WriteFile(ops, []byte("[[driver]]\nlabel = \"shelter\"\ntype = \"csv\"\nroot = \"data\"\n[approvals]\nstore = \"sqlite:approvals.db\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mcsRun(t, "", "--stack", file, "call", "shelter__describe_csv", "path=pets.csv")
	id := pendingOf(t, r.stdout)
	if r := mcsRun(t, "", "--stack", ops, "approvals", "approve", id); r.code != 0 {
		t.Fatalf("approve with the operator's stack: exit %d\n%s", r.code, r.stderr)
	}
	r = mcsRun(t, "", "--stack", ops, "approvals", "run", id)
	if want := ops + ` does not queue calls (its [middleware.permission] has no ask = "queue"), so it cannot use the approval`; r.code != exitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("run with the operator's stack: exit %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, want)
	}
	if r := mcsRun(t, "", "--stack", file, "approvals", "run", id); r.code != 0 {
		t.Errorf("run with the queueing stack: exit %d\n%s", r.code, r.stderr)
	}
}

// TestApprovalsLocked: a store another process holds locked past the busy
// timeout fails the decision with exit 1 and says to try again; nothing is
// decided.
func TestApprovalsLocked(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the store's busy timeout; skipped with -short")
	}
	ctx := context.Background()
	file := writeQueueStack(t)
	id := pendingOf(t, mcsRun(t, "", "--stack", file, "call", "shelter__describe_csv", "path=pets.csv").stdout)

	db, err := sql.Open("sqlite", filepath.Join(filepath.Dir(file), "approvals.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	r := mcsRun(t, "", "--stack", file, "approvals", "approve", id)
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if r.code != exitFailed || !strings.Contains(r.stderr, "stayed locked") || !strings.Contains(r.stderr, "try again") {
		t.Errorf("approve under another process's lock: exit %d, stderr %q; want %d and a message to try again", r.code, r.stderr, exitFailed)
	}
	if r := mcsRun(t, "", "--stack", file, "approvals", "show", id); !strings.Contains(r.stdout, "pending") {
		t.Errorf("after the failed approval: %s; want the request still pending", r.stdout)
	}
}

// TestApprovalsAuditLog: with an audit log, the waiting call, the decision and
// the call that ran with the approval each have a line with the approval's id;
// a decision the audit log could not take is written by a later command.
func TestApprovalsAuditLog(t *testing.T) {
	file := writeQueueStack(t)
	dir := filepath.Dir(file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(data, "\n[middleware.hooks]\naudit_log = \"audit.jsonl\"\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	mcs := func(args ...string) result {
		t.Helper()
		return mcsRun(t, "", append([]string{"--stack", file}, args...)...)
	}
	call := []string{"call", "shelter__describe_csv", "path=pets.csv"}
	r := mcs(call...)
	if r.code != exitPending {
		t.Fatalf("queued call: exit %d\n%s", r.code, r.stderr)
	}
	id := pendingOf(t, r.stdout)

	// The audit log cannot be written (a directory stands in its place): the
	// decision is made and kept, with a warning.
	audit := filepath.Join(dir, "audit.jsonl")
	if err := os.Rename(audit, audit+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(audit, 0o700); err != nil {
		t.Fatal(err)
	}
	r = mcs("approvals", "approve", id, "--by", "alice", "--reason", "checked")
	if r.code != 0 || !strings.Contains(r.stderr, "the audit log does not have every decision yet") {
		t.Fatalf("approve with an unwritable audit log: exit %d, want 0 and a warning\n%s", r.code, r.stderr)
	}
	if err := os.Remove(audit); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(audit+".away", audit); err != nil {
		t.Fatal(err)
	}
	// The next approvals command writes it; the approved call then runs.
	if r := mcs("approvals", "list"); r.code != 0 || r.stderr != "" {
		t.Fatalf("list: exit %d\n%s", r.code, r.stderr)
	}
	if r := mcs(call...); r.code != 0 {
		t.Fatalf("approved call: exit %d\n%s", r.code, r.stderr)
	}
	if r := mcs("approvals", "list"); r.code != 0 { // nothing new to write
		t.Fatalf("list: exit %d\n%s", r.code, r.stderr)
	}

	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Outcome, Decision, By, Reason string
		ApprovalID                    string `json:"approval_id"`
	}
	var got []line
	for l := range strings.Lines(string(b)) {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		got = append(got, x)
	}
	want := []line{
		{Outcome: "pending", ApprovalID: id},
		{Decision: "approved", By: "alice", Reason: "checked", ApprovalID: id},
		{Outcome: "ok", ApprovalID: id},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}
