package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/orchestrator"
	"github.com/mcs-go/mcs/runner"
)

var always = mcs.WithNativeTools(func(string) bool { return true })

// WithNativeTools(true) on a BaseDriver (or an orchestrator) built without
// mcs.WithNativeTools sends the tools natively, with the system message and the
// tool objects the driver gives when built with it.
func TestNativeToolsWithoutDriverOption(t *testing.T) {
	search := func(opts ...mcs.Option) mcs.Driver {
		o := orchestrator.New(orchestrator.Pipeline(orchestrator.Namespacing(), orchestrator.ToolSearch(5)), opts...)
		if err := o.AddDriver("w", &replay.Weather{}); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, tc := range []struct {
		name  string
		build func(opts ...mcs.Option) mcs.Driver
	}{
		{"base driver", func(opts ...mcs.Option) mcs.Driver { return mcs.NewBaseDriver(&replay.Weather{}, opts...) }},
		{"own system message", func(opts ...mcs.Option) mcs.Driver {
			return mcs.NewBaseDriver(&replay.Weather{}, append(opts, mcs.WithSystemMessage("Be brief."))...)
		}},
		{"orchestrator with instructions", search},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := tc.build(always).(mcs.SupportsNativeTools).NativeToolContext(context.Background(), "m")
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Tools) == 0 {
				t.Fatal("the twin built with mcs.WithNativeTools has no tools")
			}
			m := &script{name: "m", replies: []map[string]any{answer("ok")}}
			if _, err := runner.New(tc.build(), m, runner.WithNativeTools(true)).Run(context.Background(), nil, "hi"); err != nil {
				t.Fatal(err)
			}
			got := mcs.NativeToolContext{SystemMessage: m.reqs[0].System, Tools: m.reqs[0].Tools}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("native request (-want +got):\n%s", diff)
			}
		})
	}
}

// A native call of such a driver runs, and its result goes back as a tool message.
func TestNativeToolsWithoutDriverOptionRunCalls(t *testing.T) {
	w := &replay.Weather{}
	m := &script{name: "m", replies: []map[string]any{call("c1", "get_weather", `{"city":"Rome"}`), answer("sunny")}}
	res, err := runner.New(mcs.NewBaseDriver(w), m, runner.WithNativeTools(true)).Run(context.Background(), nil, "weather?")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"get_weather map[city:Rome]"}, w.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if res.History[2]["role"] != "tool" || res.History[2]["tool_call_id"] != "c1" {
		t.Errorf("the result is not a tool message: %v", res.History[2])
	}
}

// A driver that says no for the model, or cannot say, makes Run fail loudly
// rather than fall back to the text protocol.
func TestNativeToolsRefusedFailsLoudly(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    mcs.Driver
		want string
	}{
		{"predicate refuses the model", mcs.NewBaseDriver(&replay.Weather{}, mcs.WithNativeTools(func(m string) bool { return m == "gpt-4o" })),
			"mcs.WithNativeTools"},
		{"no native contract", struct{ mcs.Driver }{mcs.NewBaseDriver(&replay.Weather{})}, "mcs.SupportsNativeTools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &script{name: "llama3.2", replies: []map[string]any{answer("ok")}}
			res, err := runner.New(tc.d, m, runner.WithNativeTools(true)).Run(context.Background(), nil, "hi")
			if !errors.Is(err, runner.ErrNoNativeTools) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "llama3.2") {
				t.Fatalf("err = %v, want ErrNoNativeTools naming %q and the model", err, tc.want)
			}
			if len(m.reqs) != 0 || res.Rounds != 0 {
				t.Errorf("%d requests were made in the text protocol", len(m.reqs))
			}
		})
	}
}
