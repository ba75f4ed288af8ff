package approvals

// This file is the kit for store implementations, in the spirit of
// database/sql/driver: what a [Store] needs to behave as the stores of this
// module do (the same ids, the same checks, the same errors, the same reading
// of a stored request). Programs that only use a store need none of it.

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Option configures a store.
type Option func(*options)

type options struct {
	now  func() time.Time
	busy time.Duration
}

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

// Config is a store's configuration as its [Option]s set it. It is for store
// implementations, which read it with [Configure].
type Config struct {
	// Clock is the store's clock ([WithClock]); never nil.
	Clock func() time.Time
	// BusyTimeout is how long a statement waits for a lock another connection
	// holds before it fails; zero means the store's own default. No exported
	// option sets it (the tests of this module do, to fail fast).
	BusyTimeout time.Duration
}

// Configure applies opts, in order, and returns the configuration they make.
// It is for store implementations: an Open function calls it on its options.
func Configure(opts ...Option) Config {
	o := options{now: time.Now}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return Config{Clock: o.now, BusyTimeout: o.busy}
}

// Now returns the store's time as stores keep it: c.Clock's reading, [Stamp]ed.
func (c Config) Now() time.Time { return Stamp(c.Clock()) }

// Stamp returns t as stores keep times: in UTC, to the microsecond, without a
// monotonic reading; the zero time stays zero. It is for store implementations,
// which stamp a Decision's At before keeping it.
func Stamp(t time.Time) time.Time {
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

// Row is a request as a store keeps it: flat, its arguments as JSON text, not
// yet checked. It is for store implementations, which keep a Row's fields (in
// columns, say) and turn what they read back into a [Request] with
// [Row.Request]. The zero time is "not set"; [Row.Request] [Stamp]s the times,
// so a store may read them back in any location.
type Row struct {
	ID, Label, Tool string
	// Arguments is the JSON object of the call's arguments, as encoded.
	Arguments string
	// Details is the JSON object of the request's Details, "" when it has none.
	Details     string
	Fingerprint string
	Created     time.Time
	Expires     time.Time
	// State is the state as stored: pending, approved, denied or used (a store
	// never stores expired; a request reads as expired by its Expires time).
	State string
	// Decided is true when the decision fields (Approve, By, Reason, At) hold a
	// decision.
	Decided    bool
	Approve    bool
	By, Reason string
	At         time.Time
}

// Prepare checks r for [Store.Create] and returns the request as created and the
// row to store for it. It is for store implementations: Create calls it with
// the store's time ([Config.Now]), stores the row and returns the request. It
// assigns a new random ID, sets State to Pending and Decision to nil, sets
// Created to now when zero, stamps the times and encodes the arguments (which
// come back decoded as a store reads them, numbers as json.Number). A request
// that names no tool, has no fingerprint, does not expire after it was created
// or has arguments that do not encode as JSON is an error.
func Prepare(r Request, now time.Time) (Request, Row, error) {
	if r.Tool == "" {
		return Request{}, Row{}, errors.New("approvals: create: the request names no tool")
	}
	if r.Fingerprint == "" {
		return Request{}, Row{}, errors.New("approvals: create: the request has no fingerprint (compute it with Fingerprint)")
	}
	args, err := encodeArguments(r.Arguments)
	if err != nil {
		return Request{}, Row{}, fmt.Errorf("approvals: create: arguments of %s: %w", r.Tool, err)
	}
	r.ID = newID()
	r.State = Pending
	r.Decision = nil
	r.Created = Stamp(r.Created)
	if r.Created.IsZero() {
		r.Created = Stamp(now)
	}
	r.Expires = Stamp(r.Expires)
	if !r.Expires.After(r.Created) {
		return Request{}, Row{}, fmt.Errorf("approvals: create: the request expires (%s) before it was created (%s); set Expires to a later time", r.Expires.Format(time.RFC3339Nano), r.Created.Format(time.RFC3339Nano))
	}
	r.Arguments, err = decodeArguments(args)
	if err != nil {
		return Request{}, Row{}, fmt.Errorf("approvals: create: arguments of %s: %w", r.Tool, err)
	}
	var details []byte
	if len(r.Details) > 0 {
		if details, err = encodeArguments(r.Details); err != nil {
			return Request{}, Row{}, fmt.Errorf("approvals: create: details of %s: %w", r.Tool, err)
		}
		if r.Details, err = decodeArguments(details); err != nil {
			return Request{}, Row{}, fmt.Errorf("approvals: create: details of %s: %w", r.Tool, err)
		}
	} else {
		r.Details = nil
	}
	row := Row{
		ID: r.ID, Label: r.Label, Tool: r.Tool, Arguments: string(args), Details: string(details), Fingerprint: r.Fingerprint,
		Created: r.Created, Expires: r.Expires, State: string(Pending),
	}
	return r, row, nil
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

// Request checks row and returns the request it holds, its state as it reads at
// now (a pending or approved request whose Expires time is not after now reads
// as [Expired]). A row that cannot be read (arguments that are not a JSON
// object, an unknown state, a decision that contradicts the state) is an error
// wrapping [ErrCorrupt] that names the row's ID. It is for store
// implementations, which call it on every row they read.
func (row Row) Request(now time.Time) (Request, error) {
	corrupt := func(format string, args ...any) (Request, error) {
		return Request{}, fmt.Errorf("approvals: request %q: %s: %w", row.ID, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	r := Request{
		ID:          row.ID,
		Label:       row.Label,
		Tool:        row.Tool,
		Fingerprint: row.Fingerprint,
		Created:     Stamp(row.Created),
		Expires:     Stamp(row.Expires),
		State:       State(row.State),
	}
	args, err := decodeArguments([]byte(row.Arguments))
	if err != nil {
		return corrupt("arguments are not a JSON object (%v)", err)
	}
	r.Arguments = args
	if row.Details != "" {
		if r.Details, err = decodeArguments([]byte(row.Details)); err != nil {
			return corrupt("details are not a JSON object (%v)", err)
		}
	}
	if !knownState(r.State) {
		return corrupt("unknown state %q", row.State)
	}
	if row.Decided {
		r.Decision = &Decision{Approve: row.Approve, By: row.By, Reason: row.Reason, At: Stamp(row.At)}
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

// DecideError returns nil when r, as read, can be decided (it is pending), and
// otherwise the error [Store.Decide] returns for it: one wrapping [ErrExpired]
// for an expired request, [ErrDecided] for any other. It is for store
// implementations.
func (r Request) DecideError() error {
	switch r.State {
	case Pending:
		return nil
	case Expired:
		return fmt.Errorf("approvals: decide %q: %w", r.ID, ErrExpired)
	default:
		return fmt.Errorf("approvals: decide %q (%s): %w", r.ID, r.State, ErrDecided)
	}
}

// Validate returns an error when no store can apply f: an unknown State or a
// negative Limit. [Store.List] returns it; store implementations call it
// first.
func (f Filter) Validate() error {
	if f.State != "" && !knownState(f.State) {
		return fmt.Errorf("approvals: list: unknown state %q (want one of pending, approved, denied, expired, used)", f.State)
	}
	if f.Limit < 0 {
		return fmt.Errorf("approvals: list: negative limit %d", f.Limit)
	}
	return nil
}
