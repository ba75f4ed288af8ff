package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/redact"
)

// Outcomes of a call as the audit trails record them: the call's [mcs.CodeOf] when
// it is a success for the driver (ok, or an in-band [mcs.Signal]), "error" for
// every failure.
const (
	// OutcomeOK is a call that succeeded.
	OutcomeOK = "ok"
	// OutcomeError is a call that failed with an error.
	OutcomeError = "error"
	// OutcomeDenied is a call whose result is an in-band permission denial
	// ([mcs.CodeDenied]); the tool did not run.
	OutcomeDenied = "denied"
	// OutcomeChallenge is a call that met an authentication challenge
	// ([mcs.CodeChallenge]): the in-band result the auth middleware makes of it,
	// or, for hooks installed inside the auth middleware, the *auth.Challenge
	// error itself.
	OutcomeChallenge = "challenge"
	// OutcomePending is a call whose result says it waits for a person's
	// approval ([mcs.CodePending]); the tool has not run yet.
	OutcomePending = "pending"
)

// Redacted replaces the value of a sensitive argument in audit records.
const Redacted = redact.Redacted

// DefaultMaxValueLen is the length in bytes beyond which audit trails cut string
// values unless [WithMaxValueLen] says otherwise.
const DefaultMaxValueLen = redact.DefaultMaxValueLen

// DefaultRedactKeys returns the key fragments whose arguments audit trails redact
// unless [WithRedactKeys] says otherwise: password, passwd, pwd, pass, secret,
// token, api_key, apikey, api.key, access_key, auth (so authorization and
// x-auth-token), bearer, jwt, cookie, session_id, sessionid, credential,
// private_key, signature, subscription_key (Azure's Ocp-Apim-Subscription-Key) and
// ^key$ (a key named "key" alone, as in ?key=). A fragment matches anywhere in a key
// unless it is anchored with ^ or $, so some harmless keys are redacted too
// ("author", "compass"): a record that says too little is the safer mistake. The slice is a new copy on every call.
func DefaultRedactKeys() []string { return redact.DefaultKeys() }

// AuditOption configures [SlogAudit] and [OpenAuditFile].
type AuditOption func(*auditConfig)

// WithRedactKeys replaces the key fragments whose arguments are redacted. A key is
// redacted, at any depth of the arguments, when its normalised form (lower case,
// without "_", "-", "." and spaces) contains a normalised fragment (a fragment
// anchored with ^ or $ must start or end the key): "token" covers
// "access_token" and "X-Refresh-Token", "api_key" covers "apiKey" and "api.key".
// The same names are recognised inside string values and errors ("Authorization:
// Bearer x", "?token=x", "API_KEY=x", "\"password\":\"x\"") and in name/value pair
// lists ([{"name": "Authorization", "value": "x"}], [["token", "x"]]). To extend
// the defaults, pass append(DefaultRedactKeys(), more...). Empty fragments are
// ignored; with none left, nothing is redacted by name.
func WithRedactKeys(keys ...string) AuditOption {
	return func(c *auditConfig) {
		c.keys = append([]string{}, keys...) // never nil: nil would mean the defaults
	}
}

// WithMaxValueLen sets the length in bytes beyond which string values are cut in
// audit records; the cut is marked with the number of bytes left out. n <= 0 keeps
// values whole. The default is [DefaultMaxValueLen].
func WithMaxValueLen(n int) AuditOption {
	return func(c *auditConfig) { c.maxLen = n }
}

type auditConfig struct {
	keys   []string // nil: the defaults
	maxLen int
	redact *redact.Redactor
}

func newAuditConfig(opts []AuditOption) *auditConfig {
	c := &auditConfig{maxLen: DefaultMaxValueLen}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	c.redact = redact.New(c.keys, c.maxLen)
	return c
}

// auditRecord is one call as an audit trail records it.
type auditRecord struct {
	start    time.Time
	tool     string
	info     mcs.CallInfo   // zero when the context carries none
	args     map[string]any // redacted and cut
	duration time.Duration
	outcome  string
	approval string // the approval request's id, for a pending or denied signal
	err      string // redacted and cut
}

func (c *auditConfig) record(ctx context.Context, name string, args map[string]any, result any, err error) auditRecord {
	now := time.Now()
	start, ok := CallStart(ctx)
	if !ok {
		start = now
	}
	r := auditRecord{start: start, tool: name, duration: now.Sub(start), outcome: OutcomeOK}
	r.info, _ = mcs.CallInfoFromContext(ctx)
	var known []string
	r.args, known = c.redact.Args(args)
	if r.args == nil {
		r.args = map[string]any{}
	}
	r.outcome = outcome(result, err)
	if err == nil && (r.outcome == OutcomePending || r.outcome == OutcomeDenied) {
		r.approval = approvalID(result)
	} else {
		r.approval = ClaimedApproval(ctx)
	}
	if err != nil {
		// An upstream error may echo the request: remove the call's own secrets
		// from it, and the secrets it carries in other spellings, then cut it.
		r.err = c.redact.Text(err.Error(), known)
	}
	return r
}

// outcome classifies a finished call by its result and error with [mcs.CodeOf],
// never from text. A challenge is recognised in both of its forms: a hook outside
// the auth middleware sees the in-band result, one inside it sees the error.
func outcome(result any, err error) string {
	switch c := mcs.CodeOf(result, err); c {
	case mcs.CodeOK, mcs.CodeDenied, mcs.CodeChallenge, mcs.CodePending:
		return string(c)
	}
	return OutcomeError
}

// approvalID returns the "id" of the Data of an [mcs.Signal] result (the id of
// the approval request a pending or denied call belongs to), or "".
func approvalID(result any) string {
	var data map[string]any
	switch s := result.(type) {
	case mcs.Signal:
		data = s.Data
	case *mcs.Signal:
		if s != nil {
			data = s.Data
		}
	}
	id, _ := data["id"].(string)
	return id
}

// SlogAudit returns hooks that log one record per call to logger (nil means
// [slog.Default] at the time of the call). The record has the message "tool call"
// and the attributes tool; driver, label and call_id from the call's
// [mcs.CallInfo] (the driver's Meta.ID, the orchestrator label, the provider's
// call id; each left out when empty); args (a group of the redacted arguments,
// keys sorted, long strings cut; an empty group is left out by the handlers of
// log/slog); duration (measured from [CallStart]); outcome ([OutcomeOK],
// [OutcomeError], [OutcomeDenied], [OutcomeChallenge] or [OutcomePending]);
// approval_id, the id of the approval request a pending call waits for or a
// denied call was denied by (the "id" of the [mcs.Signal]'s Data), or that a
// call which ran claimed ([ClaimedApproval]), when there is one; and,
// for a failed call (a challenge that reaches the hooks as an error included),
// error, redacted and cut like the arguments (the secrets of the call's own
// arguments are removed from it too, for upstream errors that echo the request).
// Successful calls log at [slog.LevelInfo], denied, challenged, pending and failed
// calls at [slog.LevelWarn]. Results are not logged.
//
// Install the Set with [WithSet] or [Middleware.AddSet]. It is safe for concurrent
// use; logger must be too, as every logger of log/slog is.
func SlogAudit(logger *slog.Logger, opts ...AuditOption) Set {
	cfg := newAuditConfig(opts)
	log := func(ctx context.Context, name string, args map[string]any, result any, err error) {
		l := logger
		if l == nil {
			l = slog.Default()
		}
		r := cfg.record(ctx, name, args, result, err)
		level := slog.LevelInfo
		if r.outcome != OutcomeOK {
			level = slog.LevelWarn
		}
		attrs := make([]slog.Attr, 0, 8)
		attrs = append(attrs, slog.String("tool", r.tool))
		if r.info.Driver.ID != "" {
			attrs = append(attrs, slog.String("driver", r.info.Driver.ID))
		}
		if r.info.Label != "" {
			attrs = append(attrs, slog.String("label", r.info.Label))
		}
		if r.info.CallID != "" {
			attrs = append(attrs, slog.String("call_id", r.info.CallID))
		}
		attrs = append(attrs,
			slog.Attr{Key: "args", Value: slog.GroupValue(groupAttrs(r.args)...)},
			slog.Duration("duration", r.duration),
			slog.String("outcome", r.outcome),
		)
		if r.approval != "" {
			attrs = append(attrs, slog.String("approval_id", r.approval))
		}
		if r.err != "" {
			attrs = append(attrs, slog.String("error", r.err))
		}
		l.LogAttrs(ctx, level, "tool call", attrs...)
	}
	return Set{
		Post: func(ctx context.Context, name string, args map[string]any, result any) {
			log(ctx, name, args, result, nil)
		},
		Failure: func(ctx context.Context, name string, args map[string]any, err error) {
			log(ctx, name, args, nil, err)
		},
	}
}

// groupAttrs turns a sanitised map into attributes with sorted keys; nested maps
// become groups.
func groupAttrs(m map[string]any) []slog.Attr {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		if sub, ok := m[k].(map[string]any); ok {
			attrs = append(attrs, slog.Attr{Key: k, Value: slog.GroupValue(groupAttrs(sub)...)})
			continue
		}
		attrs = append(attrs, slog.Any(k, m[k]))
	}
	return attrs
}

// AuditFile is an append-only audit trail in the JSON Lines format: one JSON object
// per call and line, with the fields time (start of the call, RFC 3339), tool,
// driver, label and call_id (from the call's [mcs.CallInfo]; left out when
// empty), args (redacted, long strings cut), duration_ms, outcome ([OutcomeOK],
// [OutcomeError], [OutcomeDenied], [OutcomeChallenge] or [OutcomePending]),
// approval_id (the id of the approval request of a pending or denied call, or
// the one a call that ran claimed, see [SlogAudit]; left out when there is none) and, for a failed call, error (redacted and cut like the arguments). Results are not
// recorded.
//
// Install its hooks with [AuditFile.Hooks]. Hooks cannot report errors, so a
// failed write is kept and reported by [AuditFile.Err] and [AuditFile.Close]. Each
// line is written with a single write to a file opened with O_APPEND, so lines of
// concurrent calls, and of other processes appending to the same file, never
// interleave within a line on local file systems. AuditFile is safe for concurrent
// use.
type AuditFile struct {
	path string
	cfg  *auditConfig

	mu  sync.Mutex
	f   *os.File // nil once closed
	err error    // first error that lost a line
}

// OpenAuditFile opens path for appending audit lines, creating it with mode 0600
// when it does not exist (an existing file keeps its mode). It fails when path
// exists and is not a regular file, or cannot be opened; the error names the path.
// Call Close when done, which syncs the file to stable storage.
func OpenAuditFile(path string, opts ...AuditOption) (*AuditFile, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("hooks: audit file %q is not a regular file (%s); give the path of a file", path, fi.Mode().Type())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hooks: open audit file: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
		}
		return nil, fmt.Errorf("hooks: audit file %q: %w", path, err)
	}
	return &AuditFile{path: path, cfg: newAuditConfig(opts), f: f}, nil
}

// auditLine is the JSON shape of one line of an AuditFile.
type auditLine struct {
	Time       time.Time      `json:"time"`
	Tool       string         `json:"tool"`
	Driver     string         `json:"driver,omitempty"`
	Label      string         `json:"label,omitempty"`
	CallID     string         `json:"call_id,omitempty"`
	Args       map[string]any `json:"args"`
	DurationMS float64        `json:"duration_ms"`
	Outcome    string         `json:"outcome"`
	ApprovalID string         `json:"approval_id,omitempty"`
	Error      string         `json:"error,omitempty"`
}

// Hooks returns the post and failure hooks that append one line per call. Calls
// that finish after Close are not recorded; Err then reports it.
func (a *AuditFile) Hooks() Set {
	return Set{
		Post: func(ctx context.Context, name string, args map[string]any, result any) {
			a.write(a.cfg.record(ctx, name, args, result, nil))
		},
		Failure: func(ctx context.Context, name string, args map[string]any, err error) {
			a.write(a.cfg.record(ctx, name, args, nil, err))
		},
	}
}

func (a *AuditFile) write(r auditRecord) {
	line := auditLine{
		Time:       r.start.UTC(),
		Tool:       r.tool,
		Driver:     r.info.Driver.ID,
		Label:      r.info.Label,
		CallID:     r.info.CallID,
		Args:       r.args,
		DurationMS: float64(r.duration) / float64(time.Millisecond),
		Outcome:    r.outcome,
		ApprovalID: r.approval,
		Error:      r.err,
	}
	b, err := json.Marshal(line)
	if err != nil {
		// An argument JSON cannot represent (NaN, a channel): keep the record.
		line.Args = map[string]any{"_unencodable": err.Error()}
		b, err = json.Marshal(line)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		a.keep(fmt.Errorf("hooks: encode audit line for tool %q: %w", r.tool, err))
		return
	}
	if a.f == nil {
		a.keep(fmt.Errorf("hooks: audit line for tool %q after Close: %w", r.tool, fs.ErrClosed))
		return
	}
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		a.keep(fmt.Errorf("hooks: write audit file: %w", err))
	}
}

// keep records err unless an earlier error is recorded; a.mu must be held.
func (a *AuditFile) keep(err error) {
	if a.err == nil {
		a.err = err
	}
}

// Err returns the first error that lost an audit line (a failed write, or a call
// that finished after Close), or nil.
func (a *AuditFile) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Sync commits the lines written so far to stable storage.
func (a *AuditFile) Sync() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("hooks: sync audit file %q: %w", a.path, fs.ErrClosed)
	}
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("hooks: sync audit file: %w", err)
	}
	return nil
}

// Close syncs the file to stable storage and closes it. It returns the errors of
// the sync and the close joined with the first error that lost a line (see
// [AuditFile.Err]). A second Close returns an error wrapping [fs.ErrClosed].
func (a *AuditFile) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("hooks: close audit file %q: %w", a.path, fs.ErrClosed)
	}
	var errs []error
	if a.err != nil {
		errs = append(errs, a.err)
	}
	if err := a.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("hooks: sync audit file: %w", err))
	}
	if err := a.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("hooks: close audit file: %w", err))
	}
	a.f = nil
	return errors.Join(errs...)
}
