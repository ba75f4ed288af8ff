// Package tooltable holds the tools of a built-in driver and runs them by name,
// after checking the arguments a model supplies against the declared parameters.
package tooltable

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
)

// Func runs one tool of the driver d. args are the model's arguments as [Parse]
// returns them: checked and normalised by declared type.
type Func[D any] func(d D, ctx context.Context, args map[string]any) (any, error)

// Table is the published tools of a driver of type D, in the order they were
// added, with the function that runs each. The zero value is an empty table. Add
// must not be called concurrently with other methods; once built, a Table is only
// read and is safe for concurrent use.
type Table[D any] struct {
	tools  []mcs.Tool
	byName map[string]*entry[D]
}

type entry[D any] struct {
	tool mcs.Tool
	run  Func[D]
}

// Add publishes tool, run by run, after the tools added before. It panics when a
// tool of the same name was added already, which is a mistake in the driver.
func (t *Table[D]) Add(tool mcs.Tool, run Func[D]) {
	if _, dup := t.byName[tool.Name]; dup {
		panic("tooltable: tool " + tool.Name + " added twice")
	}
	if t.byName == nil {
		t.byName = map[string]*entry[D]{}
	}
	t.tools = append(t.tools, tool)
	t.byName[tool.Name] = &entry[D]{tool: tool, run: run}
}

// Tools returns the published tools in order. The slice is a copy, never nil.
func (t *Table[D]) Tools() []mcs.Tool {
	out := make([]mcs.Tool, len(t.tools))
	copy(out, t.tools)
	return out
}

// Has reports whether the table publishes the tool name.
func (t *Table[D]) Has(name string) bool {
	_, ok := t.byName[name]
	return ok
}

// Names returns the names of the published tools in order.
func (t *Table[D]) Names() []string {
	names := make([]string, len(t.tools))
	for i, tool := range t.tools {
		names[i] = tool.Name
	}
	return names
}

// Execute runs the tool name of the driver d with the model-supplied args: it
// finds the tool, fails when ctx is already done, checks args with [Parse] and
// calls the tool's function. It fails for a name the table does not publish (the
// error wraps [mcs.ErrUnknownTool] and lists the tools), for a done ctx (wrapping
// [context.Cause]), for arguments Parse refuses (an *[mcs.ArgumentsError] naming
// the tool), and with the error of the tool; the errors of a done ctx and of the
// tool begin with the tool name and wrap their cause. The result is nil whenever
// the error is not.
func (t *Table[D]) Execute(ctx context.Context, d D, name string, args map[string]any) (any, error) {
	e, ok := t.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w %q; the tools are: %s", mcs.ErrUnknownTool, name, strings.Join(t.Names(), ", "))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, context.Cause(ctx))
	}
	a, err := Parse(&e.tool, args)
	if err != nil {
		return nil, &mcs.ArgumentsError{Tool: name, Problems: []string{err.Error()}}
	}
	res, err := e.run(d, ctx, a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}
