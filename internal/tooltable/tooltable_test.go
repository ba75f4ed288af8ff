package tooltable_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/tooltable"
)

// counter is a stand-in driver: its tools record what they were called with. It
// is used by one goroutine.
type counter struct {
	calls []string
}

var errBoom = errors.New("boom")

func newTable() *tooltable.Table[*counter] {
	var t tooltable.Table[*counter]
	t.Add(mcs.Tool{Name: "echo", Title: "Echo", Parameters: []mcs.Parameter{
		{Name: "text", Required: true},
		{Name: "times", Schema: map[string]any{"type": "integer", "minimum": 1}},
	}}, func(c *counter, _ context.Context, args map[string]any) (any, error) {
		text := tooltable.String(args, "text", "")
		c.calls = append(c.calls, text)
		return strings.Repeat(text, int(tooltable.Int(args, "times", 1))), nil
	})
	t.Add(mcs.Tool{Name: "fail", Title: "Fail"}, func(*counter, context.Context, map[string]any) (any, error) {
		return "ignored", errBoom
	})
	t.Add(mcs.Tool{Name: "wait", Title: "Wait"}, func(_ *counter, ctx context.Context, _ map[string]any) (any, error) {
		return nil, ctx.Err()
	})
	return &t
}

func TestTableListing(t *testing.T) {
	tab := newTable()
	var names []string
	for _, tool := range tab.Tools() {
		names = append(names, tool.Name)
	}
	want := []string{"echo", "fail", "wait"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tab.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	for _, name := range want {
		if !tab.Has(name) {
			t.Errorf("Has(%q) = false", name)
		}
	}
	if tab.Has("nope") || tab.Has("") {
		t.Error("Has reports a tool that was not added")
	}

	// Tools returns a copy.
	tools := tab.Tools()
	tools[0].Name = "changed"
	if got := tab.Tools()[0].Name; got != "echo" {
		t.Errorf("changing the slice from Tools changed the table: %q", got)
	}

	var empty tooltable.Table[*counter]
	if got := empty.Tools(); got == nil || len(got) != 0 {
		t.Errorf("Tools of an empty table = %#v, want an empty slice", got)
	}
	if empty.Has("echo") {
		t.Error("an empty table has a tool")
	}
}

func TestTableAddTwicePanics(t *testing.T) {
	tab := newTable()
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "tool echo added twice") {
			t.Errorf("panic %q, want one naming the tool", msg)
		}
	}()
	tab.Add(mcs.Tool{Name: "echo", Title: "Echo"}, nil)
}

func TestTableExecute(t *testing.T) {
	canceled, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("user left")
	cancel(cause)
	tests := []struct {
		name    string
		ctx     context.Context
		tool    string
		args    map[string]any
		want    any
		wantErr string
		is      error
		as      bool // the error is an *mcs.ArgumentsError
		calls   []string
	}{
		{name: "runs", tool: "echo", args: map[string]any{"text": "ab", "times": "3"}, want: "ababab", calls: []string{"ab"}},
		{name: "default", tool: "echo", args: map[string]any{"text": "x", "times": nil}, want: "x", calls: []string{"x"}},
		{name: "unknown tool", tool: "rm", args: nil, wantErr: `unknown tool "rm"; the tools are: echo, fail, wait`, is: mcs.ErrUnknownTool},
		{name: "bad arguments", tool: "echo", args: map[string]any{"text": "x", "times": 0.0}, wantErr: `invalid arguments for "echo": argument "times" must be at least 1, got 0`, as: true},
		{name: "unknown argument", tool: "echo", args: map[string]any{"txt": "x"}, wantErr: `invalid arguments for "echo": unknown argument "txt"; the parameters of echo are: text (string, required), times (integer)`, as: true},
		{name: "tool error", tool: "fail", wantErr: "fail: boom", is: errBoom},
		{name: "done context", ctx: canceled, tool: "echo", args: map[string]any{"text": "x"}, wantErr: "echo: user left", is: cause},
		{name: "unknown before done context", ctx: canceled, tool: "rm", wantErr: `unknown tool "rm"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			c := &counter{}
			got, err := newTable().Execute(ctx, c, tc.tool, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Errorf("Execute error = %v, want it to begin with %q", err, tc.wantErr)
				}
				if _, ok := errors.AsType[*mcs.ArgumentsError](err); ok != tc.as {
					t.Errorf("Execute error = %v: *mcs.ArgumentsError %v, want %v", err, ok, tc.as)
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("Execute error = %v does not wrap %v", err, tc.is)
				}
				if got != nil {
					t.Errorf("Execute returned %v with an error", got)
				}
			} else if err != nil || got != tc.want {
				t.Errorf("Execute = %v, %v; want %v", got, err, tc.want)
			}
			if diff := cmp.Diff(tc.calls, c.calls); diff != "" {
				t.Errorf("calls of the tool (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTableConcurrentExecute runs one table for many drivers at once: each call
// reaches the driver it was made for.
func TestTableConcurrentExecute(t *testing.T) {
	tab := newTable()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			c := &counter{}
			text := strconv.Itoa(i)
			if got, err := tab.Execute(context.Background(), c, "echo", map[string]any{"text": text}); err != nil || got != text {
				t.Errorf("echo %s = %v, %v", text, got, err)
			}
			if diff := cmp.Diff([]string{text}, c.calls); diff != "" {
				t.Errorf("calls of driver %d (-want +got):\n%s", i, diff)
			}
			if !tab.Has("echo") || len(tab.Tools()) != 3 {
				t.Error("the table changed while it was read")
			}
		})
	}
	wg.Wait()
}

// BenchmarkExecute measures the overhead of the table around a trivial tool:
// lookup, argument checks and error wrapping.
func BenchmarkExecute(b *testing.B) {
	tab := newTable()
	c := &counter{}
	args := map[string]any{"text": "x", "times": 2.0}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.calls = c.calls[:0]
		if _, err := tab.Execute(ctx, c, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}
