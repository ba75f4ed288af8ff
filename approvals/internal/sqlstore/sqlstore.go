// Package sqlstore holds what the SQL stores of package approvals share: the
// columns of their table, the query of a [approvals.Filter] and the reading of
// its rows.
package sqlstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcs-go/mcs/approvals"
)

// Columns are the columns of the table mcs_approvals, in the order the stores
// select and scan them.
const Columns = `id, label, tool, arguments, fingerprint, created, expires, state, decided, approve, decided_by, decided_reason, decided_at, details`

// EventColumns are the columns of the table mcs_approval_events (the journal
// of decisions), in the order the stores select and scan them.
const EventColumns = `seq, id, label, tool, approve, decided_by, decided_reason, decided_at`

// Where returns the WHERE clause (empty or starting with a space) and its
// arguments for f, which must be valid; ph renders the i-th placeholder (from 1)
// and nowArg is the current time as the database keeps it.
func Where(f approvals.Filter, ph func(int) string, nowArg any) (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return ph(len(args))
	}
	switch f.State {
	case approvals.Pending, approvals.Approved:
		conds = append(conds, "state = "+arg(string(f.State))+" AND expires > "+arg(nowArg))
	case approvals.Expired:
		n := arg(nowArg)
		conds = append(conds, "((state IN ('pending', 'approved') AND expires <= "+n+") OR state = 'expired')")
	case approvals.Denied, approvals.Used:
		conds = append(conds, "state = "+arg(string(f.State)))
	}
	if f.Label != "" {
		conds = append(conds, "label = "+arg(f.Label))
	}
	if f.Tool != "" {
		conds = append(conds, "tool = "+arg(f.Tool))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListQuery returns the query of List for f, which must be valid, newest first,
// and its arguments; ph and nowArg are as for [Where].
func ListQuery(f approvals.Filter, ph func(int) string, nowArg any) (string, []any) {
	where, args := Where(f, ph, nowArg)
	query := `SELECT ` + Columns + ` FROM mcs_approvals` + where + ` ORDER BY created DESC, id DESC`
	if f.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return query, args
}

// Rows is what both database drivers' result sets offer.
type Rows interface {
	Next() bool
	Err() error
}

// Collect reads every row of rows with scan and returns the requests they hold,
// as they read at now. wrap wraps a database error; an unreadable row is the
// error of [approvals.Row.Request]. The caller closes rows.
func Collect[R Rows](rows R, scan func(R) (approvals.Row, error), now time.Time, wrap func(error) error) ([]approvals.Request, error) {
	var out []approvals.Request
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return nil, wrap(err)
		}
		r, err := rec.Request(now)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	return out, nil
}
