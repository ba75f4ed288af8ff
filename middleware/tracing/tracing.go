// Package tracing makes every tool call visible in OpenTelemetry: one span per
// call and a duration histogram, following the GenAI semantic conventions.
//
// Each call a driver executes gets a span named "execute_tool {tool}", of kind
// INTERNAL, with the attributes
//
//	gen_ai.operation.name   "execute_tool"
//	gen_ai.tool.name        the tool name the driver's chain runs
//	gen_ai.tool.type        "function"
//	gen_ai.tool.call.id     the provider's call id, when there is one
//	gen_ai.tool.description the tool's description (cut to 1 KiB)
//	mcs.driver.id           the meta id of the driver whose chain runs
//	mcs.driver.label        its orchestrator label, when routed by one
//	mcs.outcome             ok | error | denied | challenge | pending
//	error.type              on a failed call, with the span status Error (its
//	                        description is the error text, secrets removed as the
//	                        hooks audit removes them, cut to 1 KiB)
//
// A permission denial, an auth challenge or a call waiting for approval is a
// successful call (the model reads it as the result, an [mcs.Signal]), so its
// span has no error status; mcs.outcome says "denied", "challenge" or "pending"
// so that operators can count them. Outcomes are told by [mcs.CodeOf], never from
// text.
//
// Arguments and results are recorded only with [WithContent], as
// gen_ai.tool.call.arguments and gen_ai.tool.call.result (JSON), with secrets
// redacted the way the hooks audit redacts them and cut to a bounded size.
//
// The histogram [MetricDuration] ("mcs.tool.call.duration", seconds) records every
// call with gen_ai.operation.name, gen_ai.tool.name, mcs.outcome, mcs.driver.id
// and, on failure, error.type. Tools the driver does not list are recorded as
// "_OTHER", so that names a model invents cannot grow the metric without bound.
//
// Spans nest through the context: when an orchestrator with tracing routes a call
// to a driver with tracing, the driver's span is a child of the orchestrator's,
// and both are children of whatever span the caller's context carries (a model
// round, an HTTP request).
//
// Without [WithTracerProvider] and [WithMeterProvider] the global providers of
// go.opentelemetry.io/otel are used; they do nothing until the application sets
// real ones (otel.SetTracerProvider), so an unused tracing middleware costs about
// one context allocation per call.
//
// Put tracing first in a middleware list, so that its span covers the whole chain
// and sees the in-band results: [tracing, hooks, validate, permission, auth].
package tracing

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/redact"
	"github.com/mcs-go/mcs/internal/textcut"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/mcs-go/mcs/middleware/tracing"

// MetricDuration is the name of the duration histogram, in seconds.
const MetricDuration = "mcs.tool.call.duration"

// Attributes of this module (the others are the GenAI semantic conventions).
const (
	// AttrOutcome is how the call ended: [OutcomeOK], [OutcomeError],
	// [OutcomeDenied], [OutcomeChallenge] or [OutcomePending].
	AttrOutcome = attribute.Key("mcs.outcome")
	// AttrDriverID is the meta id of the driver whose chain ran the call.
	AttrDriverID = attribute.Key("mcs.driver.id")
	// AttrDriverLabel is the orchestrator label of that driver.
	AttrDriverLabel = attribute.Key("mcs.driver.label")
)

// Values of [AttrOutcome]: the call's [mcs.CodeOf] when it is a success for the
// driver, "error" for every failure (error.type then says which).
const (
	OutcomeOK        = "ok"        // the tool ran and returned a result
	OutcomeError     = "error"     // the call failed
	OutcomeDenied    = "denied"    // an in-band permission denial; the tool did not run
	OutcomeChallenge = "challenge" // an auth challenge the user must act on
	OutcomePending   = "pending"   // the call waits for a person's approval
)

// DefaultContentLimit is the default bound, in bytes, of each content attribute.
const DefaultContentLimit = 4096

// Bounds of cached names and attribute sets, and of text attributes.
const (
	maxCached      = 4096
	maxNameLen     = 128
	maxDescription = 1024
	maxStatus      = 1024
)

// Option configures a [Middleware] built by [New].
type Option func(*config)

// config is what the options of [New] set.
type config struct {
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	content bool
	limit   int
	keys    []string
}

// WithTracerProvider sets the provider of the tracer; nil, the default, means the
// global provider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets the provider of the meter; nil, the default, means the
// global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithContent records the arguments and, for a call that did not fail, the result
// of each call on its span, as JSON in gen_ai.tool.call.arguments and
// gen_ai.tool.call.result. Secrets are removed as the hooks audit removes them:
// values of keys that look like secrets (password, token, api_key, auth, cookie,
// ...; see [WithRedactKeys]) become "[REDACTED]" at any depth, as do sensitive
// name/value pairs and credentials inside strings; each attribute is cut to the
// content limit ([WithContentLimit]). Content is off by default: tool arguments
// and results often hold personal data.
func WithContent() Option { return func(c *config) { c.content = true } }

// WithContentLimit sets the bound, in bytes, of each content attribute (and of
// each string inside it); n <= 0 means [DefaultContentLimit].
func WithContentLimit(n int) Option { return func(c *config) { c.limit = n } }

// WithRedactKeys replaces the key fragments whose values WithContent redacts (the
// defaults are those of the hooks audit: password, pwd, pass, secret, token,
// api_key, access_key, auth, bearer, jwt, cookie, session_id, credential,
// private_key, signature, subscription_key, ^key$, ...). A key is redacted when its
// lower-case form, without "_", "-", "." and spaces, contains a fragment (one
// anchored with ^ or $ must start or end it); the same names are
// recognised in name/value pair lists and inside strings ("Authorization: Bearer
// x", "?token=x").
func WithRedactKeys(keys ...string) Option {
	return func(c *config) { c.keys = append([]string{}, keys...) }
}

// Middleware records a span and a duration for every tool call, as the package
// documentation describes. It is safe for concurrent use and may be shared by
// many drivers. The zero value is not usable; build one with [New].
type Middleware struct {
	config
	global bool // tp is the global provider
	noop   bool // tp is the API's no-op provider

	tracer trace.Tracer
	hist   metric.Float64Histogram
	redact *redact.Redactor // content
	status *redact.Redactor // error texts in the span status

	names  sync.Map // tool name -> span name
	sets   sync.Map // metricKey -> []metric.RecordOption
	cached atomic.Int64
}

var _ mcs.ToolMiddleware = (*Middleware)(nil)

// New returns a tracing middleware configured by opts. It creates its tracer and
// histogram at once; with the global providers they follow a provider the
// application sets later.
func New(opts ...Option) *Middleware {
	m := &Middleware{}
	for _, o := range opts {
		if o != nil {
			o(&m.config)
		}
	}
	if m.tp == nil {
		m.tp, m.global = otel.GetTracerProvider(), true
	}
	if m.mp == nil {
		m.mp = otel.GetMeterProvider()
	}
	if m.limit <= 0 {
		m.limit = DefaultContentLimit
	}
	var keys []string // nil: the defaults
	if m.keys != nil {
		keys = m.keys
	}
	m.redact = redact.New(keys, m.limit)
	m.status = redact.New(keys, maxStatus)
	_, m.noop = m.tp.(tracenoop.TracerProvider)
	m.tracer = m.tp.Tracer(ScopeName)
	meter := m.mp.Meter(ScopeName)
	h, err := meter.Float64Histogram(MetricDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of tool calls, by tool and outcome."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
	if err != nil {
		otel.Handle(err)
	}
	m.hist = h
	return m
}

// OnExecuteTool runs the call inside its span and records its duration. The
// result and error of next are returned unchanged; a panic below is recorded as
// an error and passed on.
func (m *Middleware) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	if m.noop || (m.global && unsetGlobal != nil && otel.GetTracerProvider() == unsetGlobal) {
		// A no-op provider, or no application provider yet: the tracer would only
		// allocate a non-recording span. Skip it; the histogram may still be live.
		if m.hist == nil || !m.hist.Enabled(ctx) {
			return next(ctx, name, args)
		}
		return m.observe(ctx, nil, false, true, isListed(ctx), name, args, next)
	}
	listed := isListed(ctx)
	ctx, span := m.tracer.Start(ctx, m.spanName(name, listed), internalKind...)
	recording := span.IsRecording()
	measure := m.hist != nil && m.hist.Enabled(ctx)
	if !recording && !measure {
		res, err := next(ctx, name, args)
		span.End()
		return res, err
	}
	return m.observe(ctx, span, recording, measure, listed, name, args, next)
}

// unsetGlobal is the global tracer provider as the otel package starts: a
// delegate that hands out non-recording spans until the application sets a
// provider, after which otel.GetTracerProvider returns that provider instead. It
// is nil when the provider seen at start is not that delegate (another package set
// one during initialisation).
var unsetGlobal = func() trace.TracerProvider {
	tp := otel.GetTracerProvider()
	if reflect.TypeOf(tp).String() != "*global.tracerProvider" {
		return nil
	}
	return tp
}()

// internalKind is the start option of every span, allocated once.
var internalKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}

// isListed reports whether the call's tool is one the driver lists (BaseDriver
// sets only the name of a tool it does not know).
func isListed(ctx context.Context) bool {
	info, _ := mcs.CallInfoFromContext(ctx)
	return info.Tool.Title != "" || info.Tool.Description != "" || len(info.Tool.Parameters) > 0
}

// observe is the path of a call that is recorded.
func (m *Middleware) observe(ctx context.Context, span trace.Span, recording, measure bool, listed bool,
	name string, args map[string]any, next mcs.CallNext) (res any, err error) {
	start := time.Now()
	info, _ := mcs.CallInfoFromContext(ctx)
	var known []string // the secrets of the arguments, removed from the error text too
	if recording {
		attrs := make([]attribute.KeyValue, 0, 10)
		attrs = append(attrs,
			semconv.GenAIOperationNameExecuteTool,
			semconv.GenAIToolName(name),
			semconv.GenAIToolTypeKey.String("function"))
		if info.CallID != "" {
			attrs = append(attrs, semconv.GenAIToolCallID(info.CallID))
		}
		desc := info.Tool.Description
		if desc == "" {
			desc = info.Tool.Title
		}
		if desc != "" {
			attrs = append(attrs, semconv.GenAIToolDescription(textcut.Prefix(desc, maxDescription)))
		}
		if info.Driver.ID != "" {
			attrs = append(attrs, AttrDriverID.String(info.Driver.ID))
		}
		if info.Label != "" {
			attrs = append(attrs, AttrDriverLabel.String(info.Label))
		}
		if m.content {
			clean, k := m.redact.Args(args)
			known = k
			attrs = append(attrs, semconv.GenAIToolCallArgumentsKey.String(m.encode(clean)))
		}
		span.SetAttributes(attrs...)
	}
	panicked := true
	defer func() {
		var outcome, errType string
		if panicked {
			outcome, errType = OutcomeError, string(mcs.CodePanic)
		} else {
			outcome, errType = classify(res, err)
		}
		if recording {
			span.SetAttributes(AttrOutcome.String(outcome))
			if errType != "" {
				span.SetAttributes(semconv.ErrorTypeKey.String(errType))
				msg := errType // a panic, or a result that reports a failure
				if err != nil {
					if known == nil {
						_, known = m.status.Args(args)
					}
					msg = m.status.Text(err.Error(), known)
				}
				span.SetStatus(codes.Error, msg)
			} else if m.content {
				span.SetAttributes(semconv.GenAIToolCallResultKey.String(m.encode(m.redact.Value(res))))
			}
			span.End()
		}
		if measure {
			tool := name
			if !listed {
				tool = "_OTHER"
			}
			m.hist.Record(ctx, time.Since(start).Seconds(), m.recordOptions(tool, outcome, errType, info.Driver.ID)...)
		}
		if !recording && span != nil {
			span.End()
		}
	}()
	res, err = next(ctx, name, args)
	panicked = false
	return res, err
}

// spanName returns "execute_tool {name}", cached for listed tools.
func (m *Middleware) spanName(name string, listed bool) string {
	if !listed {
		return "execute_tool " + textcut.Prefix(name, maxNameLen)
	}
	if s, ok := m.names.Load(name); ok {
		return s.(string)
	}
	s := "execute_tool " + textcut.Prefix(name, maxNameLen)
	if m.cached.Add(1) <= maxCached {
		m.names.Store(name, s)
	}
	return s
}

type metricKey struct{ tool, outcome, errType, driver string }

// recordOptions returns the attribute set of a measurement, cached.
func (m *Middleware) recordOptions(tool, outcome, errType, driver string) []metric.RecordOption {
	k := metricKey{tool, outcome, errType, driver}
	if o, ok := m.sets.Load(k); ok {
		return o.([]metric.RecordOption)
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(textcut.Prefix(tool, maxNameLen)),
		AttrOutcome.String(outcome),
	}
	if driver != "" {
		attrs = append(attrs, AttrDriverID.String(driver))
	}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	o := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	if m.cached.Add(1) <= maxCached {
		m.sets.Store(k, o)
	}
	return o
}

// encode renders a redacted value as JSON within the content limit.
func (m *Middleware) encode(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return `"[not encodable as JSON: ` + textcut.Prefix(err.Error(), 200) + `]"`
	}
	return m.redact.Cut(string(data))
}

// classify returns the outcome of a call that returned res and err, and its
// error.type when it failed. A challenge is a challenge in both of its forms: the
// in-band result outside the auth middleware, the error inside it.
func classify(res any, err error) (outcome, errType string) {
	switch c := mcs.CodeOf(res, err); c {
	case mcs.CodeOK, mcs.CodeDenied, mcs.CodeChallenge, mcs.CodePending:
		return string(c), ""
	default:
		if err == nil { // a result that reports a failure code of its own
			return OutcomeError, string(c)
		}
		return OutcomeError, ErrorType(err)
	}
}

// ErrorType returns the low-cardinality error.type of a failed call: the value of
// an ErrorType() string method anywhere in err's tree (such as "consent" for a
// permission.ConsentError and "invalid_schema" for a validate.SchemaError); else
// err's [mcs.CodeOf] ("unknown_tool", "invalid_arguments", "malformed_call",
// "too_many_calls", "panic", "timeout", "canceled", "challenge", ...), except that
// for [mcs.CodeError], the code of every other error, it is the Go type of err,
// as semconv.ErrorType gives it.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	var et interface{ ErrorType() string }
	if errors.As(err, &et) {
		if s := et.ErrorType(); s != "" {
			return s
		}
	}
	if c := mcs.CodeOf(nil, err); c != mcs.CodeError {
		return string(c)
	}
	return semconv.ErrorType(err).Value.AsString()
}
