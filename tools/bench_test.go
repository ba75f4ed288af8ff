package tools_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

type benchIn struct {
	Title string `json:"title"`
	Count int    `json:"count"`
	Draft bool   `json:"draft,omitempty"`
}

// handWritten is the ToolDriver a user writes without the package: a name switch
// and type assertions on the arguments.
type handWritten struct{}

func (handWritten) Meta() mcs.Meta { return mcs.Meta{ID: "bench"} }
func (handWritten) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "create", Description: "Creates."}}, nil
}
func (handWritten) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	switch name {
	case "create":
		title, ok := args["title"].(string)
		if !ok {
			return nil, errors.New("title must be a string")
		}
		count, ok := args["count"].(float64)
		if !ok || count != float64(int(count)) {
			return nil, errors.New("count must be an integer")
		}
		draft, _ := args["draft"].(bool)
		return create(benchIn{Title: title, Count: int(count), Draft: draft}), nil
	}
	return nil, errors.New("unknown tool " + name)
}

//go:noinline
func create(in benchIn) int { return len(in.Title) + in.Count }

var benchArgs = map[string]any{"title": "a new issue", "count": 3.0, "draft": true}

// BenchmarkCall compares one call through a typed tool with the same call through a
// hand-written ExecuteTool.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	b.Run("typed", func(b *testing.B) {
		t := tools.New(mcs.Meta{ID: "bench"})
		tools.Add(t, "create", "Creates.", func(_ context.Context, in benchIn) (int, error) { return create(in), nil })
		b.ReportAllocs()
		for b.Loop() {
			if _, err := t.ExecuteTool(ctx, "create", benchArgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand-written", func(b *testing.B) {
		var h handWritten
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.ExecuteTool(ctx, "create", benchArgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
