package approvals

import (
	"context"
	"errors"
	"time"
)

// State is where a [Request] is in its life.
type State string

// The states of a request. A request starts [Pending]; [Store.Decide] moves it to
// [Approved] or [Denied] once; [Store.Claim] moves an approved request to [Used]
// once. A pending or approved request whose Expires time has passed reads as
// [Expired]; denied and used are final and never expire.
const (
	Pending  State = "pending"
	Approved State = "approved"
	Denied   State = "denied"
	Expired  State = "expired"
	Used     State = "used"
)

// knownState reports whether s is one of the five states.
func knownState(s State) bool {
	switch s {
	case Pending, Approved, Denied, Expired, Used:
		return true
	}
	return false
}

// Request is one call that waits for a person's decision.
type Request struct {
	// ID identifies the request; the store assigns it, 128 random bits in
	// lower-case base32 (26 characters), so that it cannot be guessed.
	ID string
	// Label is the label of the driver the call was made on (CallInfo.Label).
	Label string
	// Tool is the name of the tool called.
	Tool string
	// Arguments are the call's arguments as the model wrote them. A store keeps
	// them as JSON, so they come back decoded from JSON, numbers as json.Number.
	Arguments map[string]any
	// Details is what the person deciding sees beside the arguments, from the
	// driver: the arguments alone may not show what the call does (send_draft
	// {draft_id} of a mail driver: Details holds the whole draft). It is for
	// display only: the Fingerprint does not cover it. A store keeps it as JSON,
	// so it comes back decoded from JSON; nil when there are none. See
	// middleware/permission's WithDescriber.
	Details map[string]any
	// Fingerprint binds the request to one exact call; see [Fingerprint].
	Fingerprint string
	// Created is when the request was made; Expires is when it stops being
	// decidable (pending) or claimable (approved). Stores keep both to the
	// microsecond, in UTC.
	Created, Expires time.Time
	// State is the request's state at the time it was read.
	State State
	// Decision is the decision made, nil while none was.
	Decision *Decision
}

// Decision is a person's answer to a [Request].
type Decision struct {
	// Approve is true for an approval, false for a denial.
	Approve bool
	// By names who decided (free text: a user name, "console").
	By string
	// Reason is an optional explanation, shown to operators and, for a denial,
	// available to the model.
	Reason string
	// At is when the decision was made; [Store.Decide] sets it to the store's
	// clock when zero.
	At time.Time
}

// Filter selects requests for [Store.List]. The zero Filter selects every
// request.
type Filter struct {
	// State, when set, keeps the requests in that state as they read now (so
	// Expired also finds pending and approved requests past their Expires time).
	State State
	// Label and Tool, when set, keep the requests with exactly that label or tool.
	Label string
	Tool  string
	// Limit, when positive, keeps at most that many requests (the newest).
	Limit int
}

// Store keeps approval requests durably (except the memory store) and moves them
// through their states. Every method is safe for concurrent use, and the
// transitions are atomic also between processes sharing one database: a request
// is decided at most once and claimed at most once.
type Store interface {
	// Create stores a new pending request and returns it as stored. It assigns
	// ID, sets State to Pending and Decision to nil whatever r holds, and sets
	// Created to the store's clock when zero. Tool and Fingerprint must be set and
	// Expires must be after Created; Arguments must encode as JSON.
	Create(ctx context.Context, r Request) (Request, error)
	// Get returns the request with that id, or an error wrapping [ErrNotFound].
	Get(ctx context.Context, id string) (Request, error)
	// List returns the requests f selects, newest (by Created) first.
	List(ctx context.Context, f Filter) ([]Request, error)
	// Decide records d on the pending request id, moving it to Approved or
	// Denied, and returns the request as decided. Deciding is possible once: an
	// unknown id fails with [ErrNotFound], a request decided before (approved,
	// denied or used) with [ErrDecided], a request past its Expires time with
	// [ErrExpired].
	Decide(ctx context.Context, id string, d Decision) (Request, error)
	// Claim moves the newest approved, unexpired request with that fingerprint
	// to Used and returns it with true; when there is none it returns false and
	// no error. Of any number of concurrent claims, also from other processes,
	// exactly one receives a given request. A claim that loses such a race may
	// report none even when an older approval with the same fingerprint remains
	// (PostgreSQL); the next claim finds it.
	Claim(ctx context.Context, fingerprint string) (Request, bool, error)
	// ClaimID moves the request id to Used when it is approved, unexpired and of
	// that fingerprint, and returns it with true; otherwise (an unknown id
	// included) it returns false and no error. It is the claim of a run of one
	// chosen request ([ContextWithRun]), which must not use up another approval
	// of the same call. Of any number of concurrent claims, also from other
	// processes, exactly one receives the request.
	ClaimID(ctx context.Context, id, fingerprint string) (Request, bool, error)
	// Close releases the store's database connections; the store must not be
	// used afterwards. Closing the memory store forgets nothing (it keeps its
	// requests for as long as it is referenced) and always succeeds.
	Close() error
}

// The errors a store's methods wrap, for errors.Is.
var (
	// ErrNotFound: no request has the id.
	ErrNotFound = errors.New("no approval request has this id (list the requests to find the right one)")
	// ErrDecided: the request was decided before; a decision is final.
	ErrDecided = errors.New("the approval request was already decided, and a decision is final (the same call again makes a new request once this one is used)")
	// ErrExpired: the request's Expires time passed before it was decided.
	ErrExpired = errors.New("the approval request expired before it was decided (the same call again makes a new request to decide)")
	// ErrCorrupt: a stored request cannot be read (arguments that are not JSON,
	// an unknown state, a decision that contradicts the state).
	ErrCorrupt = errors.New("the stored approval request is corrupt (repair or delete its row)")
)
