package validate_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/concerntest"
	"github.com/mcs-go/mcs/middleware/validate"
	"github.com/mcs-go/mcs/tools"
)

// repeatArgs are the arguments of the tool repeat.
type repeatArgs struct {
	Count int `json:"count" description:"How often."`
}

// builtInValidation builds the validation concern in, without the middleware: its
// tools.Table decodes the arguments into a typed struct and refuses a call whose
// arguments do not fit with an *mcs.ArgumentsError before the tool runs.
type builtInValidation struct{ *tools.Table }

func (builtInValidation) ValidatesArguments() {}

// newBuiltIn returns a builtInValidation with the tool repeat, which counts its
// runs in ran.
func newBuiltIn(ran *atomic.Int32) builtInValidation {
	t := tools.New(mcs.Meta{ID: "test/validation", Name: "Validation", Version: "1.0.0",
		Capabilities: []mcs.Capability{validate.Capability}})
	tools.Add(t, "repeat", "Repeats.", func(_ context.Context, in repeatArgs) (int, error) {
		ran.Add(1)
		return in.Count, nil
	})
	return builtInValidation{t}
}

// repeatDriver is the tool repeat without any check of its own.
type repeatDriver struct{ ran *atomic.Int32 }

func (repeatDriver) Meta() mcs.Meta {
	return mcs.Meta{ID: "test/repeat", Name: "Repeat", Version: "1.0.0"}
}

func (repeatDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "repeat", Description: "Repeats.", Parameters: []mcs.Parameter{
		{Name: "count", Description: "How often.", Required: true, Schema: map[string]any{"type": "integer"}},
	}}}, nil
}

func (d repeatDriver) ExecuteTool(_ context.Context, _ string, args map[string]any) (any, error) {
	d.ran.Add(1)
	return args["count"], nil
}

func TestSupportsValidation(t *testing.T) {
	var ran atomic.Int32
	concerntest.Check[validate.SupportsValidation](t, validate.Capability, validate.New(), newBuiltIn(&ran))
}

// TestSupportsValidationBehaviour checks the promise of the marker for the
// middleware and for a driver that builds the concern in: arguments that do not
// fit the tool's parameters fail the call with an *mcs.ArgumentsError and the tool
// does not run; fitting ones run it.
func TestSupportsValidationBehaviour(t *testing.T) {
	impls := []struct {
		name string
		new  func(ran *atomic.Int32) mcs.ToolDriver
	}{
		{"middleware", func(ran *atomic.Int32) mcs.ToolDriver {
			return mcs.NewBaseDriver(repeatDriver{ran}, mcs.WithMiddleware(validate.New()))
		}},
		{"built in", func(ran *atomic.Int32) mcs.ToolDriver { return newBuiltIn(ran) }},
	}
	tests := []struct {
		name    string
		args    map[string]any
		wantRan int32
	}{
		{"valid", map[string]any{"count": 3.0}, 1},
		{"wrong type", map[string]any{"count": "five"}, 0},
		{"missing", map[string]any{}, 0},
	}
	for _, im := range impls {
		for _, tt := range tests {
			t.Run(im.name+"/"+tt.name, func(t *testing.T) {
				var ran atomic.Int32
				_, err := im.new(&ran).ExecuteTool(t.Context(), "repeat", tt.args)
				_, isArgErr := errors.AsType[*mcs.ArgumentsError](err)
				if wantErr := tt.wantRan == 0; isArgErr != wantErr || (err != nil) != wantErr {
					t.Errorf("error = %v, want an *mcs.ArgumentsError: %t", err, wantErr)
				}
				if got := ran.Load(); got != tt.wantRan {
					t.Errorf("the tool ran %d times, want %d", got, tt.wantRan)
				}
			})
		}
	}
}
