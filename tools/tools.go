// Package tools turns Go functions into an MCS tool driver.
//
// A [Table] is an [mcs.ToolDriver] whose tools are typed Go functions,
// func(context.Context, In) (Out, error), registered with [Add]. The tool's
// parameters are inferred from In's exported fields, so a tool is written once,
// with no name switch in ExecuteTool and no digging in a map of arguments:
//
//	type ReadNote struct {
//		Title string `json:"title" description:"Title of the note."`
//	}
//	t := tools.New(mcs.Meta{ID: "notes", Name: "Notes", Version: "1.0.0"})
//	tools.Add(t, "read_note", "Returns the text of one note.",
//		func(ctx context.Context, in ReadNote) (string, error) { return notes[in.Title], nil })
//	driver := mcs.NewBaseDriver(t)
//
// # Parameters from a struct
//
// Each exported field of In is one parameter. Its name is the field's json tag name
// (the Go name without one); fields tagged json:"-" are skipped and embedded structs
// are flattened, as encoding/json does. A field is required unless its json tag says
// omitempty or omitzero or it is a pointer. Its JSON Schema follows the Go type:
// strings, booleans, integers (unsigned ones with minimum 0), floats, slices and
// arrays, maps with string (or integer) keys, nested structs (their fields follow the
// same rules, and unknown keys are refused), time.Time (a date-time string),
// []byte (base64), json.Number, json.RawMessage and any (any value), and types that
// implement encoding.TextUnmarshaler (strings). A struct that contains itself is
// described once; its inner occurrence is an object, so inference always ends. Tags
// add to the schema: description:"...", enum:"a,b,c" and default:"...".
//
// # Calls
//
// ExecuteTool decodes the model's arguments into a fresh In. A missing required
// argument, a value of the wrong type or an unknown argument fails the call with an
// *[mcs.ArgumentsError] that lists every problem, so the model can fix them all in
// one retry; the function is not called. Scalars are taken as models write them:
// a number or boolean given as a string ("5", "true") is accepted for a numeric or
// boolean field, nothing else is converted. Integer fields take json.Number values
// exactly and refuse fractions, so int64 ids keep their precision when the arguments
// carry them as json.Number (as an MCP server or a Go caller may); no value is sent
// through float64 on the way. The function's Out is the call's result, its error a
// failed call, and a panic in it is recovered into a *[mcs.PanicError].
package tools

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcs-go/mcs"
)

// Table is a ToolDriver whose tools are typed Go functions added with [Add], listed
// in the order they were added. It is safe for concurrent use: tools may be added
// while others run and after the first listing; each addition increases
// ToolsVersion, so an orchestrator holding the table lists it again, also when
// the table is wrapped in an [mcs.BaseDriver] (which forwards the listing
// protocol, see [mcs.VersionedTools]).
type Table struct {
	meta mcs.Meta

	mu      sync.RWMutex
	tools   []mcs.Tool
	byName  map[string]*entry
	version atomic.Uint64
}

type entry struct {
	tool mcs.Tool
	run  func(ctx context.Context, args map[string]any) (any, error)
}

var (
	_ mcs.ToolDriver     = (*Table)(nil)
	_ mcs.ToolLookup     = (*Table)(nil)
	_ mcs.ToolDefiner    = (*Table)(nil)
	_ mcs.VersionedTools = (*Table)(nil)
)

// New returns an empty table whose Meta is meta with the capabilities the table
// implements added (orchestratable).
func New(meta mcs.Meta) *Table {
	t := &Table{byName: map[string]*entry{}}
	t.meta = mcs.DeriveCapabilities(meta, t)
	return t
}

// Meta returns the meta the table was created with, plus its capability flags.
func (t *Table) Meta() mcs.Meta {
	m := mcs.DeriveCapabilities(t.meta, t)
	return m
}

// ListTools returns the tools in the order they were added. The slice and its
// parameters are the caller's.
func (t *Table) ListTools(context.Context) ([]mcs.Tool, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]mcs.Tool, len(t.tools))
	for i, tool := range t.tools {
		out[i] = tool.Clone()
	}
	return out, nil
}

// HasTool reports whether the table publishes name.
func (t *Table) HasTool(_ context.Context, name string) (bool, error) {
	t.mu.RLock()
	_, ok := t.byName[name]
	t.mu.RUnlock()
	return ok, nil
}

// ToolDefinition returns the definition of name, and whether the table publishes it.
func (t *Table) ToolDefinition(_ context.Context, name string) (mcs.Tool, bool, error) {
	t.mu.RLock()
	e, ok := t.byName[name]
	t.mu.RUnlock()
	if !ok {
		return mcs.Tool{}, false, nil
	}
	return e.tool.Clone(), true, nil
}

// ToolsVersion increases with every tool added; an orchestrator reads it to know
// when to list the table again.
func (t *Table) ToolsVersion() uint64 { return t.version.Load() }

// ExecuteTool runs the tool name with args decoded into its input type. It fails
// with an error wrapping [mcs.ErrUnknownTool] for a name the table does not
// publish, with ctx's cause when ctx is done before the call starts, with an
// *[mcs.ArgumentsError] listing every problem of args, with the function's error as
// it returned it (the retry prompt names the tool already), and with a *[mcs.PanicError] when the function
// panics. The result is nil whenever the error is not.
func (t *Table) ExecuteTool(ctx context.Context, name string, args map[string]any) (result any, err error) {
	t.mu.RLock()
	e, ok := t.byName[name]
	t.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q; the tools are: %s", mcs.ErrUnknownTool, name, t.names())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, context.Cause(ctx))
	}
	defer func() {
		if v := recover(); v != nil {
			result, err = nil, &mcs.PanicError{Tool: name, Value: v, Stack: debug.Stack()}
		}
	}()
	return e.run(ctx, args)
}

func (t *Table) names() string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	s := ""
	for i, tool := range t.tools {
		if i > 0 {
			s += ", "
		}
		s += tool.Name
	}
	return s
}

// ToolOption configures one tool added with [Add].
type ToolOption func(*toolConfig)

type toolConfig struct {
	title       string
	annotations *mcs.ToolAnnotations
	paramDesc   map[string]string
}

// WithParameterDescription sets the description of the parameter name, replacing
// the one of its description tag: for text known only at run time (a limit taken
// from the configuration). Add panics when the tool has no parameter name.
func WithParameterDescription(name, description string) ToolOption {
	return func(c *toolConfig) {
		if c.paramDesc == nil {
			c.paramDesc = map[string]string{}
		}
		c.paramDesc[name] = description
	}
}

// WithTitle sets the tool's short human-readable title.
func WithTitle(title string) ToolOption {
	return func(c *toolConfig) { c.title = title }
}

// WithAnnotations sets the tool's behaviour hints (read-only, destructive,
// idempotent, open world), which consent policies such as permission.ReadOnly use.
// Without it the tool has none and counts as possibly destructive.
func WithAnnotations(a mcs.ToolAnnotations) ToolOption {
	return func(c *toolConfig) { c.annotations = &a }
}

// Add registers fn as the tool name of t, described by description, with its
// parameters inferred from In (see the package documentation). The tool is listed
// after the tools added before it.
//
// Add panics, with a message naming the tool and the field, when name is empty or
// already registered, when the tool has neither description nor title, when In is
// not a struct, or when a field's type has no JSON Schema (a channel, a function, a
// complex number, a map with keys that have no JSON form), or when an option names a
// parameter the tool does not have: those are programming
// errors, found when the program starts. Safe for concurrent use.
func Add[In, Out any](t *Table, name, description string, fn func(context.Context, In) (Out, error), opts ...ToolOption) {
	if fn == nil {
		panic(fmt.Sprintf("tools: tool %q: the function is nil", name))
	}
	var cfg toolConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	inType := reflect.TypeFor[In]()
	fields, err := inferFields(name, inType)
	if err != nil {
		panic(err.Error())
	}
	tool := mcs.Tool{Name: name, Title: cfg.title, Description: description, Annotations: cfg.annotations}
	for p, desc := range cfg.paramDesc {
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == p })
		if i < 0 {
			panic(fmt.Sprintf("tools: tool %q: WithParameterDescription names %q, which is not a parameter", name, p))
		}
		fields[i].desc = desc
		fields[i].schema = mcs.CloneArgs(fields[i].schema)
		fields[i].schema["description"] = desc
	}
	for _, f := range fields {
		schema := f.schema
		if f.desc != "" {
			schema = mcs.CloneArgs(schema)
			delete(schema, "description")
		}
		tool.Parameters = append(tool.Parameters, mcs.Parameter{
			Name: f.name, Description: f.desc, Required: f.required, Schema: schema,
		})
	}
	if err := tool.Validate(); err != nil {
		panic("tools: " + err.Error())
	}
	dec := newDecoder[In](name, inType, fields)
	run := func(ctx context.Context, args map[string]any) (any, error) {
		in, err := dec.decode(args)
		if err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.byName[name]; dup {
		panic(fmt.Sprintf("tools: tool %q is registered twice; tool names must be unique", name))
	}
	t.tools = append(t.tools, tool)
	t.byName[name] = &entry{tool: tool, run: run}
	t.version.Add(1)
}
