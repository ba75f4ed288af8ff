package validate_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/validate"
)

// readFile is a typical tool: a required string, an integer with a bound and an
// enum, as the filesystem driver publishes read_file.
var readFile = mcs.Tool{
	Name:        "read_file",
	Description: "Read a file.",
	Parameters: []mcs.Parameter{
		{Name: "path", Required: true, Schema: map[string]any{"type": "string"}},
		{Name: "offset", Schema: map[string]any{"type": "integer", "minimum": 0}},
		{Name: "encoding", Schema: map[string]any{"type": "string", "enum": []any{"utf-8", "base64"}}},
	},
}

func benchCall(b *testing.B, v *validate.Middleware, tool mcs.Tool, args map[string]any, wantErr bool) {
	ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{Tool: tool})
	next := func(context.Context, string, map[string]any) (any, error) { return nil, nil }
	if _, err := v.OnExecuteTool(ctx, tool.Name, args, next); (err != nil) != wantErr {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v.OnExecuteTool(ctx, tool.Name, args, next)
	}
}

// BenchmarkValidateTypical is a valid call of a typical tool (three arguments).
func BenchmarkValidateTypical(b *testing.B) {
	benchCall(b, validate.New(), readFile, map[string]any{"path": "notes/todo.txt", "offset": 128.0, "encoding": "utf-8"}, false)
}

// BenchmarkValidateTypicalCoercion is the same call with WithCoercion, the offset
// sent as a string.
func BenchmarkValidateTypicalCoercion(b *testing.B) {
	benchCall(b, validate.New(validate.WithCoercion()), readFile, map[string]any{"path": "notes/todo.txt", "offset": "128", "encoding": "utf-8"}, false)
}

// BenchmarkValidateViolation is a call with two problems: the cost of the error.
func BenchmarkValidateViolation(b *testing.B) {
	benchCall(b, validate.New(), readFile, map[string]any{"path": "notes/todo.txt", "offset": "five", "colour": "red"}, true)
}

// BenchmarkValidateStripeLike is a valid call of a nested tool (oneOf, formats,
// an array of objects).
func BenchmarkValidateStripeLike(b *testing.B) {
	benchCall(b, validate.New(), stripeCharge, validCharge(), false)
}

// BenchmarkValidateNewMaps is a valid typical call whose definition arrives in new
// maps every time (a driver that copies its schemas per listing): the cache
// recognises it by content.
func BenchmarkValidateNewMaps(b *testing.B) {
	v := validate.New()
	args := map[string]any{"path": "notes/todo.txt", "offset": 128.0, "encoding": "utf-8"}
	next := func(context.Context, string, map[string]any) (any, error) { return nil, nil }
	b.ReportAllocs()
	for b.Loop() {
		tool := readFile
		tool.Parameters = append([]mcs.Parameter(nil), readFile.Parameters...)
		for i := range tool.Parameters {
			s := make(map[string]any, len(tool.Parameters[i].Schema))
			for k, x := range tool.Parameters[i].Schema {
				s[k] = x
			}
			tool.Parameters[i].Schema = s
		}
		ctx := mcs.ContextWithCallInfo(context.Background(), mcs.CallInfo{Tool: tool})
		if _, err := v.OnExecuteTool(ctx, tool.Name, args, next); err != nil {
			b.Fatal(err)
		}
	}
}
