// Package permission asks for consent before a driver runs a tool, and fails
// closed.
//
// The [Middleware] first checks its policy rules ([Allow], [Deny], [ReadOnly];
// case-insensitive glob patterns on the tool name or on "label:tool", first match
// wins; see [Rule]). A call that no rule matches goes to the consent
// handler, a [ConsentFunc] such as the terminal prompt [Prompt]. When the call is
// denied, by a rule or by the user, the tool does not run and the call returns the
// in-band result
//
//	{"permission_denied": true, "tool": "<name>", "message": "User denied execution of '<name>'."}
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
package permission

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/clone"
)

// Capability is the capability flag of the consent concern.
const Capability mcs.Capability = "consent"

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
// Without a colon a pattern matches the tool name as the model sees it, and also
// every tool part of a namespaced name: the text after each "__" separator. An
// orchestrator's own middleware sees "files__delete_file" for the tool delete_file
// of the driver labelled files, and Deny("delete_*") denies it there too.
//
// With a colon, "label:tool", the part before the first colon matches the label
// the call was routed under ([mcs.CallInfo].Label, set by an orchestrator for the
// chain of the driver it routes to; "" for a driver used on its own) and the part
// after it matches the tool as above: Allow("files:*") allows every tool of the
// driver labelled files, in that driver's own middleware. The label comes from the
// operator's registration, never from a tool name, so a tool cannot claim another
// driver's label by naming itself "files__x". In an orchestrator's own middleware
// the call is not routed yet (its Label is that of the orchestrator itself), so
// there match namespaced names instead ("files__*").
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

// Validate reports whether the rule's pattern is well-formed. A malformed rule
// does not stop [New]; a call that reaches it fails closed with a *ConsentError of
// reason [ReasonInvalidRule]. Validate lets rules read from configuration be
// checked up front.
func (r Rule) Validate() error {
	if r.readOnly {
		return nil
	}
	label, tool, _ := strings.Cut(r.pattern, ":")
	for _, p := range []string{label, tool} {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("permission: rule %s: %w; see path.Match for the pattern syntax", r, err)
		}
	}
	return nil
}

// compiledRule is a Rule prepared for matching.
type compiledRule struct {
	Rule
	label    string // label pattern; "" when the rule has no colon
	tool     string // tool pattern
	hasLabel bool
}

func compile(r Rule, exact bool) compiledRule {
	c := compiledRule{Rule: r}
	p := r.pattern
	if !exact {
		p = strings.ToLower(p)
	}
	if l, t, ok := strings.Cut(p, ":"); ok {
		c.label, c.tool, c.hasLabel = l, t, true
	} else {
		c.tool = p
	}
	return c
}

// match reports whether the rule matches the call described by info whose tool
// name is spelled as names (names[0] is the name called, folded when the match is
// case-insensitive; label too).
func (c *compiledRule) match(names [2]string, label string, info mcs.CallInfo) (bool, error) {
	if c.readOnly {
		a := info.Tool.Annotations
		// The definition must be that of the tool called: a middleware before this
		// one may have rewritten the name.
		return a != nil && a.ReadOnly && info.Tool.Name != "" && strings.EqualFold(info.Tool.Name, names[0]), nil
	}
	if c.hasLabel {
		ok, err := path.Match(c.label, label)
		if err != nil || !ok {
			return false, err
		}
	}
	for _, n := range names {
		if n == "" {
			break
		}
		if ok, err := matchTool(c.tool, n); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
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

// matchTool matches pattern against name and against the text after each "__" in
// name.
func matchTool(pattern, name string) (bool, error) {
	ok, err := path.Match(pattern, name)
	if err != nil || ok {
		return ok, err
	}
	for rest := name; ; {
		_, after, found := strings.Cut(rest, separator)
		if !found {
			return false, nil
		}
		if after != "" {
			if ok, _ := path.Match(pattern, after); ok {
				return true, nil
			}
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
	// context.DeadlineExceeded for a timeout, or the pattern error of a rule.
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

// DeniedMessage is the message of the in-band result of a call the user denied.
func DeniedMessage(name string) string {
	return "User denied execution of '" + name + "'."
}

// PolicyDeniedMessage is the message of the in-band result of a call a Deny rule
// denied.
func PolicyDeniedMessage(name string) string {
	return "Execution of '" + name + "' was denied by policy."
}

// Denied returns the in-band result of a call that was denied with message:
// {"permission_denied": true, "tool": name, "message": message}.
func Denied(name, message string) map[string]any {
	return map[string]any{"permission_denied": true, "tool": name, "message": message}
}

// IsDenied reports whether result is an in-band denial result.
func IsDenied(result any) bool {
	m, ok := result.(map[string]any)
	return ok && m["permission_denied"] == true
}

// Option configures a [Middleware] built by [New].
type Option func(*Middleware)

// WithTimeout bounds the wait for a consent decision to d; a decision that does not
// arrive in time fails the call with a *ConsentError of reason [ReasonTimeout], and
// a later answer is ignored. d <= 0 means no timeout beyond the call's context,
// which is the default.
func WithTimeout(d time.Duration) Option {
	return func(m *Middleware) { m.timeout = max(d, 0) }
}

// WithRules appends policy rules; rules are tried in the order given, across all
// WithRules options, and the first match decides.
func WithRules(rules ...Rule) Option {
	return func(m *Middleware) { m.rules = append(m.rules, rules...) }
}

// WithExactCase makes rule patterns match tool names and labels exactly as
// written. By default they match case-insensitively and against the snake-case
// spelling of the name too (see [Rule]), so that a Deny rule cannot be sidestepped
// by a tool named in another case.
func WithExactCase() Option {
	return func(m *Middleware) { m.exact = true }
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
// The zero Middleware has no rules and no handler, so it fails every call closed.
// Middleware is safe for concurrent use and may be shared by many drivers; the
// handler may be replaced at any time with [Middleware.SetConsentHandler].
type Middleware struct {
	rules    []Rule
	compiled []compiledRule
	exact    bool
	timeout  time.Duration
	consent  atomic.Pointer[ConsentFunc]
}

var _ mcs.ToolMiddleware = (*Middleware)(nil)

// New returns a Middleware that asks consent for calls no rule decides. consent may
// be nil: then only calls an Allow rule matches run and the others fail closed,
// until a handler is set with SetConsentHandler.
func New(consent ConsentFunc, opts ...Option) *Middleware {
	m := &Middleware{}
	for _, o := range opts {
		if o != nil {
			o(m)
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
		names, label := [2]string{name}, info.Label
		if !m.exact {
			names, label = spellings(name), strings.ToLower(label)
		}
		for i := range m.compiled {
			r := &m.compiled[i]
			ok, err := r.match(names, label, info)
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
	f := m.consent.Load()
	if f == nil {
		return nil, &ConsentError{Tool: name, Reason: ReasonNoHandler}
	}
	allowed, err := m.ask(ctx, *f, name, args)
	if err != nil {
		return nil, err
	}
	if !allowed {
		return Denied(name, DeniedMessage(name)), nil
	}
	return next(ctx, name, args)
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
