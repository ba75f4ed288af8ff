package orchestrator

import (
	"context"
	"errors"
	"slices"

	"github.com/mcs-go/mcs"
)

var _ mcs.ToolDefiner = (*engine)(nil)

// ToolDefinition returns a copy of the exposed definition of name from the
// listing of the call, so that the orchestrator's middleware learns the called tool
// ([mcs.CallInfo]) without a copy of the whole listing per call.
//
// A listing may hold provisional tools (a REST driver's listing from its tool-table
// cache): before the first definition of a listing is handed to the middleware,
// every registered [mcs.ToolSettler] is settled, and when that changed the listing, the definition
// comes from the listing of the settled drivers.
func (e *engine) ToolDefinition(ctx context.Context, name string) (mcs.Tool, bool, error) {
	l, err := e.o.listingFor(ctx)
	if err != nil {
		return mcs.Tool{}, false, err
	}
	// A call resolved against this listing means its names are in use, exactly as
	// when it is handed out: a later listing retires the ones it drops.
	l.served.Store(true)
	if !l.settled.Load() {
		if e.o.settle(ctx, l.stamp.set) {
			fresh, err := e.o.current(ctx)
			if err != nil {
				return mcs.Tool{}, false, err
			}
			fresh.settled.Store(true)
			l = fresh
		}
		l.settled.Store(true)
	}
	if i, ok := l.pos[name]; ok {
		return l.tools[i].Clone(), true, nil
	}
	return mcs.Tool{}, false, nil
}

// settle settles every mcs.ToolSettler of set and reports whether that changed a version
// the orchestrator's listing depends on. A driver that fails to settle keeps its
// listing; its calls fail with the same error when they run.
func (o *Orchestrator) settle(ctx context.Context, set *driverSet) (changed bool) {
	if len(set.settlers) == 0 {
		return false
	}
	before := depVersions(set)
	_ = settleAll(ctx, set.settlers)
	return !slices.Equal(before, depVersions(set))
}

// SettleTools settles the registered drivers that implement [mcs.ToolSettler]
// (see there; an [mcs.BaseDriver] does, for the driver it wraps) and returns
// their errors joined.
func (o *Orchestrator) SettleTools(ctx context.Context) error {
	return settleAll(ctx, o.set.Load().settlers)
}

// settleAll settles every one of settlers and returns their errors joined.
func settleAll(ctx context.Context, settlers []mcs.ToolSettler) error {
	var errs []error
	for _, s := range settlers {
		if err := s.SettleTools(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
