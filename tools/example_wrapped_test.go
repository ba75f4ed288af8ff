package tools_test

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

// A table wrapped in a BaseDriver, for middleware of its own, still tells its
// holders when it grows: the BaseDriver forwards the listing protocol.
func ExampleTable_wrapped() {
	type Note struct {
		Title string `json:"title"`
	}
	read := func(_ context.Context, in Note) (string, error) { return "the note " + in.Title, nil }
	ctx := context.Background()

	t := tools.New(mcs.Meta{ID: "example/notes", Name: "Notes", Version: "1.0.0"})
	tools.Add(t, "read_note", "Returns a note.", read)
	logged := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		fmt.Println("calling", name)
		return next(ctx, name, args)
	})
	d := mcs.NewBaseDriver(t, mcs.WithMiddleware(logged))

	before, versioned := mcs.ToolsVersion(d)
	tools.Add(t, "summarise_note", "Summarises a note.", read)
	after, _ := mcs.ToolsVersion(d)
	has, _ := mcs.HasTool(ctx, d, "summarise_note")
	fmt.Println(versioned, after > before, has)

	resp := d.ProcessLLMResponse(ctx, `{"tool": "summarise_note", "arguments": {"title": "a"}}`)
	fmt.Println(resp.Calls[0].Result)
	// Output:
	// true true true
	// calling summarise_note
	// the note a
}
