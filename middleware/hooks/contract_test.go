package hooks_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/concerntest"
	"github.com/mcs-go/mcs/middleware/hooks"
)

// hookDriver builds the hooks concern in, without the middleware: it runs its
// hooks around the tools of a fakeDriver.
type hookDriver struct {
	fakeDriver
	mu      sync.Mutex
	next    int
	pre     map[int]hooks.PreHook
	post    map[int]hooks.PostHook
	failure map[int]hooks.FailureHook
}

func (d *hookDriver) Meta() mcs.Meta {
	return mcs.Meta{ID: "test/hooks", Name: "Hooks", Version: "1.0.0",
		Capabilities: []mcs.Capability{hooks.Capability}}
}

// add installs h in the map *m under a new key, in installation order, and returns
// the function that removes it.
func add[H any](d *hookDriver, m *map[int]H, h H) (remove func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if *m == nil {
		*m = map[int]H{}
	}
	d.next++
	k := d.next
	(*m)[k] = h
	return func() {
		d.mu.Lock()
		delete(*m, k)
		d.mu.Unlock()
	}
}

// ordered returns the hooks of m in installation order.
func ordered[H any](d *hookDriver, m map[int]H) []H {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []H
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func (d *hookDriver) AddPre(f hooks.PreHook) func()         { return add(d, &d.pre, f) }
func (d *hookDriver) AddPost(f hooks.PostHook) func()       { return add(d, &d.post, f) }
func (d *hookDriver) AddFailure(f hooks.FailureHook) func() { return add(d, &d.failure, f) }

func (d *hookDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	for _, f := range ordered(d, d.pre) {
		f(ctx, name, mcs.CloneArgs(args))
	}
	res, err := d.fakeDriver.ExecuteTool(ctx, name, args)
	if err != nil {
		for _, f := range ordered(d, d.failure) {
			f(ctx, name, mcs.CloneArgs(args), err)
		}
		return nil, err
	}
	for _, f := range ordered(d, d.post) {
		f(ctx, name, mcs.CloneArgs(args), res)
	}
	return res, nil
}

func TestSupportsHooks(t *testing.T) {
	concerntest.Check[hooks.SupportsHooks](t, hooks.Capability, hooks.New(), &hookDriver{})
}

// TestSupportsHooksBehaviour drives the middleware and a driver that builds the
// concern in through the contract alone: hooks run in installation order around
// each call, and a removed hook no longer runs.
func TestSupportsHooksBehaviour(t *testing.T) {
	impls := []struct {
		name string
		new  func() (hooks.SupportsHooks, mcs.ToolDriver)
	}{
		{"middleware", func() (hooks.SupportsHooks, mcs.ToolDriver) {
			mw := hooks.New()
			return mw, mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(mw))
		}},
		{"built in", func() (hooks.SupportsHooks, mcs.ToolDriver) {
			d := &hookDriver{}
			return d, d
		}},
	}
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			h, d := im.new()
			rec := &recorder{}
			var removes []func()
			for _, tag := range []string{"1", "2"} {
				removes = append(removes,
					h.AddPre(func(_ context.Context, name string, _ map[string]any) { rec.add("pre%s %s", tag, name) }),
					h.AddPost(func(_ context.Context, name string, _ map[string]any, _ any) { rec.add("post%s %s", tag, name) }),
					h.AddFailure(func(_ context.Context, name string, _ map[string]any, err error) {
						rec.add("failure%s %s: %v", tag, name, err)
					}))
			}
			ctx := t.Context()
			d.ExecuteTool(ctx, "read_file", map[string]any{"path": "a"})
			d.ExecuteTool(ctx, "fail", nil)
			for _, remove := range removes[:3] { // the hooks tagged 1
				remove()
			}
			d.ExecuteTool(ctx, "read_file", map[string]any{"path": "a"})
			want := []string{
				"pre1 read_file", "pre2 read_file", "post1 read_file", "post2 read_file",
				"pre1 fail", "pre2 fail", "failure1 fail: disk on fire", "failure2 fail: disk on fire",
				"pre2 read_file", "post2 read_file",
			}
			if diff := cmp.Diff(want, rec.get()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
