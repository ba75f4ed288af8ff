package approvals

import "context"

type runKey struct{}

// ContextWithRun returns a copy of ctx that marks the call made with it as the
// run of the approved request id: a permission middleware with approvals (see
// middleware/permission's WithApprovals) then runs the call only when it claims
// an approval of that exact call, and fails the call otherwise; it never makes a
// new request for it. The runner's WithApprovals and a command that runs an
// approved request by id (such as "mcs approvals run") use it, so that running an
// approval that was used meanwhile does not queue the call again.
func ContextWithRun(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runKey{}, id)
}

// RunFromContext returns the request id ContextWithRun put in ctx, and whether
// there is one.
func RunFromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(runKey{}).(string)
	return id, ok
}

type claimKey struct{}

// A ClaimRecorder learns the id of the approval request that a call made with
// its context claimed, so that an audit trail around the call can record which
// approval let it run. RecordClaim may be called from any goroutine.
type ClaimRecorder interface {
	RecordClaim(id string)
}

// ContextWithClaimRecorder returns a copy of ctx that carries r: the middleware
// that claims an approval for the call (middleware/permission's WithApprovals)
// tells r the request's id with [RecordClaim] before the call runs. The hooks
// middleware installs one for its audit trails.
func ContextWithClaimRecorder(ctx context.Context, r ClaimRecorder) context.Context {
	return context.WithValue(ctx, claimKey{}, r)
}

// RecordClaim tells the [ClaimRecorder] of ctx, if there is one, that the call
// of ctx claimed the approval request id.
func RecordClaim(ctx context.Context, id string) {
	if r, ok := ctx.Value(claimKey{}).(ClaimRecorder); ok && r != nil {
		r.RecordClaim(id)
	}
}
