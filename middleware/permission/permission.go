// Package permission asks for consent before a driver runs a tool, and fails
// closed.
//
// The [Middleware] first checks its policy rules ([Allow], [Deny], [ReadOnly];
// case-insensitive glob patterns on the tool name, or on "label:tool" and
// "label__tool" for the tools of the driver registered under label; first match
// wins; see [Rule]). A tool that a Deny rule denies whatever the call is left out
// of the driver's listings, and so never offered to the model. A call that no
// rule matches goes to the consent handler, a [ConsentFunc] such as the terminal
// prompt [Prompt]. When the call is denied, by a rule or by the user, the tool
// does not run and the call returns the in-band result [Denied], an [mcs.Signal] of
// kind [mcs.CodeDenied] that the model reads as
//
//	{"message": "User denied execution of '<name>'.", "permission_denied": true, "tool": "<name>"}
//
// which is a success for the driver, so that the model can tell the user. When no
// decision can be had (no handler, a handler error, no answer within the timeout,
// the call's context ending) the tool does not run either and the call fails with a
// *[ConsentError] that says why.
//
// Install the Middleware on any driver that accepts tool middleware. Combined with
// the other concerns the recommended order is hooks, permission, auth: the hooks
// then see denied calls too, and the auth middleware only runs for calls that were
// allowed. Because a driver threads every call through its middleware, also the
// calls an orchestrator makes through ExecuteTool, a consent policy configured on a
// driver holds wherever the driver is used.
//
// # Approvals
//
// A consent handler blocks the call until someone answers, on the same machine.
// With [WithApprovals] a call no rule decides waits instead, durably, in an
// [approvals.Store] (memory, or SQLite or PostgreSQL from the packages
// approvals/sqlite and approvals/postgres, which this package does not link):
// the tool does not run, a pending request is stored, and the model reads the
// in-band result [Pending], an [mcs.Signal] of kind [mcs.CodePending]:
//
//	{"approval_pending": true, "id": "<id>", "message": "The call to '<name>' did not run: it waits for a person's approval, ...", "tool": "<name>"}
//
// The model tells the user; a person decides later, anywhere the store reaches
// ([approvals.Store.Decide]); the same call then runs exactly once (the approval
// is claimed atomically, also against other processes), and the runner's
// WithApprovals runs it by itself on the conversation's next turn. The request
// binds to the exact call: the driver's label, the tool's definition and the
// canonical arguments ([approvals.Fingerprint]), so an approval never lets
// another call run. Denied, the call gets the denial result with the reason.
// The precedence is: rules first (an Allow or Deny rule never touches the
// store), then approvals, which replace asking: the consent handler is not
// called while approvals are configured. A store that fails fails the call
// closed (reason [ReasonApprovalStore]). See [WithApprovals] for every case.
//
// # The contract
//
// The consent concern has a contract, [SupportsConsent], and a capability flag,
// [Capability]. The [Middleware] is one implementation of the contract; a driver
// author may build the concern into a driver instead: the driver implements
// SupportsConsent (SetConsentHandler) and declares Capability in its Meta, and a client finds
// it with a type assertion. A driver that only has the Middleware configured
// implements neither and does not list the flag: which middleware runs is
// configuration the client applied, not a property of the driver, and the client
// that built the Middleware holds it.
package permission

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/internal/clone"
)

// Capability is the capability flag of the consent concern, whose contract is
// [SupportsConsent].
const Capability mcs.Capability = "consent"

// SupportsConsent is the contract of the consent concern. An implementation asks
// the handler set with SetConsentHandler before it runs a tool call its policy does
// not decide, runs the call only when the handler consents, and with no handler
// (nil) fails such calls closed. [Middleware] implements it. A driver may build the
// concern in instead, and then also declares [Capability] in its Meta; a driver
// that merely has the middleware configured does neither (see the package
// documentation).
type SupportsConsent interface {
	SetConsentHandler(f ConsentFunc)
}

// ConsentFunc decides whether the named tool may run with args. It returns true to
// allow and false to deny; an error means no decision could be had and fails the
// call. args must not be modified.
//
// A handler that waits for a person must honour ctx. Without [WithTimeout] it runs
// on the calling goroutine with the call's own args, and the call waits for it; an
// answer given after the call's context ended is ignored. With a timeout it runs on
// its own goroutine with a copy of args, the call stops waiting when the timeout
// expires or ctx ends, and a later answer is ignored. A ConsentFunc installed on a
// Middleware may be called concurrently.
type ConsentFunc func(ctx context.Context, name string, args map[string]any) (bool, error)

// Rule is a policy rule: whether matching calls are allowed or denied. Build
// rules with [Allow], [Deny] and [ReadOnly].
//
// A pattern is a glob in the syntax of [path.Match], matched case-insensitively
// unless the Middleware has [WithExactCase]: the pattern in lower case is matched
// against the tool name in lower case and in snake case (camel-case boundaries,
// '-', '.' and spaces as '_'), so Deny("delete_*") also denies DELETE_ALL,
// DeleteUser and delete-user.
//
// A pattern without a label part names no driver: it matches the tool name, and
// every part of it after a "__" separator, of any driver. An orchestrator's own
// middleware sees "files__delete_file" for the tool delete_file of the driver
// labelled files, and Deny("delete_*") and Allow("read_*") apply there as on the
// driver.
//
// A pattern "label:tool", or "label__tool" (split at the first "__"), names the
// driver labelled label, and matches only the calls that reach that driver: the
// label part must match the label the operator registered the driver under, never
// text in a tool's name, and the tool part then matches the driver's tool name as
// above. That label is the one the call is routed under ([mcs.CallInfo].Label, set
// by an orchestrator for the chain of the driver it routes to; "" for a driver used
// on its own) or, in an orchestrator's own middleware, before routing, the label of
// the driver the orchestrator says the call reaches ([mcs.CallInfo].Route). So
// Allow("files__list_directory"), Allow("files__*") and Allow("files:*") work
// alike on the driver labelled files and on an orchestrator over it, and none of
// them allows evil__files__list_directory, the tool files__list_directory of a
// server labelled evil. An orchestrator tells the route when its names carry
// their driver's label (Namespacing over two drivers or more, AlwaysNamespacing);
// under Flat, or Namespacing over one driver, a name carries no label and label
// patterns in its own middleware match nothing: put them on the drivers. In an
// orchestrator registered as "in" in another, in__d2__tool is a name of the outer
// one, and a rule for it names the label in ("in__d2__*", "in:*").
//
// A Deny rule matches more widely: also when its whole pattern matches the name
// or a part of it after a "__", whatever the label, so that Deny("files__*") also
// denies evil__files__list_directory. A Deny rule that denies a tool whatever the
// call hides it from the driver's listings (see [Middleware.HidesTool]).
type Rule struct {
	pattern  string
	allow    bool
	readOnly bool
}

// Allow returns a rule that runs matching tools without asking, even when no
// consent handler is set.
func Allow(pattern string) Rule { return Rule{pattern: pattern, allow: true} }

// Deny returns a rule that denies matching tools without asking; the call returns
// the in-band denial result.
func Deny(pattern string) Rule { return Rule{pattern: pattern} }

// ReadOnly returns a rule that runs, without asking, the tools whose definition
// says they only read ([mcs.CallInfo].Tool.Annotations.ReadOnly); it does not
// match any other call, so "reads run, everything else is asked" is
//
//	permission.New(ask, permission.WithRules(permission.ReadOnly()))
//
// Annotations are the driver's claim about its tools: the drivers of this module
// derive them from the tool (REST from the HTTP method), but a driver that relays
// another party's tools (an MCP server) relays that party's claim. Put Deny rules
// for tools you never want run before ReadOnly.
func ReadOnly() Rule { return Rule{allow: true, readOnly: true} }

// Pattern returns the rule's glob pattern; "" for [ReadOnly].
func (r Rule) Pattern() string { return r.pattern }

// Allows reports whether the rule allows (true) or denies (false) matching tools.
func (r Rule) Allows() bool { return r.allow }

// String returns the rule as Go code, such as Allow("read_*").
func (r Rule) String() string {
	switch {
	case r.readOnly:
		return "ReadOnly()"
	case r.allow:
		return fmt.Sprintf("Allow(%q)", r.pattern)
	}
	return fmt.Sprintf("Deny(%q)", r.pattern)
}

// Validate reports whether the rule's pattern is well-formed: the whole pattern
// and its label and tool parts (see [Rule]). A malformed rule does not stop [New];
// a call that reaches it fails closed with a *ConsentError of reason
// [ReasonInvalidRule]. Validate lets rules read from configuration be checked up
// front.
func (r Rule) Validate() error {
	if r.readOnly {
		return nil
	}
	label, tool, _, _ := split(r.pattern)
	for _, p := range []string{r.pattern, label, tool} {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("permission: rule %s: %w; see path.Match for the pattern syntax", r, err)
		}
	}
	return nil
}

// split returns the label and tool parts of pattern: before and after the first
// colon, else before and after the first "__"; else no label and the whole
// pattern as the tool part.
func split(pattern string) (label, tool string, hasLabel, colon bool) {
	if l, t, ok := strings.Cut(pattern, ":"); ok {
		return l, t, true, true
	}
	if l, t, ok := strings.Cut(pattern, separator); ok {
		return l, t, true, false
	}
	return "", pattern, false, false
}

// compiledRule is a Rule prepared for matching.
type compiledRule struct {
	Rule
	whole    string // the pattern, folded unless exact
	label    string // the label part; "" when the rule has none
	tool     string // the tool part; the whole pattern when there is no label part
	hasLabel bool
	colon    bool  // the label part ends at a colon
	bad      error // the pattern is malformed
}

func compile(r Rule, exact bool) compiledRule {
	c := compiledRule{Rule: r, bad: r.Validate()}
	c.whole = r.pattern
	if !exact {
		c.whole = strings.ToLower(c.whole)
	}
	c.label, c.tool, c.hasLabel, c.colon = split(c.whole)
	return c
}

// subject is a call as the rules see it: the name called and the label of the
// chain, and where the chain's driver passes the call on when it can tell. Names
// are in their spellings, and labels folded, when the match is case-insensitive.
type subject struct {
	names  [2]string // the name called (see spellings)
	label  string    // CallInfo.Label
	routed bool      // CallInfo.Route is set
	rlabel string    // CallInfo.Route.Label
	rtool  [2]string // CallInfo.Route.Tool
	info   mcs.CallInfo
}

// subjectOf returns the subject of a call of name described by info.
func (m *Middleware) subjectOf(name string, info mcs.CallInfo) subject {
	s := subject{names: [2]string{name}, label: info.Label, info: info}
	if info.Route.Label != "" {
		s.routed, s.rlabel, s.rtool = true, info.Route.Label, [2]string{info.Route.Tool}
	}
	if !m.exact {
		s.names, s.label = spellings(name), strings.ToLower(s.label)
		if s.routed {
			s.rlabel, s.rtool = strings.ToLower(s.rlabel), spellings(info.Route.Tool)
		}
	}
	return s
}

// match reports whether the rule matches the call; the error is that of a
// malformed pattern.
//
// The rule's label part, if any, must match the label of the driver the call is
// for: the chain's label, or the label of the route; its tool part then matches,
// as a pattern without a label does, the tool name or a part of it after a "__".
// A Deny rule also matches when its whole pattern matches the name so, whatever
// the label (the wide matching, so that a name that only looks like another
// driver's tool is denied too).
func (c *compiledRule) match(s *subject) (bool, error) {
	if c.bad != nil {
		return false, c.bad
	}
	if c.readOnly {
		a := s.info.Tool.Annotations
		// The definition must be that of the tool called: a middleware before this
		// one may have rewritten the name.
		return a != nil && a.ReadOnly && s.info.Tool.Name != "" && strings.EqualFold(s.info.Tool.Name, s.names[0]), nil
	}
	if c.matchAt(s.label, s.names) || (s.routed && c.matchAt(s.rlabel, s.rtool)) {
		return true, nil
	}
	if !c.allow && c.hasLabel && !c.colon {
		return matchTool(c.whole, s.names), nil
	}
	return false, nil
}

// matchAt reports whether the rule matches the tool names of the driver labelled
// label.
func (c *compiledRule) matchAt(label string, names [2]string) bool {
	if c.hasLabel {
		if ok, _ := path.Match(c.label, label); !ok {
			return false
		}
	}
	return matchTool(c.tool, names)
}

// mayAllow reports whether the Allow or ReadOnly rule could match some call of the
// subject's tool, whatever the label of the call: HidesTool must not hide a tool
// such a rule lets run.
func (c *compiledRule) mayAllow(s *subject) bool {
	if !c.hasLabel || c.readOnly {
		ok, _ := c.match(s)
		return ok
	}
	return matchTool(c.tool, s.names) || (s.routed && matchTool(c.tool, s.rtool))
}

// spellings returns the spellings of name a case-insensitive rule is matched
// against: name in lower case and, when different, in snake case (DeleteUser and
// delete-user as delete_user; "" otherwise), so that Deny("delete_*") cannot be
// sidestepped by the way a tool's name is written. A name already in lower snake
// case costs nothing.
func spellings(name string) [2]string {
	lower := strings.ToLower(name)
	if !strings.ContainsFunc(name, func(r rune) bool { return r == '-' || r == '.' || r == ' ' || unicode.IsUpper(r) }) {
		return [2]string{lower}
	}
	var b strings.Builder
	b.Grow(len(name) + 4)
	var prev rune
	for i, r := range name {
		switch {
		case r == '-' || r == '.' || r == ' ':
			b.WriteByte('_')
			prev = r
			continue
		case unicode.IsUpper(r) && i > 0:
			next, _ := utf8.DecodeRuneInString(name[i+utf8.RuneLen(r):])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	if snake := b.String(); snake != lower {
		return [2]string{lower, snake}
	}
	return [2]string{lower}
}

// matchTool reports whether pattern matches one of the spellings of a name, or
// the text after a "__" in it.
func matchTool(pattern string, names [2]string) bool {
	for _, n := range names {
		if n == "" {
			break
		}
		if matchName(pattern, n) {
			return true
		}
	}
	return false
}

// matchName matches pattern against name and against the text after each "__" in
// name.
func matchName(pattern, name string) bool {
	for rest := name; ; {
		if rest != "" {
			if ok, _ := path.Match(pattern, rest); ok {
				return true
			}
		}
		_, after, found := strings.Cut(rest, separator)
		if !found {
			return false
		}
		rest = after
	}
}

// separator joins a label and a tool name in a namespaced name (the
// orchestrator's Separator; this package does not import the orchestrator).
const separator = "__"

// Reason says why no consent decision could be had.
type Reason string

// Reasons of a [ConsentError].
const (
	// ReasonNoHandler: no rule matched and no consent handler is set.
	ReasonNoHandler Reason = "no_handler"
	// ReasonHandlerError: the consent handler returned an error or panicked.
	ReasonHandlerError Reason = "handler_error"
	// ReasonTimeout: no decision arrived within the timeout set with WithTimeout.
	ReasonTimeout Reason = "timeout"
	// ReasonCanceled: the call's context ended before a decision arrived.
	ReasonCanceled Reason = "canceled"
	// ReasonInvalidRule: a rule tried before any rule matched the tool name has a
	// malformed pattern.
	ReasonInvalidRule Reason = "invalid_rule"
	// ReasonApprovalStore: with [WithApprovals], the approval store failed (a
	// database that is down or locked, a corrupt row), so the call could neither
	// wait for nor use an approval.
	ReasonApprovalStore Reason = "approval_store"
	// ReasonNotApproved: the call was made as the run of an approved request
	// ([approvals.ContextWithRun]) and found no approval of it to claim.
	ReasonNotApproved Reason = "not_approved"
)

// ConsentError is the error of a call that did not run because no consent decision
// could be had. The middleware fails closed: the tool never runs when it returns a
// ConsentError.
type ConsentError struct {
	// Tool is the name of the tool that did not run.
	Tool string
	// Reason says why no decision could be had.
	Reason Reason
	// Timeout is the timeout that expired, for ReasonTimeout.
	Timeout time.Duration
	// Err is the underlying error: the handler's error, the context's cause,
	// context.DeadlineExceeded for a timeout, the pattern error of a rule, or the
	// approval store's error.
	Err error
}

// Error says which tool did not run, why, and what can be done about it.
func (e *ConsentError) Error() string {
	prefix := fmt.Sprintf("permission: tool %q not executed: ", e.Tool)
	switch e.Reason {
	case ReasonNoHandler:
		return prefix + "no rule matched and no consent handler is set (set one with permission.New or SetConsentHandler, or allow the tool with a rule)"
	case ReasonHandlerError:
		return prefix + "the consent handler failed: " + errText(e.Err)
	case ReasonTimeout:
		return prefix + fmt.Sprintf("no consent decision within %s", e.Timeout)
	case ReasonCanceled:
		return prefix + "the call ended while waiting for consent: " + errText(e.Err)
	case ReasonInvalidRule:
		return prefix + "invalid permission rule: " + errText(e.Err)
	case ReasonApprovalStore:
		return prefix + "the approval store failed, and a call that needs an approval never runs without one (check that the store's database is reachable and try again): " + errText(e.Err)
	case ReasonNotApproved:
		return prefix + "nothing to run: " + errText(e.Err)
	}
	return prefix + "no consent decision: " + errText(e.Err)
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// Unwrap returns e.Err.
func (e *ConsentError) Unwrap() error { return e.Err }

// ErrorType returns "consent", the low-cardinality error type that tracing
// records for every ConsentError whatever it wraps. (Its [mcs.CodeOf] is that of
// what it wraps: CodeTimeout, CodeCanceled or CodeError.)
func (e *ConsentError) ErrorType() string { return "consent" }

// DeniedMessage is the message of the in-band result of a call the user denied.
func DeniedMessage(name string) string {
	return "User denied execution of '" + name + "'."
}

// PolicyDeniedMessage is the message of the in-band result of a call a Deny rule
// denied.
func PolicyDeniedMessage(name string) string {
	return "Execution of '" + name + "' was denied by policy."
}

// Denied returns the in-band result of a call that was denied with message: an
// [mcs.Signal] of kind [mcs.CodeDenied], whose JSON, the text the model reads, is
// {"message": message, "permission_denied": true, "tool": name}.
func Denied(name, message string) mcs.Signal {
	return mcs.Signal{Kind: mcs.CodeDenied, Tool: name, Message: message}
}

// IsDenied reports whether result is an in-band denial result: a result
// [mcs.CodeOf] reports as [mcs.CodeDenied], or a map[string]any with
// "permission_denied": true, as this package built them before.
//
// Deprecated: use mcs.CodeOf(result, nil) == mcs.CodeDenied.
func IsDenied(result any) bool {
	if m, ok := result.(map[string]any); ok {
		return m["permission_denied"] == true
	}
	return mcs.CodeOf(result, nil) == mcs.CodeDenied
}

// Option configures a [Middleware] built by [New].
type Option func(*config)

// config is what the options of [New] set.
type config struct {
	rules   []Rule
	exact   bool
	timeout time.Duration
	store   approvals.Store // nil: no approvals
	ttl     time.Duration
	// describers add details to what a person sees (WithDescriber).
	describers []Describer
}

// WithTimeout bounds the wait for a consent decision to d; a decision that does not
// arrive in time fails the call with a *ConsentError of reason [ReasonTimeout], and
// a later answer is ignored. d <= 0 means no timeout beyond the call's context,
// which is the default.
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = max(d, 0) }
}

// WithRules appends policy rules; rules are tried in the order given, across all
// WithRules options, and the first match decides.
func WithRules(rules ...Rule) Option {
	return func(c *config) { c.rules = append(c.rules, rules...) }
}

// WithExactCase makes rule patterns match tool names and labels exactly as
// written. By default they match case-insensitively and against the snake-case
// spelling of the name too (see [Rule]), so that a Deny rule cannot be sidestepped
// by a tool named in another case.
func WithExactCase() Option {
	return func(c *config) { c.exact = true }
}

// Middleware asks for consent before a tool runs. For each call it tries the rules
// in order: the first matching Allow rule runs the tool, the first matching Deny
// rule returns the denial result. A call no rule matches goes to the consent
// handler: true runs the tool, false returns the denial result, and anything else
// (no handler, an error or panic of the handler, the timeout, the end of ctx)
// fails the call with a *[ConsentError] without running the tool.
//
// Without a timeout the handler runs on the calling goroutine (the cheap path) and
// must honour ctx. With a timeout it runs on its own goroutine with a context that
// ends at the timeout, and receives a copy of the arguments, so that a handler that
// outlives the call does not share them with the caller.
//
// With [WithApprovals], a call no rule matches waits for an approval in the store
// instead of going to the handler (see WithApprovals).
//
// The zero Middleware has no rules and no handler, so it fails every call closed.
// Middleware is safe for concurrent use and may be shared by many drivers; the
// handler may be replaced at any time with [Middleware.SetConsentHandler].
type Middleware struct {
	config
	compiled []compiledRule
	consent  atomic.Pointer[ConsentFunc]
	locks    [approvalLocks]sync.Mutex // serialise identical calls with approvals
	clock    func() time.Time          // nil: time.Now
}

var (
	_ mcs.ToolMiddleware = (*Middleware)(nil)
	_ SupportsConsent    = (*Middleware)(nil)
)

// New returns a Middleware that asks consent for calls no rule decides. consent may
// be nil: then only calls an Allow rule matches run and the others fail closed,
// until a handler is set with SetConsentHandler.
func New(consent ConsentFunc, opts ...Option) *Middleware {
	m := &Middleware{}
	for _, o := range opts {
		if o != nil {
			o(&m.config)
		}
	}
	m.compiled = make([]compiledRule, len(m.rules))
	for i, r := range m.rules {
		m.compiled[i] = compile(r, m.exact)
	}
	m.SetConsentHandler(consent)
	return m
}

// SetConsentHandler replaces the consent handler; nil removes it, so that calls no
// rule allows fail closed. Calls already waiting for a decision keep the handler
// they started with. Safe for concurrent use with calls.
func (m *Middleware) SetConsentHandler(f ConsentFunc) {
	if f == nil {
		m.consent.Store(nil)
		return
	}
	m.consent.Store(&f)
}

// Rules returns a copy of the middleware's rules, in the order they are tried.
func (m *Middleware) Rules() []Rule { return append([]Rule(nil), m.rules...) }

// OnExecuteTool decides on the call as described on [Middleware] and calls next
// only when the call is allowed.
func (m *Middleware) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	if len(m.compiled) > 0 {
		info, _ := mcs.CallInfoFromContext(ctx)
		s := m.subjectOf(name, info)
		for i := range m.compiled {
			r := &m.compiled[i]
			ok, err := r.match(&s)
			if err != nil {
				return nil, &ConsentError{Tool: name, Reason: ReasonInvalidRule, Err: fmt.Errorf("rule %s: %w", r.Rule, err)}
			}
			if !ok {
				continue
			}
			if r.allow {
				return next(ctx, name, args)
			}
			return Denied(name, PolicyDeniedMessage(name)), nil
		}
	}
	if m.store != nil {
		return m.queue(ctx, name, args, next)
	}
	f := m.consent.Load()
	if f == nil {
		return nil, &ConsentError{Tool: name, Reason: ReasonNoHandler}
	}
	view := args
	if len(m.describers) > 0 {
		view = described(args, m.details(ctx, name, args))
	}
	allowed, err := m.ask(ctx, *f, name, view)
	if err != nil {
		return nil, err
	}
	if !allowed {
		return Denied(name, DeniedMessage(name)), nil
	}
	return next(ctx, name, args)
}

var _ mcs.ToolHider = (*Middleware)(nil)

// HidesTool reports whether the rules deny the tool of info whatever the call, so
// that the driver leaves it out of its listings (see [mcs.ToolHider]): the first
// rule that could decide a call of it is a Deny rule. A rule with a label part
// could decide for any label (the label of a later call is not known while
// listing), except that a Deny rule's label part is matched against the label of
// the listing's context; a malformed rule, or no matching rule (the call would be
// asked about), hides nothing. A call of a hidden tool still gets the denial.
func (m *Middleware) HidesTool(_ context.Context, info mcs.CallInfo) bool {
	if len(m.compiled) == 0 || info.Tool.Name == "" {
		return false
	}
	s := m.subjectOf(info.Tool.Name, info)
	for i := range m.compiled {
		r := &m.compiled[i]
		if r.bad != nil {
			return false
		}
		if r.allow {
			if r.mayAllow(&s) {
				return false
			}
			continue
		}
		if ok, _ := r.match(&s); ok {
			return true
		}
	}
	return false
}

type decision struct {
	allowed bool
	err     error
}

// ask runs the handler and turns every way of not deciding into a *ConsentError.
func (m *Middleware) ask(ctx context.Context, f ConsentFunc, name string, args map[string]any) (bool, error) {
	if ctx.Err() != nil { // do not ask for a call that has already ended
		return false, &ConsentError{Tool: name, Reason: ReasonCanceled, Err: context.Cause(ctx)}
	}
	if m.timeout <= 0 {
		// No timeout: ask on the calling goroutine (the cheap path). The handler is
		// expected to honour ctx; an answer given after ctx ended is ignored.
		d := callHandler(ctx, f, name, args)
		if ctx.Err() != nil {
			return false, &ConsentError{Tool: name, Reason: ReasonCanceled, Err: context.Cause(ctx)}
		}
		if d.err != nil {
			return false, &ConsentError{Tool: name, Reason: ReasonHandlerError, Err: d.err}
		}
		return d.allowed, nil
	}
	// With a timeout: ask on a goroutine of its own, so that the wait can end at the
	// timeout even when the handler ignores its context.
	hctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	ch := make(chan decision, 1) // buffered: a late handler never blocks
	view := clone.Args(args)
	go func() { ch <- callHandler(hctx, f, name, view) }()
	var d decision
	select {
	case d = <-ch:
	case <-hctx.Done():
	}
	// A decision that arrives when the wait is over is ignored, even if it won the
	// select above.
	if hctx.Err() != nil {
		if err := ctx.Err(); err != nil {
			return false, &ConsentError{Tool: name, Reason: ReasonCanceled, Err: context.Cause(ctx)}
		}
		return false, &ConsentError{Tool: name, Reason: ReasonTimeout, Timeout: m.timeout, Err: context.DeadlineExceeded}
	}
	if d.err != nil {
		return false, &ConsentError{Tool: name, Reason: ReasonHandlerError, Err: d.err}
	}
	return d.allowed, nil
}

// errHandlerPanicked is wrapped by the error of a handler that panicked.
var errHandlerPanicked = errors.New("consent handler panicked")

// callHandler runs f and turns a panic into an error.
func callHandler(ctx context.Context, f ConsentFunc, name string, args map[string]any) (d decision) {
	defer func() {
		if v := recover(); v != nil {
			d = decision{err: fmt.Errorf("%w: %v", errHandlerPanicked, v)}
		}
	}()
	allowed, err := f(ctx, name, args)
	return decision{allowed: allowed, err: err}
}
