// Package sqlstore holds what the SQL stores of package approvals share: the
// columns of their table and the WHERE clause of a [approvals.Filter].
package sqlstore

import (
	"strings"

	"github.com/mcs-go/mcs/approvals"
)

// Columns are the columns of the table mcs_approvals, in the order the stores
// select and scan them.
const Columns = `id, label, tool, arguments, fingerprint, created, expires, state, decided, approve, decided_by, decided_reason, decided_at`

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
