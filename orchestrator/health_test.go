package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/orchestrator"
)

func TestHealthcheck(t *testing.T) {
	h := func(name string, check func(context.Context) mcs.HealthResult) mcs.ToolDriver {
		return healthy{newFake(name, "t"), check}
	}
	many := []any{}
	for i := range 12 {
		l := fmt.Sprintf("d%02d", i)
		many = append(many, l, h(l, status(mcs.HealthError, "")))
	}
	tests := []struct {
		name    string
		drivers []any
		want    mcs.HealthResult
	}{
		{
			name: "no drivers",
			want: mcs.HealthResult{Status: mcs.HealthOK, Detail: "no registered driver reports its health"},
		},
		{
			name:    "drivers without healthcheck",
			drivers: []any{"a", newFake("a", "t")},
			want:    mcs.HealthResult{Status: mcs.HealthOK, Detail: "no registered driver reports its health"},
		},
		{
			name:    "all OK",
			drivers: []any{"a", h("a", status(mcs.HealthOK, "fine")), "b", h("b", status(mcs.HealthOK, ""))},
			want:    mcs.HealthResult{Status: mcs.HealthOK, Detail: "a: fine; b"},
		},
		{
			name:    "unknown beats OK",
			drivers: []any{"a", h("a", status(mcs.HealthOK, "")), "b", h("b", status(mcs.HealthUnknown, "no data"))},
			want:    mcs.HealthResult{Status: mcs.HealthUnknown, Detail: "b: no data"},
		},
		{
			name:    "warning beats unknown",
			drivers: []any{"a", h("a", status(mcs.HealthUnknown, "")), "b", h("b", status(mcs.HealthWarning, "slow"))},
			want:    mcs.HealthResult{Status: mcs.HealthWarning, Detail: "b: slow"},
		},
		{
			name: "error beats warning and names every worst driver",
			drivers: []any{
				"a", h("a", status(mcs.HealthError, "down")), "b", h("b", status(mcs.HealthWarning, "slow")),
				"c", h("c", status(mcs.HealthError, "gone")),
			},
			want: mcs.HealthResult{Status: mcs.HealthError, Detail: "a: down; c: gone"},
		},
		{
			name:    "unknown status counts as UNKNOWN",
			drivers: []any{"a", h("a", status(mcs.HealthOK, "")), "b", h("b", status("GREEN", "odd"))},
			want:    mcs.HealthResult{Status: mcs.HealthUnknown, Detail: `b: unknown status "GREEN": odd`},
		},
		{
			name: "panic counts as ERROR",
			drivers: []any{"a", h("a", status(mcs.HealthWarning, "")), "p", h("p", func(context.Context) mcs.HealthResult {
				panic("nil map")
			})},
			want: mcs.HealthResult{Status: mcs.HealthError, Detail: "p: healthcheck panicked: nil map"},
		},
		{
			name:    "more than ten worst drivers",
			drivers: many,
			want:    mcs.HealthResult{Status: mcs.HealthError, Detail: "d00; d01; d02; d03; d04; d05; d06; d07; d08; d09; and 2 more"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := build(t, nil, tt.drivers...)
			if diff := cmp.Diff(tt.want, o.Healthcheck(context.Background())); diff != "" {
				t.Errorf("Healthcheck (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHealthcheckThatExceedsTheContext(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(release) })
	stuck := healthy{newFake("stuck", "t"), func(context.Context) mcs.HealthResult {
		close(started)
		<-release // ignores its context
		return mcs.HealthResult{Status: mcs.HealthOK}
	}}
	o := build(t, nil, "plain", newFake("plain", "u"), "stuck", stuck)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	want := mcs.HealthResult{Status: mcs.HealthError, Detail: "stuck: healthcheck did not answer in time: context canceled"}
	if diff := cmp.Diff(want, o.Healthcheck(ctx)); diff != "" {
		t.Errorf("Healthcheck (-want +got):\n%s", diff)
	}
}

func TestHealthcheckCascadesThroughNestedOrchestrators(t *testing.T) {
	inner := build(t, nil, "db", healthy{newFake("db", "q"), status(mcs.HealthError, "disk full")}, "cache", newFake("cache", "get"))
	outer := build(t, nil, "inner", inner, "web", healthy{newFake("web", "get"), status(mcs.HealthWarning, "slow")})
	want := mcs.HealthResult{Status: mcs.HealthError, Detail: "inner: db: disk full"}
	if diff := cmp.Diff(want, outer.Healthcheck(context.Background())); diff != "" {
		t.Errorf("Healthcheck (-want +got):\n%s", diff)
	}
	if !outer.Meta().HasCapability(mcs.CapabilityHealthcheck) {
		t.Error("the orchestrator does not advertise its healthcheck")
	}
	var _ mcs.SupportsHealthcheck = orchestrator.New(nil)
}

func TestHealthcheckSlowerThanTheDeadlineIsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		slow := healthy{newFake("slow", "t"), func(context.Context) mcs.HealthResult {
			<-release // ignores its context
			return mcs.HealthResult{Status: mcs.HealthOK}
		}}
		fast := healthy{newFake("fast", "u"), status(mcs.HealthWarning, "almost full")}
		o := build(t, nil, "fast", fast, "slow", slow)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		got := o.Healthcheck(ctx)
		want := mcs.HealthResult{Status: mcs.HealthError, Detail: "slow: healthcheck did not answer in time: " + context.DeadlineExceeded.Error()}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Healthcheck (-want +got):\n%s", diff)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("Healthcheck returned after %v, want at the deadline", d)
		}
		close(release)
	})
}

func TestHealthcheckNamesTheLabelThatCannotList(t *testing.T) {
	ok := healthy{newFake("ok", "t"), status(mcs.HealthOK, "")}
	flaky := &fake{name: "flaky"}
	flaky.setTools("u")
	o := build(t, nil, "ok", ok, "flaky", flaky)
	flaky.setListErr(errors.New("spec unreachable"))
	o.Refresh()
	want := mcs.HealthResult{Status: mcs.HealthError, Detail: "flaky: cannot list its tools: spec unreachable"}
	if diff := cmp.Diff(want, o.Healthcheck(context.Background())); diff != "" {
		t.Errorf("Healthcheck (-want +got):\n%s", diff)
	}
	// The others keep serving.
	if diff := cmp.Diff([]string{"ok:t"}, results(process(t, o, "ok__t"))); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}
