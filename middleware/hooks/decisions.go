package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/mcs-go/mcs/approvals"
)

// Decisions of approval requests as the audit trails record them, beside the
// records of calls.
const (
	// DecisionApproved is an approval request a person approved.
	DecisionApproved = "approved"
	// DecisionDenied is an approval request a person denied.
	DecisionDenied = "denied"
)

// decisionLine is the JSON shape of the line of a decision in an AuditFile.
type decisionLine struct {
	Time       time.Time `json:"time"`
	Decision   string    `json:"decision"`
	ApprovalID string    `json:"approval_id"`
	Tool       string    `json:"tool"`
	Label      string    `json:"label,omitempty"`
	By         string    `json:"by,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Seq        int64     `json:"seq,omitempty"`
}

func decisionName(ev approvals.Event) string {
	if ev.Decision.Approve {
		return DecisionApproved
	}
	return DecisionDenied
}

// WriteDecisions appends one line per decision of an approval request to the
// file, in order, and syncs the file to stable storage before it returns nil;
// it is the write function [approvals.Deliver] takes. A decision's line has the
// fields time (when it was decided, RFC 3339), decision ([DecisionApproved] or
// [DecisionDenied]), approval_id, tool, label, by, reason (redacted and cut like
// arguments; label, by and reason are left out when empty) and seq (the
// event's place in the store's journal, which tells the copies of a decision
// delivered twice apart; left out when 0). Lines of decisions have "decision"
// where lines of calls have "outcome". The lines are written with one write, so
// they do not interleave with lines of calls. On an error nothing is reported
// as written, and the caller delivers the decisions again.
func (a *AuditFile) WriteDecisions(_ context.Context, evs []approvals.Event) error {
	var buf []byte
	for _, ev := range evs {
		b, err := json.Marshal(decisionLine{
			Time:       ev.Decision.At.UTC(),
			Decision:   decisionName(ev),
			ApprovalID: ev.ID,
			Tool:       ev.Tool,
			Label:      ev.Label,
			By:         a.cfg.redact.Text(ev.Decision.By, nil),
			Reason:     a.cfg.redact.Text(ev.Decision.Reason, nil),
			Seq:        ev.Seq,
		})
		if err != nil {
			return fmt.Errorf("hooks: encode the decision of approval %s: %w", ev.ID, err)
		}
		buf = append(append(buf, b...), '\n')
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("hooks: write decisions to audit file %q: %w", a.path, fs.ErrClosed)
	}
	if len(buf) == 0 {
		return nil
	}
	if _, err := a.f.Write(buf); err != nil {
		return fmt.Errorf("hooks: write decisions to audit file %q: %w", a.path, err)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("hooks: sync audit file %q: %w", a.path, err)
	}
	return nil
}

// SlogDecisions returns a function that logs one record per decision of an
// approval request to logger (nil means [slog.Default] at the time of the call),
// with the message "approval decision" and the attributes decision
// ([DecisionApproved] or [DecisionDenied]), approval_id, tool, label, by, reason
// (redacted and cut as [SlogAudit] does; label, by and reason left out when
// empty), decided_at and seq (left out when 0), at [slog.LevelInfo]. It has the
// shape of the write function [approvals.Deliver] takes, and always returns nil.
func SlogDecisions(logger *slog.Logger, opts ...AuditOption) func(context.Context, []approvals.Event) error {
	cfg := newAuditConfig(opts)
	return func(ctx context.Context, evs []approvals.Event) error {
		l := logger
		if l == nil {
			l = slog.Default()
		}
		for _, ev := range evs {
			attrs := []slog.Attr{
				slog.String("decision", decisionName(ev)),
				slog.String("approval_id", ev.ID),
				slog.String("tool", ev.Tool),
			}
			if ev.Label != "" {
				attrs = append(attrs, slog.String("label", ev.Label))
			}
			if by := cfg.redact.Text(ev.Decision.By, nil); by != "" {
				attrs = append(attrs, slog.String("by", by))
			}
			if reason := cfg.redact.Text(ev.Decision.Reason, nil); reason != "" {
				attrs = append(attrs, slog.String("reason", reason))
			}
			attrs = append(attrs, slog.Time("decided_at", ev.Decision.At.UTC()))
			if ev.Seq != 0 {
				attrs = append(attrs, slog.Int64("seq", ev.Seq))
			}
			l.LogAttrs(ctx, slog.LevelInfo, "approval decision", attrs...)
		}
		return nil
	}
}
