package permission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

// DefaultApprovalTTL is how long a request made by [WithApprovals] waits for a
// decision, and an approval for its run, when the ttl given is not positive.
const DefaultApprovalTTL = 24 * time.Hour

// WithApprovals makes the calls that no rule decides wait for a person's
// decision in store instead of asking the consent handler: the call does not
// run, a pending [approvals.Request] is stored, and the model reads the in-band
// result [Pending], whose JSON is
//
//	{"approval_pending": true, "id": "<id>", "message": "...", "tool": "<name>"}
//
// and whose message tells the model to tell the user that the call waits for
// approval, with the id, and not to call it again until it is approved. A person
// then decides with [approvals.Store.Decide] (from another process or machine,
// when the store is a database).
//
// The request binds to the exact call: its Fingerprint ([approvals.Fingerprint])
// covers the label of the driver ([mcs.CallInfo].Label), the tool's definition
// ([mcs.CallInfo].Tool) and the canonical arguments; Arguments are the
// arguments as the model wrote them. For a call no rule decides, in this order:
//
//   - an approved, unexpired request of the same fingerprint is claimed
//     ([approvals.Store.Claim], approved to used, atomically) and the call runs,
//     once: of any number of identical calls, in this process or others sharing
//     the store, exactly one claims a given approval;
//   - else, when a request of the same fingerprint is pending, the call answers
//     [Pending] with its id again (no new request);
//   - else, when one was denied and its Expires time has not passed, the call
//     answers the denial result ([mcs.CodeDenied], with the decision's reason and
//     "id" in the JSON): a denial holds for the exact call until then;
//   - else (no request, or one that was used or expired, or a denial past its
//     Expires time) a new pending request is made, which expires ttl from now
//     (ttl <= 0 means [DefaultApprovalTTL]).
//
// A call with different arguments, on a driver under another label, or of a
// tool whose definition changed has another fingerprint and never matches.
//
// Precedence: the rules decide first, so a call an Allow or Deny rule matches
// never touches the store; approvals come second and replace asking: the consent
// handler (the [ConsentFunc] given to [New] or set with SetConsentHandler) is
// not called while approvals are configured. The call's context may mark it as
// the run of an approved request ([approvals.ContextWithRun]): then the call runs
// only when it claims that very request ([approvals.Store.ClaimID]: approved,
// unexpired, of the same fingerprint), fails with a
// *[ConsentError] of reason [ReasonNotApproved] otherwise, and never makes a new
// request.
//
// The middleware fails closed: when the store fails (a database that is down or
// locked, a corrupt row), the call does not run and fails with a *[ConsentError]
// of reason [ReasonApprovalStore] that wraps the store's error. The results are
// in-band [mcs.Signal]s, so the hooks audit records a waiting call with the
// outcome "pending" and a denied one with "denied", each with the request's id
// (its "approval_id"); a call that claimed an approval tells the id to the
// context's [approvals.ClaimRecorder] before it runs, so the audit record of
// the call that ran has it too. Decisions themselves are journaled by the store
// with the decision ([approvals.Journal]) and reach audit files through
// [approvals.Deliver].
//
// Identical calls in one Middleware are serialised while they look up and make
// requests, so that they answer the same id; identical calls in several
// processes at the same instant may each make a request.
//
// A nil store leaves approvals off. The Middleware does not close the store.
func WithApprovals(store approvals.Store, ttl time.Duration) Option {
	return func(c *config) {
		if ttl <= 0 {
			ttl = DefaultApprovalTTL
		}
		c.store, c.ttl = store, ttl
	}
}

// PendingMessage is the message of the in-band result of a call that waits for
// approval id.
func PendingMessage(name, id string) string {
	return "The call to '" + name + "' did not run: it waits for a person's approval, under the approval id " + id +
		". Tell the user that it waits for approval and give them the id. Do not call it again until the user says it was approved."
}

// Pending returns the in-band result of a call of name that waits for the
// approval of request id: an [mcs.Signal] of kind [mcs.CodePending] whose JSON,
// the text the model reads, is
// {"approval_pending": true, "id": id, "message": PendingMessage(name, id), "tool": name}.
func Pending(name, id string) mcs.Signal {
	return mcs.Signal{Kind: mcs.CodePending, Tool: name, Message: PendingMessage(name, id), Data: map[string]any{"id": id}}
}

// ApprovalDeniedMessage is the message of the in-band result of a call whose
// approval request was denied, with the decision's reason when there is one.
func ApprovalDeniedMessage(name, reason string) string {
	msg := "A person denied execution of '" + name + "'."
	if reason = strings.TrimSpace(reason); reason != "" {
		msg += " Reason: " + reason
	}
	return msg
}

// approvalDenied is the denial result of a call whose request r was denied.
func approvalDenied(name string, r approvals.Request) mcs.Signal {
	reason := ""
	if r.Decision != nil {
		reason = r.Decision.Reason
	}
	return mcs.Signal{Kind: mcs.CodeDenied, Tool: name, Message: ApprovalDeniedMessage(name, reason), Data: map[string]any{"id": r.ID}}
}

// approvalLocks is the number of stripes that serialise identical calls.
const approvalLocks = 16

// queue settles a call no rule decided, with approvals configured.
func (m *Middleware) queue(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	info, _ := mcs.CallInfoFromContext(ctx)
	def := info.Tool
	if !strings.EqualFold(def.Name, name) {
		// A middleware before this one renamed the call, or no definition is known:
		// bind to the name called.
		def = mcs.Tool{Name: name}
	}
	fp := approvals.Fingerprint(info.Label, def, args)
	storeErr := func(op string, err error) error {
		return &ConsentError{Tool: name, Reason: ReasonApprovalStore, Err: fmt.Errorf("%s: %w", op, err)}
	}
	if id, ok := approvals.RunFromContext(ctx); ok {
		_, claimed, err := m.store.ClaimID(ctx, id, fp)
		if err != nil {
			return nil, storeErr("claim approval "+id, err)
		}
		if !claimed {
			return nil, &ConsentError{Tool: name, Reason: ReasonNotApproved, Err: fmt.Errorf("approval %s: %w", id, errNothingToClaim)}
		}
		approvals.RecordClaim(ctx, id)
		return next(ctx, name, args)
	}

	mu := &m.locks[int(fp[len(fp)-1])%approvalLocks]
	mu.Lock()
	result, claimed, err := m.settle(ctx, name, args, info.Label, fp)
	mu.Unlock()
	if err != nil {
		return nil, storeErr(err.op, err.err)
	}
	if claimed != "" {
		approvals.RecordClaim(ctx, claimed)
		return next(ctx, name, args)
	}
	return result, nil
}

// errNothingToClaim is wrapped by the error of a run of an approved request that
// found no approval to claim.
var errNothingToClaim = errors.New("no approval of this exact call to claim: it was used or expired, it is not approved, or the call or the tool's definition differs from the one approved")

type opError struct {
	op  string
	err error
}

// settle decides a call: run it (claimed is the id of the approval it claimed),
// or answer result.
func (m *Middleware) settle(ctx context.Context, name string, args map[string]any, label, fp string) (result any, claimed string, _ *opError) {
	if r, ok, err := m.store.Claim(ctx, fp); err != nil {
		return nil, "", &opError{"claim an approval", err}
	} else if ok {
		return nil, r.ID, nil
	}
	reqs, err := m.store.List(ctx, approvals.Filter{Label: label, Tool: name})
	if err != nil {
		return nil, "", &opError{"look up the call's request", err}
	}
	now := m.now()
	// A pending request of the call answers it; else a live denial does. (Requests
	// made in the same instant may list in any order, so the newest alone cannot
	// decide; a denial is the conservative answer.)
	var denied *approvals.Request
	for i, r := range reqs {
		if r.Fingerprint != fp {
			continue
		}
		switch r.State {
		case approvals.Pending:
			return Pending(name, r.ID), "", nil
		case approvals.Approved:
			// Approved after the claim above failed: claim it now.
			if c, ok, err := m.store.Claim(ctx, fp); err != nil {
				return nil, "", &opError{"claim an approval", err}
			} else if ok {
				return nil, c.ID, nil
			}
		case approvals.Denied:
			if denied == nil && now.Before(r.Expires) {
				denied = &reqs[i]
			}
		}
	}
	if denied != nil {
		return approvalDenied(name, *denied), "", nil
	}
	r, err := m.store.Create(ctx, approvals.Request{
		Label: label, Tool: name, Arguments: args, Details: m.details(ctx, name, args), Fingerprint: fp,
		Created: now, Expires: now.Add(m.ttl),
	})
	if err != nil {
		return nil, "", &opError{"store the approval request", err}
	}
	return Pending(name, r.ID), "", nil
}

// now is the middleware's clock.
func (m *Middleware) now() time.Time {
	if m.clock != nil {
		return m.clock()
	}
	return time.Now()
}
