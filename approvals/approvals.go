package approvals

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// exactly one receives a given request.
	Claim(ctx context.Context, fingerprint string) (Request, bool, error)
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

// Option configures a store.
type Option func(*options)

type options struct {
	now func() time.Time
}

func newOptions(opts []Option) options {
	o := options{now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// clock returns the store's time, in UTC, to the microsecond.
func (o options) clock() time.Time { return stamp(o.now()) }

// WithClock makes the store read the time from now instead of time.Now: for
// Created, a Decision's At and every expiry comparison. Tests use it to move
// time; processes sharing a database should keep their clocks in step, since
// each compares Expires with its own clock.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// stamp is t as stores keep it: UTC, to the microsecond, without monotonic
// reading.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns 128 random bits in lower-case base32.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	return idEncoding.EncodeToString(b[:])
}

// prepare checks r for Create and returns the request to store with its
// arguments encoded.
func prepare(r Request, now time.Time) (Request, []byte, error) {
	if r.Tool == "" {
		return Request{}, nil, errors.New("approvals: create: the request names no tool")
	}
	if r.Fingerprint == "" {
		return Request{}, nil, errors.New("approvals: create: the request has no fingerprint (compute it with Fingerprint)")
	}
	args, err := encodeArguments(r.Arguments)
	if err != nil {
		return Request{}, nil, fmt.Errorf("approvals: create: arguments of %s: %w", r.Tool, err)
	}
	r.ID = newID()
	r.State = Pending
	r.Decision = nil
	r.Created = stamp(r.Created)
	if r.Created.IsZero() {
		r.Created = now
	}
	r.Expires = stamp(r.Expires)
	if !r.Expires.After(r.Created) {
		return Request{}, nil, fmt.Errorf("approvals: create: the request expires (%s) before it was created (%s); set Expires to a later time", r.Expires.Format(time.RFC3339Nano), r.Created.Format(time.RFC3339Nano))
	}
	r.Arguments, err = decodeArguments(args)
	if err != nil {
		return Request{}, nil, fmt.Errorf("approvals: create: arguments of %s: %w", r.Tool, err)
	}
	return r, args, nil
}

func encodeArguments(args map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func decodeArguments(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	return args, nil
}

// record is a request as a database row holds it, before it is checked.
type record struct {
	id, label, tool, args, fingerprint string
	created, expires                   time.Time
	state                              string
	decided                            bool // the decision columns are set
	approve                            bool
	by, reason                         string
	at                                 time.Time
}

// request checks rec and returns the request it holds, its state as it reads at
// now. A record that cannot be read is an error wrapping ErrCorrupt that names
// the id.
func (rec record) request(now time.Time) (Request, error) {
	corrupt := func(format string, args ...any) (Request, error) {
		return Request{}, fmt.Errorf("approvals: request %q: %s: %w", rec.id, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	r := Request{
		ID:          rec.id,
		Label:       rec.label,
		Tool:        rec.tool,
		Fingerprint: rec.fingerprint,
		Created:     stamp(rec.created),
		Expires:     stamp(rec.expires),
		State:       State(rec.state),
	}
	args, err := decodeArguments([]byte(rec.args))
	if err != nil {
		return corrupt("arguments are not a JSON object (%v)", err)
	}
	r.Arguments = args
	if !knownState(r.State) {
		return corrupt("unknown state %q", rec.state)
	}
	if rec.decided {
		r.Decision = &Decision{Approve: rec.approve, By: rec.by, Reason: rec.reason, At: stamp(rec.at)}
	}
	switch r.State {
	case Approved, Used:
		if r.Decision == nil || !r.Decision.Approve {
			return corrupt("state %s without an approval", r.State)
		}
	case Denied:
		if r.Decision == nil || r.Decision.Approve {
			return corrupt("state %s without a denial", r.State)
		}
	case Pending:
		if r.Decision != nil {
			return corrupt("state %s with a decision", r.State)
		}
	}
	if (r.State == Pending || r.State == Approved) && !now.Before(r.Expires) {
		r.State = Expired
	}
	return r, nil
}

// undecided explains why a request that reads as r cannot be decided.
func undecided(r Request) error {
	switch r.State {
	case Expired:
		return fmt.Errorf("approvals: decide %q: %w", r.ID, ErrExpired)
	default:
		return fmt.Errorf("approvals: decide %q (%s): %w", r.ID, r.State, ErrDecided)
	}
}

// checkFilter rejects a Filter no store can apply.
func checkFilter(f Filter) error {
	if f.State != "" && !knownState(f.State) {
		return fmt.Errorf("approvals: list: unknown state %q (want one of pending, approved, denied, expired, used)", f.State)
	}
	if f.Limit < 0 {
		return fmt.Errorf("approvals: list: negative limit %d", f.Limit)
	}
	return nil
}

// Open opens the store a URL names:
//
//   - "sqlite:PATH" (also "sqlite://PATH"): [OpenSQLite] on PATH, relative to
//     the working directory unless absolute;
//   - "postgres://..." or "postgresql://...": [OpenPostgres] with the URL as DSN;
//   - "memory:": [NewMemoryStore].
//
// Anything else is an error that lists these forms.
func Open(ctx context.Context, url string, opts ...Option) (Store, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	if ok {
		switch strings.ToLower(scheme) {
		case "memory":
			if rest != "" {
				break
			}
			return NewMemoryStore(opts...), nil
		case "sqlite":
			path := strings.TrimPrefix(rest, "//")
			if path == "" {
				return nil, fmt.Errorf("approvals: store URL %q names no file (want sqlite:PATH)", url)
			}
			return OpenSQLite(path, opts...)
		case "postgres", "postgresql":
			if strings.HasPrefix(rest, "//") {
				return OpenPostgres(ctx, url, opts...)
			}
		}
	}
	return nil, fmt.Errorf("approvals: unsupported store URL %q: want sqlite:PATH, postgres://... (or postgresql://...), or memory:", redactURL(url))
}

// redactURL hides a password in a URL that is echoed in an error.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok || strings.Contains(userinfo, "/") {
		return u
	}
	if user, _, ok := strings.Cut(userinfo, ":"); ok {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return u
}
