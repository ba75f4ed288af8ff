package calls

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

// RunApproval runs the call of the approved request r once, through the whole
// stack td: under the name the stack publishes its tool as
// ([approvals.CallName]), with the request's arguments, in a context that
// names the approval to use ([approvals.ContextWithRun]), so that the stack's
// permission middleware claims it. It returns the name it called.
func RunApproval(ctx context.Context, td mcs.ToolDriver, r approvals.Request) (name string, res any, err error) {
	name = approvals.CallName(mcs.ContextWithHiddenTools(ctx), td, r)
	res, err = td.ExecuteTool(approvals.ContextWithRun(ctx, r.ID), name, r.Arguments)
	return name, res, err
}
