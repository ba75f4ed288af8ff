package rest

import (
	"context"

	"github.com/mcs-go/mcs"
)

// ToolDefinition returns a copy of the definition of the tool name, and whether
// the document defines it (after the filters), loading the document when needed;
// a load error is returned as by ListTools. It copies one tool, where ListTools
// copies every one, so a driver's middleware learns the called tool's definition
// ([mcs.CallInfo]) at a cost that does not grow with the size of the API.
//
// The definition always comes from the document, never from the tool-table
// cache: middleware decides on it (read-only annotations, parameter schemas), and
// the call it belongs to decodes the document anyway.
func (d *ToolDriver) ToolDefinition(ctx context.Context, name string) (mcs.Tool, bool, error) {
	s, err := d.loadOps(ctx)
	if err != nil {
		return mcs.Tool{}, false, err
	}
	if _, ok := s.ops[name]; !ok {
		return mcs.Tool{}, false, nil
	}
	if i, ok := s.position(name); ok {
		return s.tools[i].Clone(), true, nil
	}
	return mcs.Tool{}, false, nil
}

// SettleTools decodes the document when the listing came from the tool-table
// cache, so that listing and definitions are the document's: when the cache
// listed something else, ToolsVersion is raised. An orchestrator calls it before
// its middleware decides on a call ([mcs.ToolSettler]). A load error is
// returned as by ListTools.
func (d *ToolDriver) SettleTools(ctx context.Context) error {
	_, err := d.loadOps(ctx)
	return err
}
