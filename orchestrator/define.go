package orchestrator

import (
	"context"

	"github.com/mcs-go/mcs"
)

var _ mcs.ToolDefiner = (*engine)(nil)

// ToolDefinition returns a copy of the exposed definition of name from the
// listing of the call, so that the orchestrator's middleware learns the called tool
// ([mcs.CallInfo]) without a copy of the whole listing per call.
func (e *engine) ToolDefinition(ctx context.Context, name string) (mcs.Tool, bool, error) {
	l, err := e.o.listingFor(ctx)
	if err != nil {
		return mcs.Tool{}, false, err
	}
	// A call resolved against this listing means its names are in use, exactly as
	// when it is handed out: a later listing retires the ones it drops.
	l.served.Store(true)
	if i, ok := l.pos[name]; ok {
		return l.tools[i].Clone(), true, nil
	}
	return mcs.Tool{}, false, nil
}
