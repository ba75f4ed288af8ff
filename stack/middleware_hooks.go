package stack

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/middleware/hooks"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "hooks",
		Summary: "an audit log of every call (audit_log = FILE, or \"-\" for stderr; redact_keys; max_value_len)",
		Rank:    10,
		Decode:  decodeHooks,
	})
}

var _ MiddlewareConfig = (*hooksConfig)(nil)

type hooksConfig struct {
	auditLog string // "" no audit, "-" stderr, else a file path
	opts     []hooks.AuditOption
}

// decodeHooks reads [middleware.hooks]:
//
//	audit_log = "mcs-audit.jsonl"   # JSON Lines, relative to the stack file; "-": stderr
//	redact_keys = ["password", "token"]
//	max_value_len = 256
func decodeHooks(t *Table) MiddlewareConfig {
	c := &hooksConfig{}
	c.auditLog = t.String("audit_log")
	if c.auditLog != "" && c.auditLog != "-" && !filepath.IsAbs(c.auditLog) {
		c.auditLog = filepath.Join(t.Dir(), c.auditLog)
	}
	if t.Has("redact_keys") {
		c.opts = append(c.opts, hooks.WithRedactKeys(t.Strings("redact_keys")...))
	}
	if t.Has("max_value_len") {
		c.opts = append(c.opts, hooks.WithMaxValueLen(int(t.Int("max_value_len", 0, 1<<20))))
	}
	return c
}

func (c *hooksConfig) Middleware(_ context.Context, b *Builder) (mcs.ToolMiddleware, error) {
	var opts []hooks.Option
	switch c.auditLog {
	case "":
	case "-":
		w := b.Host().Stderr
		if w == nil {
			w = os.Stderr
		}
		logger := slog.New(slog.NewTextHandler(w, nil)).With("audit", "mcs")
		opts = append(opts, hooks.WithSet(hooks.SlogAudit(logger, c.opts...)))
	default:
		f, err := hooks.OpenAuditFile(c.auditLog, c.opts...)
		if err != nil {
			return nil, err
		}
		b.OnClose(f.Close)
		opts = append(opts, hooks.WithSet(f.Hooks()))
	}
	if l := b.Host().Audit; l != nil {
		opts = append(opts, hooks.WithSet(hooks.SlogAudit(l, c.opts...)))
	}
	return hooks.New(opts...), nil
}

// DecisionSink is the name under which [Stack.AuditDecisions] records, in an
// approval store's journal, how far the audit file at path holds the journal:
// the machine's host name and the file's absolute path, so that audit files of
// other directories or machines sharing one store (PostgreSQL) keep their own
// marks.
func DecisionSink(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	host, _ := os.Hostname()
	return "audit-file:" + host + ":" + path
}

// AuditDecisions records decisions of approval requests in the stack's audit log
// ([middleware.hooks] audit_log), beside the records of calls, and returns how
// many it wrote:
//
//   - an audit file receives, with [approvals.Deliver], every decision of the
//     store's journal it does not hold yet (under the sink [DecisionSink] of the
//     file's path): the decisions in just, and any that an earlier process
//     committed but did not get into the file (it stopped, the file was not
//     writable); the decision and its journal record commit together in the
//     store, so a decision is never missing from the file for good;
//   - audit_log = "-" logs the decisions in just to [Host].Stderr (a log of one
//     process, which holds no journal);
//   - a stack without an audit log writes nothing.
//
// just are requests this process decided. On an error (the file cannot be
// opened or written, the store fails) the decisions not written stay in the
// journal for the next call. Safe for concurrent use.
func (s *Stack) AuditDecisions(ctx context.Context, store approvals.Store, just ...approvals.Request) (int, error) {
	var c *hooksConfig
	for _, mc := range s.mws {
		if h, ok := mc.(*hooksConfig); ok && h.auditLog != "" {
			c = h
		}
	}
	switch {
	case c == nil:
		return 0, nil
	case c.auditLog == "-":
		var evs []approvals.Event
		for _, r := range just {
			if ev, ok := approvals.EventOf(r); ok {
				evs = append(evs, ev)
			}
		}
		w := s.Host.Stderr
		if w == nil {
			w = os.Stderr
		}
		logger := slog.New(slog.NewTextHandler(w, nil)).With("audit", "mcs")
		return len(evs), hooks.SlogDecisions(logger, c.opts...)(ctx, evs)
	}
	f, err := hooks.OpenAuditFile(c.auditLog, c.opts...)
	if err != nil {
		return 0, err
	}
	n, err := approvals.Deliver(ctx, store, DecisionSink(c.auditLog), f.WriteDecisions)
	return n, errors.Join(err, f.Close())
}
