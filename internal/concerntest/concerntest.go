// Package concerntest checks the contract of a middleware concern: the interface
// a middleware package declares next to its capability flag (such as
// permission.SupportsConsent), which the package's middleware implements and which
// a driver may implement itself instead.
//
// The helpers report through the testing.TB they are given and must be called
// from the goroutine running the test.
package concerntest

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

// Check checks the concern whose contract is C and whose flag is flag:
//
//   - mw, the package's middleware, implements C;
//   - builtIn, a tool driver that builds the concern in, implements C and
//     declares flag in its Meta, and a BaseDriver over it keeps the flag;
//   - a tool driver without the concern does not implement C, and a BaseDriver
//     over it with mw configured neither implements C nor lists flag: its Meta,
//     also after [mcs.DeriveCapabilities], is the Meta of the same BaseDriver
//     without mw, because configured middleware is not mirrored in a driver's
//     data sheet.
func Check[C any](tb testing.TB, flag mcs.Capability, mw mcs.ToolMiddleware, builtIn mcs.ToolDriver) {
	tb.Helper()
	if _, ok := any(mw).(C); !ok {
		tb.Errorf("the middleware %T does not implement the contract", mw)
	}
	if _, ok := builtIn.(C); !ok {
		tb.Errorf("the driver %T that builds the concern in is not recognised by a type assertion", builtIn)
	}
	if m := builtIn.Meta(); !m.HasCapability(flag) {
		tb.Errorf("the driver %T that builds the concern in does not declare %q: %v", builtIn, flag, m.Capabilities)
	}
	if m := mcs.NewBaseDriver(builtIn).Meta(); !m.HasCapability(flag) {
		tb.Errorf("a BaseDriver over %T drops the declared flag %q: %v", builtIn, flag, m.Capabilities)
	}

	var td mcs.ToolDriver = plain{}
	if _, ok := td.(C); ok {
		tb.Errorf("a tool driver without the concern implements the contract")
	}
	with := mcs.NewBaseDriver(td, mcs.WithMiddleware(mw))
	if _, ok := any(with).(C); ok {
		tb.Errorf("a BaseDriver with the middleware configured implements the contract")
	}
	want := mcs.NewBaseDriver(td).Meta()
	for _, got := range []mcs.Meta{with.Meta(), mcs.DeriveCapabilities(with.Meta(), with)} {
		if slices.Contains(got.Capabilities, flag) {
			tb.Errorf("the Meta of a BaseDriver with the middleware lists %q: %v", flag, got.Capabilities)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			tb.Errorf("the middleware changed the Meta of its driver (-without +with):\n%s", diff)
		}
	}
}

// plain is a tool driver with one tool and no concern built in.
type plain struct{}

func (plain) Meta() mcs.Meta {
	return mcs.Meta{ID: "concerntest/plain", Name: "Plain", Version: "1.0.0"}
}

func (plain) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "echo", Description: "Returns its arguments."}}, nil
}

func (plain) ExecuteTool(_ context.Context, _ string, args map[string]any) (any, error) {
	return args, nil
}
