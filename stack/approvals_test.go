package stack

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

const csvStack = "[[driver]]\nlabel = \"t\"\ntype = \"csv\"\nroot = \"data\"\n"

// TestParseApprovals reads the [approvals] table and the default of ask =
// "queue" without it.
func TestParseApprovals(t *testing.T) {
	dir := filepath.Join("/srv", "agents")
	file := filepath.Join(dir, "mcs.toml")
	tests := []struct {
		name string
		file string
		want *Approvals
	}{
		{name: "none", file: csvStack, want: nil},
		{name: "ask = true has none", file: csvStack + "[middleware.permission]\nask = true\n", want: nil},
		{name: "queue without a table", file: csvStack + "[middleware.permission]\nask = \"queue\"\n",
			want: &Approvals{Store: "sqlite:" + filepath.Join(dir, DefaultApprovalsFile), TTL: 24 * time.Hour, Queue: true}},
		{name: "relative sqlite", file: csvStack + "[middleware.permission]\nask = \"queue\"\n[approvals]\nstore = \"sqlite:state/a.db\"\nttl = \"1h30m\"\n",
			want: &Approvals{Store: "sqlite:" + filepath.Join(dir, "state", "a.db"), TTL: 90 * time.Minute, Line: 7, Queue: true}},
		{name: "absolute sqlite", file: csvStack + "[approvals]\nstore = \"sqlite:///var/lib/a.db\"\n",
			want: &Approvals{Store: "sqlite:/var/lib/a.db", TTL: 24 * time.Hour, Line: 5}},
		{name: "table without store", file: csvStack + "[approvals]\nttl = \"2h\"\n",
			want: &Approvals{Store: "sqlite:" + filepath.Join(dir, DefaultApprovalsFile), TTL: 2 * time.Hour, Line: 5}},
		{name: "postgres", file: csvStack + "[middleware.permission]\nask = \"queue\"\n[approvals]\nstore = \"postgres://mcs@db.internal:5432/approvals\"\n",
			want: &Approvals{Store: "postgres://mcs@db.internal:5432/approvals", TTL: 24 * time.Hour, Line: 7, Queue: true}},
		{name: "memory", file: csvStack + "[approvals]\nstore = \"memory:\"\n",
			want: &Approvals{Store: "memory:", TTL: 24 * time.Hour, Line: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(file, []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, s.Approvals); diff != "" {
				t.Errorf("Approvals (-want +got):\n%s", diff)
			}
			if s.Approvals != nil && s.Approvals.Queue && s.AsksConsent() {
				t.Error("AsksConsent() = true; a queue asks nobody")
			}
		})
	}
}

// TestParseApprovalsErrors: each problem names the file, the line and the key,
// and says what to write.
func TestParseApprovalsErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{name: "ask neither bool nor queue", file: csvStack + "[middleware.permission]\nask = \"later\"\n",
			want: []string{`s.toml:6: [middleware.permission], key "ask": "later" is not a way to ask; use ask = true (ask on the terminal), ask = "queue" (wait for an approval) or ask = false`}},
		{name: "ask a number", file: csvStack + "[middleware.permission]\nask = 1\n",
			want: []string{`s.toml:6: [middleware.permission], key "ask": must be true, false or "queue" (got an integer)`}},
		{name: "unknown scheme", file: csvStack + "[approvals]\nstore = \"redis://localhost\"\n",
			want: []string{`s.toml:6: [approvals], key "store": unknown store "redis"; use "sqlite:PATH" (relative to the stack file), "postgres://host/db" or "memory:"`}},
		{name: "no scheme", file: csvStack + "[approvals]\nstore = \"approvals.db\"\n",
			want: []string{`s.toml:6: [approvals], key "store": "approvals.db" is not a store URL; use "sqlite:PATH" (relative to the stack file), "postgres://host/db" or "memory:"`}},
		{name: "sqlite without a file", file: csvStack + "[approvals]\nstore = \"sqlite:\"\n",
			want: []string{`s.toml:6: [approvals], key "store": "sqlite:" names no file; use "sqlite:PATH" (relative to the stack file), "postgres://host/db" or "memory:"`}},
		{name: "empty store", file: csvStack + "[approvals]\nstore = \"\"\n",
			want: []string{`s.toml:6: [approvals], key "store": is empty; name the store, such as store = "sqlite:approvals.db", "postgres://host/db" or "memory:"`}},
		{name: "postgres not a URL", file: csvStack + "[approvals]\nstore = \"postgres:host=db\"\n",
			want: []string{`s.toml:6: [approvals], key "store": "postgres:host=db" is not a PostgreSQL URL; write it as postgres://user@host:5432/db (the password comes from PGPASSWORD or ~/.pgpass)`}},
		{name: "bad ttl", file: csvStack + "[approvals]\nttl = \"a day\"\n",
			want: []string{`s.toml:6: [approvals], key "ttl": "a day" is not a duration; write one such as "30s" or "2m"`}},
		{name: "zero ttl", file: csvStack + "[approvals]\nttl = \"0s\"\n",
			want: []string{`s.toml:6: [approvals], key "ttl": must be positive, such as ttl = "24h" (how long a request waits for a decision)`}},
		{name: "unknown key", file: csvStack + "[approvals]\nstor = \"memory:\"\n",
			want: []string{`s.toml:6: [approvals], key "stor": unknown key; did you mean "store"? the keys here are store, ttl`}},
		{name: "not a table", file: "approvals = \"memory:\"\n" + csvStack,
			want: []string{`s.toml:1: key "approvals": must be a table (got a string)`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.toml", []byte(tc.file))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if diff := cmp.Diff(tc.want, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseApprovalsPassword: a password in the store URL is refused like any
// secret in the file, with advice for PostgreSQL.
func TestParseApprovalsPassword(t *testing.T) {
	_, err := Parse("s.toml", []byte(csvStack+"[approvals]\nstore = \"postgres://mcs:hunter2hunter2@db/approvals\"\n"))
	got := problems(t, err)
	want := []string{`s.toml:6: [approvals], key "store": the URL carries a password; secrets never go in the stack file: remove the value and put the password in the environment variable PGPASSWORD (or in ~/.pgpass), where the PostgreSQL client reads it`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestBuildQueue builds a stack with ask = "queue": a call no rule decides
// waits in the stack's store, the store the stack exposes is the same, an
// approval decided there lets the same call run once, and Close closes it.
func TestBuildQueue(t *testing.T) {
	ctx := context.Background()
	path := writeFixture(t, csvStack+"[middleware.permission]\nallow = [\"list_csv_files\"]\nask = \"queue\"\n[approvals]\nstore = \"sqlite:approvals.db\"\nttl = \"1h\"\n")
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Effects(), []Effect{{Kind: EffectWrite, Table: "[approvals]", Line: 8, Path: filepath.Join(filepath.Dir(path), "approvals.db")}}; !cmp.Equal(want, got) {
		t.Errorf("Effects() = %v; want %v", got, want)
	}
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	td := d.(mcs.ToolDriver)
	if res, err := td.ExecuteTool(ctx, "list_csv_files", nil); err != nil || mcs.CodeOf(res, nil) != mcs.CodeOK {
		t.Errorf("allowed call: %v, %v", res, err)
	}
	args := map[string]any{"path": "a.csv"}
	res, err := td.ExecuteTool(ctx, "describe_csv", args)
	sig, ok := res.(mcs.Signal)
	if err != nil || !ok || sig.Kind != mcs.CodePending {
		t.Fatalf("queued call: %#v, %v; want a pending signal", res, err)
	}
	id, _ := sig.Data["id"].(string)
	store, err := s.ApprovalStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.Get(ctx, id)
	if err != nil {
		t.Fatalf("the request is not in the stack's store: %v", err)
	}
	if got := r.Expires.Sub(r.Created); got != time.Hour {
		t.Errorf("the request waits %v; want the ttl of 1h", got)
	}
	if _, err := store.Decide(ctx, id, approvals.Decision{Approve: true, By: "test"}); err != nil {
		t.Fatal(err)
	}
	if res, err := td.ExecuteTool(ctx, "describe_csv", args); err != nil || mcs.CodeOf(res, nil) != mcs.CodeOK {
		t.Errorf("approved call: %v, %v; want it run", res, err)
	}
	res, _ = td.ExecuteTool(ctx, "describe_csv", args)
	if again, _ := res.(mcs.Signal); again.Kind != mcs.CodePending || again.Data["id"] == id {
		t.Errorf("third call: %#v; want a new pending request", res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.List(ctx, approvals.Filter{}); err == nil {
		t.Error("the store still answers after Close")
	}
}

// TestApprovalStoreErrors: a stack without approvals, and a store that cannot be
// opened, fail with errors that say so.
func TestApprovalStoreErrors(t *testing.T) {
	ctx := context.Background()
	s, err := Parse("s.toml", []byte(csvStack))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApprovalStore(ctx); !errors.Is(err, ErrNoApprovals) {
		t.Errorf("ApprovalStore without approvals: %v; want ErrNoApprovals", err)
	}
	dir := t.TempDir() // a directory is no database file
	s, err = Parse(filepath.Join(dir, "s.toml"), []byte(csvStack+"[middleware.permission]\nask = \"queue\"\n[approvals]\nstore = \"sqlite:.\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Build(ctx)
	if err == nil {
		t.Fatal("Build with a directory as the store succeeded")
	}
	want := "stack " + filepath.Join(dir, "s.toml") + ":7: [approvals] store: approvals: open sqlite " + dir + ": the path is a directory"
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("Build: %v\nwant it to start %q", err, want)
	}
}

// TestDecisionSink: an audit file's mark in a shared store is its absolute
// path on this host, however the path was written.
func TestDecisionSink(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs := filepath.Join(dir, "audit.jsonl")
	if DecisionSink("audit.jsonl") != DecisionSink(abs) {
		t.Errorf("a relative and an absolute path of one file give two sinks: %q, %q", DecisionSink("audit.jsonl"), DecisionSink(abs))
	}
	if other := DecisionSink(filepath.Join(t.TempDir(), "audit.jsonl")); other == DecisionSink(abs) {
		t.Errorf("two directories' audit files share the sink %q", other)
	}
}
