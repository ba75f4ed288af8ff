// Package validate checks the arguments of every tool call against the called
// tool's parameter schemas before the tool runs, so that bad arguments never reach
// a tool and the model learns exactly what to fix.
//
// The [Middleware] reads the tool's definition from [mcs.CallInfo] (BaseDriver puts
// it in the context before its chain runs) and checks, for each call:
//
//   - every required parameter is present (a null counts as absent unless the
//     parameter's schema allows null, as every driver of this module treats it);
//   - every value against its parameter's JSON Schema, with
//     github.com/santhosh-tekuri/jsonschema/v6: drafts 4, 6, 7, 2019-09 and 2020-12,
//     chosen by the schema's "$schema", 2020-12 when there is none;
//   - no argument the tool does not declare ([WithUnknown] decides whether such an
//     argument is an error, the default, dropped or let through).
//
// A violation fails the call with an *[mcs.ArgumentsError] whose Problems list
// every problem with its JSON path and what was expected, such as
//
//	/count: want integer, got string "five"
//
// so the retry prompt tells the model what to fix; the tool does not run. With
// [WithCoercion] the values models commonly send as strings ("5", "2.5", "true",
// a JSON array or object inside a string) are converted to the type the schema
// asks for before checking, never when the schema also takes a string.
//
// No schema is ever fetched: a "$ref" to another document (over the network or
// from a file) makes the schema invalid, and the error says so. A tool whose
// schema is invalid is reported once through log/slog and its calls fail with a
// *[SchemaError] rather than run unchecked ([WithUncheckedInvalidSchemas] lets
// them run). The schemas of the OpenAPI dialect the REST driver passes on
// ("nullable", boolean "exclusiveMinimum") are read as OpenAPI means them.
//
// Each tool's schemas are compiled once and cached. The cache recognises a
// definition by its parameters (names, required flags and the identity of their
// schema maps) and, when those are new objects, by their content, so a driver
// whose listing changed gets its new schemas compiled while a driver that builds
// equal definitions on every call compiles once.
//
// In a middleware list, put validate before permission, so that nobody is asked
// to consent to a call that cannot run: [tracing, hooks, validate, permission,
// auth].
//
// # The contract
//
// The validation concern has a contract, [SupportsValidation], and a capability flag,
// [Capability]. The [Middleware] is one implementation of the contract; a driver
// author may build the concern into a driver instead: the driver implements
// SupportsValidation (the marker method ValidatesArguments) and declares Capability in its Meta, and a client finds
// it with a type assertion. A driver that only has the Middleware configured
// implements neither and does not list the flag: which middleware runs is
// configuration the client applied, not a property of the driver, and the client
// that built the Middleware holds it.
package validate

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcs-go/mcs"
)

// Capability is the capability flag of the validation concern, whose contract is
// [SupportsValidation].
const Capability mcs.Capability = "validation"

// SupportsValidation is the contract of the validation concern. An implementation
// checks the arguments of every call to a tool the driver lists against the tool's
// parameters before the tool runs, and fails a call whose arguments do not conform
// with an *[mcs.ArgumentsError] listing every problem, without running the tool.
// ValidatesArguments is a marker: it does nothing, and a type declares with it
// that it keeps that promise. [Middleware] implements it. A driver may build the
// concern in instead, and then also declares [Capability] in its Meta; a driver
// that merely has the middleware configured does neither (see the package
// documentation).
type SupportsValidation interface {
	ValidatesArguments()
}

// Unknown says what happens to an argument the called tool does not declare.
type Unknown int

// What [WithUnknown] may choose.
const (
	// UnknownError fails the call with a problem naming the argument and the
	// parameters the tool takes. It is the default.
	UnknownError Unknown = iota
	// UnknownDrop removes the argument before the tool runs.
	UnknownDrop
	// UnknownAllow passes the argument on unchecked, for tools that take
	// arguments beyond the ones they list.
	UnknownAllow
)

// String returns "error", "drop" or "allow".
func (u Unknown) String() string {
	switch u {
	case UnknownDrop:
		return "drop"
	case UnknownAllow:
		return "allow"
	}
	return "error"
}

// ParseUnknown returns the Unknown named s ("error", "drop" or "allow"), for
// configuration files; "" is UnknownError.
func ParseUnknown(s string) (Unknown, error) {
	switch s {
	case "", "error":
		return UnknownError, nil
	case "drop":
		return UnknownDrop, nil
	case "allow":
		return UnknownAllow, nil
	}
	return UnknownError, &UnknownValueError{Value: s}
}

// UnknownValueError is the error of [ParseUnknown] for a word it does not know.
type UnknownValueError struct{ Value string }

// Error names the value and the accepted ones.
func (e *UnknownValueError) Error() string {
	return "validate: unknown arguments policy " + quote(e.Value) + `: want "error", "drop" or "allow"`
}

// Option configures a [Middleware] built by [New].
type Option func(*config)

// config is what the options of [New] set.
type config struct {
	coerce      bool
	unknown     Unknown
	passInvalid bool
	noFormats   bool
	logger      *slog.Logger
}

// WithCoercion converts, before checking, what models commonly send as strings to
// the type the schema asks for: "5" to 5 for an integer, "2.5" to 2.5 for a number,
// "true" and "false" for a boolean, a string holding a JSON array or object for an
// array or object schema. It descends into object properties and array items. A
// value is never converted when the schema also takes a string (the string keeps
// its meaning), when its schema cannot be read without following a "$ref", or when
// the conversion would lose precision (an integer beyond 2^53). The tool receives
// the converted arguments; the caller's map is not modified.
func WithCoercion() Option { return func(c *config) { c.coerce = true } }

// WithUnknown sets what happens to arguments the tool does not declare; the
// default is [UnknownError].
func WithUnknown(u Unknown) Option { return func(c *config) { c.unknown = u } }

// WithUncheckedInvalidSchemas lets calls to a tool with an invalid parameter
// schema run: that parameter is not checked (the others are), and the problem is
// still logged once. Without it such calls fail with a *[SchemaError].
func WithUncheckedInvalidSchemas() Option { return func(c *config) { c.passInvalid = true } }

// WithFormatAssertion says whether the "format" keyword is checked for the formats
// the validator knows (date-time, date, time, email, hostname, ipv4, ipv6, uri,
// uuid, duration, regex, ...; unknown formats such as OpenAPI's "int32" are
// ignored). The default is true: a call with a malformed date fails before it
// reaches the API. false follows the drafts' own defaults (checked up to draft 7,
// an annotation from 2019-09 on).
func WithFormatAssertion(on bool) Option { return func(c *config) { c.noFormats = !on } }

// WithLogger sets the logger that reports invalid tool schemas; nil, the default,
// means [slog.Default] at the time of the report.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// Middleware checks tool arguments as the package documentation describes.
//
// It is safe for concurrent use and may be shared by many drivers: its cache of
// compiled schemas is read without locks and filled under one. The zero value is
// not usable; build one with [New].
type Middleware struct {
	config

	mu    sync.Mutex                          // serialises cache writes
	cache atomic.Pointer[map[string][]*entry] // tool name -> variants, newest first; never mutated
	size  int                                 // entries in the cache; guarded by mu
}

var (
	_ mcs.ToolMiddleware = (*Middleware)(nil)
	_ SupportsValidation = (*Middleware)(nil)
)

// ValidatesArguments marks Middleware as an implementation of
// [SupportsValidation]; it does nothing.
func (*Middleware) ValidatesArguments() {}

// New returns a validation middleware configured by opts.
func New(opts ...Option) *Middleware {
	m := &Middleware{}
	for _, o := range opts {
		if o != nil {
			o(&m.config)
		}
	}
	empty := map[string][]*entry{}
	m.cache.Store(&empty)
	return m
}

// OnExecuteTool checks args against the definition of the called tool and calls
// next with them (coerced, or without dropped arguments, when options say so) only
// when they are valid. A violation returns an *[mcs.ArgumentsError] listing every
// problem; a tool with an invalid schema returns a *[SchemaError]. A call without a
// [mcs.CallInfo] in ctx, or to a tool the driver does not list, is passed on
// unchecked (the driver reports an unknown tool itself).
func (m *Middleware) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	info, ok := mcs.CallInfoFromContext(ctx)
	if !ok || !listed(&info.Tool) {
		return next(ctx, name, args)
	}
	c := m.checker(&info.Tool)
	out, problems, err := c.check(name, args, m)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &mcs.ArgumentsError{Tool: name, Problems: problems}
	}
	return next(ctx, name, out)
}

// Check checks args against tool's parameters as OnExecuteTool does, without a
// call: it returns the arguments the tool would receive, or the
// *[mcs.ArgumentsError] or *[SchemaError] the call would fail with. It is for
// clients that check a call before offering it, and for tests.
func (m *Middleware) Check(tool mcs.Tool, args map[string]any) (map[string]any, error) {
	if args == nil {
		args = map[string]any{}
	}
	c := m.checker(&tool)
	out, problems, err := c.check(tool.Name, args, m)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, &mcs.ArgumentsError{Tool: tool.Name, Problems: problems}
	}
	return out, nil
}

// listed reports whether t is a definition a driver published: BaseDriver sets
// only the name for a tool the driver does not list, and a published tool has a
// title or a description.
func listed(t *mcs.Tool) bool {
	return t.Title != "" || t.Description != "" || len(t.Parameters) > 0
}

func (m *Middleware) log() *slog.Logger {
	if m.logger != nil {
		return m.logger
	}
	return slog.Default()
}

// SchemaError is the error of a call to a tool whose parameter schema cannot be
// compiled: the schema is not valid JSON Schema, uses an unknown draft, or refers
// to another document. The tool did not run; the tool's definition must be fixed.
type SchemaError struct {
	Tool      string // the tool
	Parameter string // the parameter whose schema is invalid
	Err       error  // what is wrong
}

// Error names the tool, the parameter and the problem.
func (e *SchemaError) Error() string {
	return "validate: tool " + quote(e.Tool) + " was not run: the JSON Schema of its parameter " +
		quote(e.Parameter) + " is invalid (the tool's definition must be fixed): " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *SchemaError) Unwrap() error { return e.Err }

// sortProblems orders problems by path, then text, so that the same call always
// gets the same message.
func sortProblems(p []string) {
	slices.SortFunc(p, func(a, b string) int {
		pa, _, _ := strings.Cut(a, ": ")
		pb, _, _ := strings.Cut(b, ": ")
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

// ErrorType returns "invalid_schema", the error.type tracing records for it.
func (e *SchemaError) ErrorType() string { return "invalid_schema" }
