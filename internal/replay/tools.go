package replay

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcs-go/mcs"
)

// Weather is a ToolDriver with two tools, get_weather (city) and get_time (zone),
// for tests of the client loop. It keeps the arguments of every call. Safe for
// concurrent use.
type Weather struct {
	mu    sync.Mutex
	calls []string
}

var _ mcs.ToolDriver = (*Weather)(nil)

// Meta implements mcs.ToolDriver.
func (*Weather) Meta() mcs.Meta { return mcs.Meta{ID: "weather", Name: "Weather", Version: "1"} }

// ListTools implements mcs.ToolDriver.
func (*Weather) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "get_weather", Description: "Current weather of a city.", Parameters: []mcs.Parameter{
			{Name: "city", Description: "City name", Required: true, Schema: map[string]any{"type": "string", "minLength": 1}}}},
		{Name: "get_time", Description: "Current time in a zone.", Parameters: []mcs.Parameter{
			{Name: "zone", Required: true, Schema: map[string]any{"type": "string", "enum": []any{"UTC", "CET"}}}}},
	}, nil
}

// ExecuteTool implements mcs.ToolDriver.
func (w *Weather) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	w.mu.Lock()
	w.calls = append(w.calls, fmt.Sprintf("%s %v", name, args))
	w.mu.Unlock()
	switch name {
	case "get_weather":
		city, ok := args["city"].(string)
		if !ok {
			return nil, fmt.Errorf("city must be a string")
		}
		return "sunny in " + city, nil
	case "get_time":
		return "12:00 " + fmt.Sprint(args["zone"]), nil
	}
	return nil, fmt.Errorf("%w: %s", mcs.ErrUnknownTool, name)
}

// Calls returns "name map[args]" of every call, in order.
func (w *Weather) Calls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

// Driver returns a BaseDriver over w that accepts native tools for every model.
func (w *Weather) Driver(opts ...mcs.Option) *mcs.BaseDriver {
	return mcs.NewBaseDriver(w, append([]mcs.Option{mcs.WithNativeTools(func(string) bool { return true })}, opts...)...)
}
