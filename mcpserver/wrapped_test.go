package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type wrappedIn struct {
	Name string `json:"name"`
}

// A tool table wrapped in a BaseDriver for its own middleware is served with
// its version: a tool added to it reaches connected clients as list_changed.
func TestListChangedWhenAWrappedTableGrows(t *testing.T) {
	hello := func(_ context.Context, in wrappedIn) (string, error) { return "hello " + in.Name, nil }
	table := tools.New(mcs.Meta{ID: "test/table", Name: "Table", Version: "1.0.0"})
	tools.Add(table, "hello", "Greets.", hello)
	var seen []string
	mw := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		seen = append(seen, name)
		return next(ctx, name, args)
	})
	changed := make(chan struct{}, 10)
	cs := connect(t, New(mcs.NewBaseDriver(table, mcs.WithMiddleware(mw)), WithPollInterval(time.Millisecond)), &mcpsdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if diff := cmp.Diff([]string{"hello"}, names(t, cs)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	tools.Add(table, "hello_again", "Greets again.", hello)
	select {
	case <-changed:
	case <-testCtx(t).Done():
		t.Fatal("no tools/list_changed after tools.Add")
	}
	if diff := cmp.Diff([]string{"hello", "hello_again"}, names(t, cs)); diff != "" {
		t.Errorf("tools after tools.Add (-want +got):\n%s", diff)
	}
	res, err := cs.CallTool(testCtx(t), &mcpsdk.CallToolParams{Name: "hello_again", Arguments: map[string]any{"name": "a"}})
	if err != nil || callText(t, res) != "hello a" {
		t.Errorf("hello_again = %v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"hello_again"}, seen); diff != "" {
		t.Errorf("the wrapper's middleware saw (-want +got):\n%s", diff)
	}
}

// A driver without a version is not watched, wrapped or not.
func TestUnversionedDriverIsNotWatched(t *testing.T) {
	for _, d := range []mcs.ToolDriver{&fake{}, mcs.NewBaseDriver(&fake{})} {
		if s := New(d); s.v != nil {
			t.Errorf("%T: the server watches a driver without a version", d)
		}
	}
}
