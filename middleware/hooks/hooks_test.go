package hooks_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/hooks"
)

func TestCapability(t *testing.T) {
	if hooks.Capability != "hooks" {
		t.Errorf("Capability = %q, want %q", hooks.Capability, "hooks")
	}
}

// recordingHooks returns options that install two hooks of each kind recording
// into rec.
func recordingHooks(rec *recorder) []hooks.Option {
	var opts []hooks.Option
	for _, n := range []string{"1", "2"} {
		opts = append(opts,
			hooks.WithPre(func(_ context.Context, name string, _ map[string]any) { rec.add("pre%s %s", n, name) }),
			hooks.WithPost(func(_ context.Context, name string, _ map[string]any, res any) {
				rec.add("post%s %s %v", n, name, res)
			}),
			hooks.WithFailure(func(_ context.Context, name string, _ map[string]any, err error) {
				rec.add("failure%s %s %v", n, name, err)
			}),
		)
	}
	return opts
}

func TestOrder(t *testing.T) {
	errTool := errors.New("boom")
	tests := []struct {
		name    string
		result  any
		err     error
		want    []string
		wantErr error
	}{
		{
			name:   "success runs pre, tool, post in order",
			result: "fine",
			want:   []string{"pre1 t", "pre2 t", "tool t", "post1 t fine", "post2 t fine"},
		},
		{
			name:    "failure runs pre, tool, failure in order",
			err:     errTool,
			want:    []string{"pre1 t", "pre2 t", "tool t", "failure1 t boom", "failure2 t boom"},
			wantErr: errTool,
		},
		{
			name:    "a result next to an error is returned unchanged",
			result:  "partial",
			err:     errTool,
			want:    []string{"pre1 t", "pre2 t", "tool t", "failure1 t boom", "failure2 t boom"},
			wantErr: errTool,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			m := hooks.New(recordingHooks(rec)...)
			call := mcs.Chain(terminal(rec, func(map[string]any) (any, error) { return tt.result, tt.err }), m)
			res, err := call(context.Background(), "t", map[string]any{})
			if err != tt.wantErr { // the very same error, not a wrapper
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if res != tt.result {
				t.Errorf("result = %v, want %v", res, tt.result)
			}
			if diff := cmp.Diff(tt.want, rec.get()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultUnchanged(t *testing.T) {
	result := map[string]any{"items": []any{"a", "b"}, "meta": map[string]any{"n": 2.0}}
	want := map[string]any{"items": []any{"a", "b"}, "meta": map[string]any{"n": 2.0}}
	var seen int
	mutate := func(_ context.Context, _ string, _ map[string]any, res any) {
		if diff := cmp.Diff(want, res); diff != "" {
			t.Errorf("post hook %d saw a changed result (-want +got):\n%s", seen, diff)
		}
		r := res.(map[string]any)
		r["items"].([]any)[0] = "changed"
		r["meta"].(map[string]any)["n"] = 99.0
		r["extra"] = true
		seen++
	}
	m := hooks.New(hooks.WithPost(mutate), hooks.WithPost(mutate))
	call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return result, nil }, m)
	got, err := call(context.Background(), "t", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(result).UnsafePointer() {
		t.Error("the caller did not get the very map the tool returned")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a post hook changed the result (-want +got):\n%s", diff)
	}
	if seen != 2 {
		t.Errorf("post hooks ran %d times, want 2", seen)
	}
}

func TestArgumentsAreCopies(t *testing.T) {
	newArgs := func() map[string]any {
		return map[string]any{
			"path":    "a.txt",
			"nested":  map[string]any{"deep": []any{"x", map[string]any{"k": "v"}}},
			"headers": map[string]string{"Accept": "text/plain"},
			"tags":    []string{"one", "two"},
			"raw":     []byte("bytes"),
			"array":   [2][]int{{1}, {2}},
		}
	}
	want := newArgs()
	mutate := func(args map[string]any) {
		args["path"] = "evil.txt"
		args["added"] = true
		nested := args["nested"].(map[string]any)
		deep := nested["deep"].([]any)
		deep[0] = "changed"
		deep[1].(map[string]any)["k"] = "changed"
		nested["more"] = 1
		args["headers"].(map[string]string)["Accept"] = "changed"
		args["tags"].([]string)[0] = "changed"
		args["raw"].([]byte)[0] = 'X'
		arr := args["array"].([2][]int)
		arr[0][0] = 99
	}
	// Every hook mutates what it got; every hook must still see the original.
	var mu sync.Mutex
	var seen []string
	observe := func(kind string, args map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff(want, args); diff != "" {
			t.Errorf("%s hook saw changed arguments (-want +got):\n%s", kind, diff)
		}
		seen = append(seen, kind)
		mutate(args)
	}
	toolRan := false
	m := hooks.New(
		hooks.WithPre(func(_ context.Context, _ string, args map[string]any) { observe("pre1", args) }),
		hooks.WithPre(func(_ context.Context, _ string, args map[string]any) { observe("pre2", args) }),
		hooks.WithPost(func(_ context.Context, _ string, args map[string]any, _ any) { observe("post1", args) }),
		hooks.WithPost(func(_ context.Context, _ string, args map[string]any, _ any) { observe("post2", args) }),
		hooks.WithFailure(func(_ context.Context, _ string, args map[string]any, _ error) { observe("failure1", args) }),
		hooks.WithFailure(func(_ context.Context, _ string, args map[string]any, _ error) { observe("failure2", args) }),
	)
	for _, fail := range []bool{false, true} {
		in := newArgs()
		call := mcs.Chain(func(_ context.Context, _ string, args map[string]any) (any, error) {
			if reflect.ValueOf(args).UnsafePointer() != reflect.ValueOf(in).UnsafePointer() {
				t.Error("the tool did not receive the caller's own map")
			}
			toolRan = true
			if diff := cmp.Diff(want, args); diff != "" {
				t.Errorf("a pre hook changed the tool's arguments (-want +got):\n%s", diff)
			}
			mutate(args) // post and failure hooks still see the arguments as received
			if fail {
				return nil, errFailed
			}
			return "ok", nil
		}, m)
		call(context.Background(), "t", in)
		if !toolRan {
			t.Fatal("tool did not run")
		}
	}
	wantSeen := []string{"pre1", "pre2", "post1", "post2", "pre1", "pre2", "failure1", "failure2"}
	if diff := cmp.Diff(wantSeen, seen); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
}

func TestNoHooksPassesThrough(t *testing.T) {
	var m hooks.Middleware // the zero value is ready to use
	args := map[string]any{"a": 1}
	call := mcs.Chain(func(_ context.Context, name string, got map[string]any) (any, error) {
		if reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(args).UnsafePointer() {
			t.Error("args were copied although no hook is installed")
		}
		return name, nil
	}, &m)
	res, err := call(context.Background(), "t", args)
	if res != "t" || err != nil {
		t.Errorf("call = %v, %v; want t, nil", res, err)
	}
	rec := &recorder{}
	remove := m.AddPre(func(_ context.Context, name string, _ map[string]any) { rec.add("pre %s", name) })
	call(context.Background(), "t", args)
	remove()
	call(context.Background(), "t", args)
	if diff := cmp.Diff([]string{"pre t"}, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestAddAndRemove(t *testing.T) {
	rec := &recorder{}
	m := hooks.New(hooks.WithPre(func(context.Context, string, map[string]any) { rec.add("pre0") }))
	call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return "ok", nil }, m)
	callFail := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return nil, errFailed }, m)
	ctx := context.Background()

	rmPre := m.AddPre(func(context.Context, string, map[string]any) { rec.add("pre1") })
	rmPost := m.AddPost(func(context.Context, string, map[string]any, any) { rec.add("post1") })
	rmFail := m.AddFailure(func(context.Context, string, map[string]any, error) { rec.add("failure1") })
	rmSet := m.AddSet(hooks.Set{
		Pre:  func(context.Context, string, map[string]any) { rec.add("setpre") },
		Post: func(context.Context, string, map[string]any, any) { rec.add("setpost") },
	})
	call(ctx, "t", nil)
	callFail(ctx, "t", nil)
	rmPre()
	rmPre() // idempotent
	rmSet()
	call(ctx, "t", nil)
	rmPost()
	rmFail()
	rmFail()
	callFail(ctx, "t", nil)
	// nil hooks and empty sets are ignored and give a harmless remove
	m.AddPre(nil)()
	m.AddPost(nil)()
	m.AddFailure(nil)()
	m.AddSet(hooks.Set{})()
	hooks.New(hooks.WithPre(nil), hooks.WithPost(nil), hooks.WithFailure(nil), nil)
	call(ctx, "t", nil)

	want := []string{
		"pre0", "pre1", "setpre", "post1", "setpost",
		"pre0", "pre1", "setpre", "failure1",
		"pre0", "post1",
		"pre0",
		"pre0",
	}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestHooksChangeHooksFromInside(t *testing.T) {
	rec := &recorder{}
	m := hooks.New()
	var removeSelf func()
	removeSelf = m.AddPre(func(context.Context, string, map[string]any) {
		rec.add("once")
		removeSelf() // removing itself inside a hook must not deadlock
		m.AddPost(func(context.Context, string, map[string]any, any) { rec.add("added post") })
	})
	m.AddPost(func(context.Context, string, map[string]any, any) {
		rec.add("post")
		removeSelf() // removing an already removed hook is harmless
	})
	call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return "ok", nil }, m)
	for range 2 {
		if _, err := call(context.Background(), "t", nil); err != nil {
			t.Fatal(err)
		}
	}
	// Changes take effect from the next call: the first call ran with its snapshot.
	want := []string{"once", "post", "post", "added post"}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestConcurrentCallsAndChanges(t *testing.T) {
	var mu sync.Mutex
	count := 0
	m := hooks.New(hooks.WithPost(func(context.Context, string, map[string]any, any) {
		mu.Lock()
		count++
		mu.Unlock()
	}))
	call := mcs.Chain(func(_ context.Context, _ string, args map[string]any) (any, error) { return args["n"], nil }, m)
	const callers, callsEach = 8, 50
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for j := range callsEach {
				res, err := call(context.Background(), "t", map[string]any{"n": i*callsEach + j})
				if err != nil || res != i*callsEach+j {
					t.Errorf("call = %v, %v", res, err)
				}
			}
		})
		wg.Go(func() {
			for range callsEach {
				rm := m.AddPre(func(_ context.Context, _ string, args map[string]any) { args["n"] = -1 })
				rm2 := m.AddFailure(func(context.Context, string, map[string]any, error) {})
				rm()
				rm2()
				rm()
			}
		})
	}
	wg.Wait()
	if count != callers*callsEach {
		t.Errorf("post hook ran %d times, want %d", count, callers*callsEach)
	}
}

func TestHookPanicsAreRecovered(t *testing.T) {
	rec := &recorder{}
	var panics []any
	var mu sync.Mutex
	m := hooks.New(
		hooks.WithPanicHandler(func(_ context.Context, name string, v any, stack []byte) {
			mu.Lock()
			defer mu.Unlock()
			if len(stack) == 0 {
				t.Error("panic handler got no stack")
			}
			panics = append(panics, v)
		}),
		hooks.WithPre(func(context.Context, string, map[string]any) { panic("pre") }),
		hooks.WithPre(func(context.Context, string, map[string]any) { rec.add("pre after panic") }),
		hooks.WithPost(func(context.Context, string, map[string]any, any) { panic("post") }),
		hooks.WithPost(func(context.Context, string, map[string]any, any) { rec.add("post after panic") }),
		hooks.WithFailure(func(context.Context, string, map[string]any, error) { panic("failure") }),
		hooks.WithFailure(func(context.Context, string, map[string]any, error) { rec.add("failure after panic") }),
	)
	ok := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return "ok", nil }, m)
	fail := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return nil, errFailed }, m)
	if res, err := ok(context.Background(), "t", nil); res != "ok" || err != nil {
		t.Errorf("call = %v, %v; want ok, nil", res, err)
	}
	if _, err := fail(context.Background(), "t", nil); err != errFailed {
		t.Errorf("err = %v, want %v", err, errFailed)
	}
	want := []string{"pre after panic", "post after panic", "pre after panic", "failure after panic"}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"pre", "post", "pre", "failure"}, panics); diff != "" {
		t.Errorf("panics (-want +got):\n%s", diff)
	}

	// A panicking panic handler is dropped as well.
	m2 := hooks.New(
		hooks.WithPanicHandler(func(context.Context, string, any, []byte) { panic("handler") }),
		hooks.WithPre(func(context.Context, string, map[string]any) { panic("pre") }),
	)
	if res, err := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return "ok", nil }, m2)(context.Background(), "t", nil); res != "ok" || err != nil {
		t.Errorf("call with panicking panic handler = %v, %v; want ok, nil", res, err)
	}
}

func TestToolPanicRunsFailureHooksAndContinues(t *testing.T) {
	var got error
	m := hooks.New(hooks.WithFailure(func(_ context.Context, _ string, _ map[string]any, err error) { got = err }))
	d := mcs.NewBaseDriver(&fakeDriver{exec: func(context.Context, string, map[string]any) (any, error) {
		panic("tool exploded")
	}}, mcs.WithMiddleware(m))
	_, err := d.ExecuteTool(context.Background(), "read_file", nil)
	var pe *mcs.PanicError
	if !errors.As(err, &pe) || pe.Value != "tool exploded" {
		t.Errorf("driver error = %v, want the tool's panic as *mcs.PanicError", err)
	} else if !strings.Contains(string(pe.Stack), "TestToolPanicRunsFailureHooksAndContinues.func") {
		// The hooks recover the panic only to read it and panic again: the
		// driver's stack still shows where the tool panicked.
		t.Errorf("the driver's stack lost the tool's frames:\n%s", pe.Stack)
	}
	var hpe *mcs.PanicError
	if !errors.As(got, &hpe) || hpe.Tool != "read_file" || hpe.Value != "tool exploded" || len(hpe.Stack) == 0 ||
		got.Error() != `tool "read_file" panicked: tool exploded` || mcs.CodeOf(nil, got) != mcs.CodePanic {
		t.Errorf("failure hook got %v, want the tool's panic as *mcs.PanicError", got)
	}
	if !errors.Is(got, hooks.ErrPanicked) {
		t.Errorf("failure hook got %v, want it to match the deprecated ErrPanicked for one release", got)
	}

	// Without a driver around it the panic continues unchanged.
	call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { panic("raw") }, m)
	func() {
		defer func() {
			if v := recover(); v != "raw" {
				t.Errorf("recovered %v, want the original panic value", v)
			}
		}()
		call(context.Background(), "t", nil)
		t.Error("call returned although the tool panicked")
	}()
}

func TestCallStart(t *testing.T) {
	if _, ok := hooks.CallStart(context.Background()); ok {
		t.Error("CallStart reported a start for a plain context")
	}
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		var preStart, postStart time.Time
		var duration time.Duration
		var sawValue any
		m := hooks.New(
			hooks.WithPre(func(ctx context.Context, _ string, _ map[string]any) {
				preStart, _ = hooks.CallStart(ctx)
				sawValue = ctx.Value(key{})
			}),
			hooks.WithPost(func(ctx context.Context, _ string, _ map[string]any, _ any) {
				var ok bool
				postStart, ok = hooks.CallStart(ctx)
				if !ok {
					t.Error("CallStart not available in a post hook")
				}
				duration = time.Since(postStart)
			}),
		)
		begin := time.Now()
		call := mcs.Chain(func(ctx context.Context, _ string, _ map[string]any) (any, error) {
			if _, ok := hooks.CallStart(ctx); ok {
				t.Error("the tool received the hooks' context")
			}
			time.Sleep(3 * time.Second) // simulated time inside the bubble
			return "ok", nil
		}, m)
		ctx := context.WithValue(context.Background(), key{}, "v")
		if _, err := call(ctx, "t", nil); err != nil {
			t.Fatal(err)
		}
		if !preStart.Equal(begin) || !postStart.Equal(begin) {
			t.Errorf("starts = %v, %v; want %v", preStart, postStart, begin)
		}
		if duration != 3*time.Second {
			t.Errorf("duration = %v, want 3s", duration)
		}
		if sawValue != "v" {
			t.Errorf("hook context lost the call's values: got %v", sawValue)
		}
	})
}

func TestThroughBaseDriver(t *testing.T) {
	rec := &recorder{}
	m := hooks.New(recordingHooks(rec)...)
	td := &fakeDriver{}
	d := mcs.NewBaseDriver(td, mcs.WithMiddleware(m))
	bare := mcs.NewBaseDriver(td)
	if diff := cmp.Diff(bare.Meta(), d.Meta()); diff != "" {
		t.Errorf("hooks changed the driver's meta (-bare +with hooks):\n%s", diff)
	}
	if d.Meta().HasCapability(hooks.Capability) {
		t.Error("meta advertises the hooks flag")
	}
	resp := d.ProcessLLMResponse(context.Background(),
		`{"tool":"read_file","arguments":{"path":"a.txt"}} {"tool":"fail","arguments":{}} {"tool":"unknown","arguments":{}}`)
	if !resp.CallExecuted || !resp.CallFailed || len(resp.Calls) != 2 {
		t.Fatalf("response = %+v, want one executed and one failed call", resp)
	}
	want := []string{
		"pre1 read_file", "pre2 read_file", "post1 read_file read_file done: a.txt", "post2 read_file read_file done: a.txt",
		"pre1 fail", "pre2 fail", "failure1 fail disk on fire", "failure2 fail disk on fire",
	}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
