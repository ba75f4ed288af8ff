package stack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/middleware/permission"
)

// DefaultApprovalsFile is the SQLite file, next to the stack file, that keeps
// the approval requests of a stack whose permission table has ask = "queue" and
// which has no [approvals] table.
const DefaultApprovalsFile = "mcs-approvals.db"

// ErrNoApprovals is returned by [Stack.ApprovalStore] for a stack that has no
// approval store: its file has neither an [approvals] table nor ask = "queue".
var ErrNoApprovals = errors.New(`the stack has no approval store; add ask = "queue" to [middleware.permission], or an [approvals] table with store = "sqlite:approvals.db"`)

// Approvals is the approval store of a stack: the [approvals] table, or its
// default when [middleware.permission] has ask = "queue" and the file has no such
// table.
type Approvals struct {
	// Store is the URL of the store, for [approvals.Open]: "sqlite:PATH" (PATH
	// absolute: a relative path in the file is resolved against the stack file's
	// directory), "postgres://..." or "memory:".
	Store string
	// TTL is how long a request waits for a decision, and an approval for its
	// run; 24 hours unless the table's ttl says otherwise.
	TTL time.Duration
	// Line is the line of the [approvals] table; 0 for the default.
	Line int
	// Queue says the stack's permission middleware queues the calls no rule
	// decides in the store (ask = "queue"). Without it the store is there for the
	// approvals commands only.
	Queue bool
}

// path returns the file of an SQLite store, "" for any other.
func (a *Approvals) path() string {
	scheme, rest, _ := strings.Cut(a.Store, ":")
	if !strings.EqualFold(scheme, "sqlite") {
		return ""
	}
	return strings.TrimPrefix(rest, "//")
}

// postgres reports whether the store is a PostgreSQL database.
func (a *Approvals) postgres() bool {
	scheme, _, _ := strings.Cut(a.Store, ":")
	return strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql")
}

// parseApprovals reads the [approvals] table:
//
//	[approvals]
//	store = "sqlite:approvals.db"   # relative to the stack file; "postgres://...", "memory:"
//	ttl = "24h"                     # how long a request waits (a Go duration)
//
// Without the table, a permission table with ask = "queue" gets the default
// store, sqlite:mcs-approvals.db next to the stack file. Nothing is opened.
func (s *Stack) parseApprovals(root *Table) {
	queue := false
	for _, mc := range s.mws {
		if q, ok := mc.(interface{ queues() bool }); ok && q.queues() {
			queue = true
		}
	}
	if !root.Has("approvals") {
		if queue {
			s.Approvals = &Approvals{
				Store: "sqlite:" + filepath.Join(root.Dir(), DefaultApprovalsFile),
				TTL:   permission.DefaultApprovalTTL,
				Queue: true,
			}
		}
		return
	}
	t := root.Sub("approvals", "[approvals]")
	a := &Approvals{Line: root.pos.line("approvals"), Queue: queue, TTL: permission.DefaultApprovalTTL}
	if store := t.String("store"); store != "" {
		u, err := storeURL(store, t.Dir())
		if err != nil {
			t.Errorf("store", "%v", err)
		}
		a.Store = u
	} else if !t.Has("store") {
		a.Store = "sqlite:" + filepath.Join(t.Dir(), DefaultApprovalsFile)
	} else {
		t.Errorf("store", `is empty; name the store, such as store = "sqlite:approvals.db", "postgres://host/db" or "memory:"`)
	}
	if v, ok := t.get("ttl"); ok {
		if d := t.Duration("ttl"); d > 0 {
			a.TTL = d
		} else if str, isString := v.(string); isString {
			if zero, err := time.ParseDuration(str); err == nil && zero == 0 {
				t.Errorf("ttl", `must be positive, such as ttl = "24h" (how long a request waits for a decision)`)
			}
		}
	}
	s.Approvals = a
}

// storeURL checks the store URL s of an [approvals] table and returns it with a
// relative SQLite path resolved against dir.
func storeURL(s, dir string) (string, error) {
	const want = `use "sqlite:PATH" (relative to the stack file), "postgres://host/db" or "memory:"`
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("%q is not a store URL; %s", s, want)
	}
	switch strings.ToLower(scheme) {
	case "memory":
		if rest != "" {
			return "", fmt.Errorf("%q: a memory store takes no path, write \"memory:\"", s)
		}
		return s, nil
	case "sqlite":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return "", fmt.Errorf("%q names no file; %s", s, want)
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		return "sqlite:" + path, nil
	case "postgres", "postgresql":
		if _, err := url.Parse(s); err != nil || !strings.HasPrefix(rest, "//") {
			return "", fmt.Errorf("%q is not a PostgreSQL URL; write it as postgres://user@host:5432/db (the password comes from PGPASSWORD or ~/.pgpass)", s)
		}
		return s, nil
	}
	return "", fmt.Errorf("unknown store %q; %s", scheme, want)
}

// ApprovalStore returns the stack's approval store, opening it with
// [approvals.Open] the first time: the store of its [approvals] table, or the
// default of ask = "queue" (see [Approvals]). The store built into the stack's
// permission middleware is the same one; [Stack.Close] closes it, after which
// ApprovalStore opens it again. A stack without approvals fails with
// [ErrNoApprovals]; a store that cannot be opened fails with an error naming the
// stack file and the store. Safe for concurrent use.
func (s *Stack) ApprovalStore(ctx context.Context) (approvals.Store, error) {
	if s.Approvals == nil {
		return nil, fmt.Errorf("stack %s: %w", s.File, ErrNoApprovals)
	}
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.store != nil {
		return s.store, nil
	}
	store, err := approvals.Open(ctx, s.Approvals.Store)
	if err != nil {
		if s.Approvals.Line == 0 {
			return nil, fmt.Errorf("stack %s: the approval store of ask = \"queue\" (%s, the default without an [approvals] table): %w", s.File, DefaultApprovalsFile, err)
		}
		return nil, fmt.Errorf("stack %s:%d: [approvals] store: %w", s.File, s.Approvals.Line, err)
	}
	s.store = store
	s.mu.Lock()
	s.closers = append(s.closers, s.closeStore)
	s.mu.Unlock()
	return store, nil
}

// closeStore closes the approval store and forgets it.
func (s *Stack) closeStore() error {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.store == nil {
		return nil
	}
	err := s.store.Close()
	s.store = nil
	return err
}

func (a *Approvals) effects(e Effect) []Effect {
	e.Table, e.Line = "[approvals]", a.Line
	if e.Line == 0 {
		e.Table = `[middleware.permission] (ask = "queue")`
	}
	switch {
	case a.path() != "":
		e.Kind, e.Path = EffectWrite, a.path()
		return []Effect{e}
	case a.postgres():
		// The PostgreSQL client sends the password of PGPASSWORD to the host the
		// URL names.
		e.Kind, e.Env = EffectCredential, []string{"PGPASSWORD"}
		return []Effect{e}
	}
	return nil
}
