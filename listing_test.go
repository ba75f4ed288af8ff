package mcs_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// listFails is a plain ToolDriver whose listing fails.
type listFails struct{ calcDriver }

var errNoListing = errors.New("the listing is down")

func (*listFails) ListTools(context.Context) ([]mcs.Tool, error) { return nil, errNoListing }

// protocolDriver implements the whole listing protocol with answers its listing
// does not give ("secret" is defined but never listed), so a test can tell the
// protocol was asked rather than the listing.
type protocolDriver struct {
	calcDriver
	version atomic.Uint64
	settled atomic.Int64
	settle  error
}

var (
	_ mcs.ToolLookup     = (*protocolDriver)(nil)
	_ mcs.ToolDefiner    = (*protocolDriver)(nil)
	_ mcs.VersionedTools = (*protocolDriver)(nil)
	_ mcs.ToolSettler    = (*protocolDriver)(nil)
)

var secret = mcs.Tool{Name: "secret", Description: "Defined by lookup only."}

func (d *protocolDriver) HasTool(_ context.Context, name string) (bool, error) {
	return name == secret.Name, nil
}

func (d *protocolDriver) ToolDefinition(_ context.Context, name string) (mcs.Tool, bool, error) {
	if name == secret.Name {
		return secret, true, nil
	}
	return mcs.Tool{}, false, nil
}

func (d *protocolDriver) ToolsVersion() uint64 { return d.version.Load() }

func (d *protocolDriver) SettleTools(context.Context) error {
	d.settled.Add(1)
	return d.settle
}

// listingAnswers is what the listing helpers say about one driver.
type listingAnswers struct {
	Has, HasNot    bool
	Defined        mcs.Tool
	DefinedOK      bool
	DefinedNot     bool
	Version        uint64
	VersionOK      bool
	HasErr, DefErr string
}

func askListing(td mcs.ToolDriver, has, hasNot string) listingAnswers {
	ctx := context.Background()
	var a listingAnswers
	var err error
	if a.Has, err = mcs.HasTool(ctx, td, has); err != nil {
		a.HasErr = err.Error()
	}
	a.HasNot, _ = mcs.HasTool(ctx, td, hasNot)
	if a.Defined, a.DefinedOK, err = mcs.ToolDefinition(ctx, td, has); err != nil {
		a.DefErr = err.Error()
	}
	_, a.DefinedNot, _ = mcs.ToolDefinition(ctx, td, hasNot)
	a.Version, a.VersionOK = mcs.ToolsVersion(td)
	return a
}

func TestListingHelpers(t *testing.T) {
	listed, err := (&calcDriver{}).ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	versioned := &protocolDriver{}
	versioned.version.Store(7)
	tests := []struct {
		name        string
		td          mcs.ToolDriver
		has, hasNot string
		want        listingAnswers
	}{{
		name: "a plain driver is answered from its listing",
		td:   &calcDriver{}, has: "echo", hasNot: "secret",
		want: listingAnswers{Has: true, Defined: listed[1], DefinedOK: true},
	}, {
		name: "a failed listing is the error",
		td:   &listFails{}, has: "echo", hasNot: "secret",
		want: listingAnswers{HasErr: errNoListing.Error(), DefErr: errNoListing.Error()},
	}, {
		name: "a driver with the protocol is asked",
		td:   versioned, has: "secret", hasNot: "echo",
		want: listingAnswers{Has: true, Defined: secret, DefinedOK: true, Version: 7, VersionOK: true},
	}, {
		name: "a BaseDriver over a plain driver forwards to its listing and has no version",
		td:   mcs.NewBaseDriver(&calcDriver{}), has: "echo", hasNot: "secret",
		want: listingAnswers{Has: true, Defined: listed[1], DefinedOK: true},
	}, {
		name: "a BaseDriver forwards the protocol",
		td:   mcs.NewBaseDriver(versioned), has: "secret", hasNot: "echo",
		want: listingAnswers{Has: true, Defined: secret, DefinedOK: true, Version: 7, VersionOK: true},
	}, {
		name: "a BaseDriver over a BaseDriver forwards the protocol",
		td:   mcs.NewBaseDriver(mcs.NewBaseDriver(versioned)), has: "secret", hasNot: "echo",
		want: listingAnswers{Has: true, Defined: secret, DefinedOK: true, Version: 7, VersionOK: true},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, askListing(tt.td, tt.has, tt.hasNot)); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

// Wrapping a driver in a BaseDriver hides nothing of its listing: every
// interface of the protocol is there and reaches the wrapped driver.
func TestBaseDriverForwardsTheListingProtocol(t *testing.T) {
	ctx := context.Background()
	inner := &protocolDriver{settle: errors.New("the document is gone")}
	var td mcs.ToolDriver = mcs.NewBaseDriver(inner, mcs.WithMiddleware((&tracer{}).layer("outer")))

	if _, ok := td.(mcs.ToolLookup); !ok {
		t.Error("not a ToolLookup")
	}
	if _, ok := td.(mcs.ToolDefiner); !ok {
		t.Error("not a ToolDefiner")
	}
	v, ok := td.(mcs.VersionedTools)
	if !ok {
		t.Fatal("not VersionedTools")
	}
	s, ok := td.(mcs.ToolSettler)
	if !ok {
		t.Fatal("not a ToolSettler")
	}
	w, ok := td.(mcs.ToolDriverWrapper)
	if !ok {
		t.Fatal("not a ToolDriverWrapper")
	}

	before := v.ToolsVersion()
	inner.version.Add(1)
	if got := v.ToolsVersion(); got != before+1 {
		t.Errorf("ToolsVersion after the inner version rose = %d, want %d", got, before+1)
	}
	if err := s.SettleTools(ctx); err == nil || err.Error() != "the document is gone" {
		t.Errorf("SettleTools = %v, want the inner error", err)
	}
	if n := inner.settled.Load(); n != 1 {
		t.Errorf("inner SettleTools ran %d times, want 1", n)
	}
	if !w.Wraps(inner) {
		t.Error("Wraps(inner) = false")
	}
	if w.Wraps(&protocolDriver{}) {
		t.Error("Wraps(another driver) = true")
	}
}

// A BaseDriver over a driver without a version does not claim one, and has
// nothing to settle.
func TestBaseDriverOverAnUnversionedDriver(t *testing.T) {
	b := mcs.NewBaseDriver(&calcDriver{})
	if b.ToolsVersioned() {
		t.Error("ToolsVersioned = true over a driver without a version")
	}
	if _, ok := mcs.ToolsVersion(b); ok {
		t.Error("mcs.ToolsVersion reports a version over a driver without one")
	}
	if err := b.SettleTools(context.Background()); err != nil {
		t.Errorf("SettleTools = %v, want nil", err)
	}
	if !mcs.NewBaseDriver(&protocolDriver{}).ToolsVersioned() {
		t.Error("ToolsVersioned = false over a versioned driver")
	}
}

// hideFail hides the tool "fail" and refuses its calls.
type hideFail struct{}

func (hideFail) HidesTool(_ context.Context, info mcs.CallInfo) bool { return info.Tool.Name == "fail" }

func (hideFail) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	if name == "fail" {
		return "refused", nil
	}
	return next(ctx, name, args)
}

// A tool the wrapped driver's middleware hides is left out of the listing but
// is still the driver's: a BaseDriver around it owns its calls and hands them
// to the inner chain, which answers them, as an orchestrator does.
func TestBaseDriverOverAHidingDriver(t *testing.T) {
	ctx := context.Background()
	outer := mcs.NewBaseDriver(mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(hideFail{})))
	listed, err := outer.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range listed {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"add", "echo", "boom"}, names); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
	if has, err := outer.HasTool(ctx, "fail"); !has || err != nil {
		t.Errorf("HasTool(fail) = %t, %v; want true", has, err)
	}
	if def, ok, err := outer.ToolDefinition(ctx, "fail"); !ok || err != nil || def.Description != "Always fails." {
		t.Errorf("ToolDefinition(fail) = %+v, %t, %v", def, ok, err)
	}
	resp := outer.ProcessLLMResponse(ctx, `{"tool": "fail", "arguments": {}}`)
	if len(resp.Calls) != 1 || resp.Calls[0].Result != "refused" {
		t.Errorf("calls = %+v, want the inner middleware's answer", resp.Calls)
	}
}
