package stack

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs"
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
	switch c.auditLog {
	case "":
		return hooks.New(), nil
	case "-":
		w := b.Host().Stderr
		if w == nil {
			w = os.Stderr
		}
		logger := slog.New(slog.NewTextHandler(w, nil)).With("audit", "mcs")
		return hooks.New(hooks.WithSet(hooks.SlogAudit(logger, c.opts...))), nil
	}
	f, err := hooks.OpenAuditFile(c.auditLog, c.opts...)
	if err != nil {
		return nil, err
	}
	b.OnClose(f.Close)
	return hooks.New(hooks.WithSet(f.Hooks())), nil
}
