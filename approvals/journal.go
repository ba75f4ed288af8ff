package approvals

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Event is one decision as a store's journal keeps it, for audit trails: the
// request it decided and the [Decision].
type Event struct {
	// Seq is the event's place in the journal: positive, increasing in the
	// order the decisions were committed, never reused.
	Seq int64
	// ID, Label and Tool are those of the request decided.
	ID    string
	Label string
	Tool  string
	// Decision is the decision, as [Store.Decide] recorded it.
	Decision Decision
}

// Journal is implemented by a [Store] whose Decide writes every decision to a
// journal in the same transaction as the decision itself, so that a decision
// and its audit record commit together or not at all. Audit trails read the
// journal with [Deliver]. Every store of this module (memory, SQLite,
// PostgreSQL) implements it; its methods are safe for concurrent use, also
// between processes sharing one database.
type Journal interface {
	// Events returns at most limit (> 0) events whose Seq is greater than
	// after, in Seq order. An event is listed only once its decision has
	// committed, and never after an event with a greater Seq: a reader that has
	// seen Seq n has seen every event up to n.
	Events(ctx context.Context, after int64, limit int) ([]Event, error)
	// Delivered returns the Seq up to which the audit trail named sink holds
	// the journal, 0 when it holds none of it.
	Delivered(ctx context.Context, sink string) (int64, error)
	// SetDelivered records that sink holds the journal up to seq. It never
	// moves a sink back: a seq below the one recorded changes nothing.
	SetDelivered(ctx context.Context, sink string, seq int64) error
}

// ErrNoJournal is wrapped by the error of [Deliver] for a store that does not
// implement [Journal].
var ErrNoJournal = errors.New("the approval store keeps no journal of decisions (it does not implement approvals.Journal)")

// deliverBatch is how many events Deliver hands to write at a time.
const deliverBatch = 256

// Deliver hands the decisions that the audit trail named sink (an audit file's
// path, say) does not hold yet to write, oldest first, in batches, and after
// each batch that write accepted (returned nil, having made the records
// durable) records them as delivered ([Journal.SetDelivered]). It returns the
// number of events delivered.
//
// Delivery is at least once: a process that stops between write and
// SetDelivered, or two processes delivering to one sink at the same moment,
// can write an event twice; its Seq tells the copies apart. Nothing is skipped:
// when write fails, the events stay undelivered and the next Deliver hands them
// over again, and the error is returned, wrapped. A store that does not
// implement [Journal] fails with [ErrNoJournal].
func Deliver(ctx context.Context, s Store, sink string, write func(context.Context, []Event) error) (int, error) {
	j, ok := s.(Journal)
	if !ok {
		return 0, fmt.Errorf("approvals: deliver decisions to %s: %w", sink, ErrNoJournal)
	}
	if strings.TrimSpace(sink) == "" {
		return 0, errors.New("approvals: deliver decisions: empty sink name (name the audit trail, such as its file's path)")
	}
	after, err := j.Delivered(ctx, sink)
	if err != nil {
		return 0, fmt.Errorf("approvals: deliver decisions to %s: %w", sink, err)
	}
	n := 0
	for {
		evs, err := j.Events(ctx, after, deliverBatch)
		if err != nil {
			return n, fmt.Errorf("approvals: deliver decisions to %s: %w", sink, err)
		}
		if len(evs) == 0 {
			return n, nil
		}
		if err := write(ctx, evs); err != nil {
			return n, fmt.Errorf("approvals: deliver decisions to %s: write: %w", sink, err)
		}
		after = evs[len(evs)-1].Seq
		if err := j.SetDelivered(ctx, sink, after); err != nil {
			return n, fmt.Errorf("approvals: deliver decisions to %s: %w", sink, err)
		}
		n += len(evs)
		if len(evs) < deliverBatch {
			return n, nil
		}
	}
}

// EventOf returns the event of a decided request r (Seq 0: not from a
// journal), for an audit trail that records a decision this process just made
// without reading a journal. It returns false when r has no decision.
func EventOf(r Request) (Event, bool) {
	if r.Decision == nil {
		return Event{}, false
	}
	return Event{ID: r.ID, Label: r.Label, Tool: r.Tool, Decision: *r.Decision}, true
}
