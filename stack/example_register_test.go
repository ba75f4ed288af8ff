package stack_test

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/stack"
)

// clock is a tiny tool driver for the example of a new driver type.
type clock struct{ zone string }

func (c clock) Meta() mcs.Meta { return mcs.Meta{ID: "example/clock", Name: "Clock", Version: "1"} }

func (c clock) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "zone", Description: "The configured time zone."}}, nil
}

func (c clock) ExecuteTool(context.Context, string, map[string]any) (any, error) { return c.zone, nil }

type clockConfig struct{ zone string }

func (c clockConfig) ToolDriver(context.Context, *stack.Builder) (mcs.ToolDriver, error) {
	return clock(c), nil
}

func (c clockConfig) Driver(_ context.Context, _ *stack.Builder, opts ...mcs.Option) (mcs.Driver, error) {
	return mcs.NewBaseDriver(clock(c), opts...), nil
}

// A new driver type is one registration, in an init function: it decodes its
// own table, with positioned errors for free, and builds its driver.
func init() {
	stack.RegisterDriverType(stack.DriverType{
		Name:    "clock",
		Summary: "the time zone (zone)",
		Decode: func(t *stack.Table, label string) stack.DriverConfig {
			zone := t.String("zone")
			if zone == "" {
				t.Errorf("zone", "is required; add zone = \"Europe/Berlin\"")
			}
			return clockConfig{zone: zone}
		},
	})
}

func ExampleRegisterDriverType() {
	_, err := stack.Parse("mcs.toml", []byte("[[driver]]\nlabel = \"time\"\ntype = \"clock\"\nzone = 1\n"))
	fmt.Println(err)

	s, _ := stack.Parse("mcs.toml", []byte("[[driver]]\nlabel = \"time\"\ntype = \"clock\"\nzone = \"UTC\"\n"))
	d, _ := s.Build(context.Background())
	res, _ := d.(mcs.ToolDriver).ExecuteTool(context.Background(), "zone", nil)
	fmt.Println(res)
	// Output:
	// mcs.toml:4: [[driver]] "time", key "zone": must be a string, such as zone = "..." (got an integer)
	// mcs.toml:4: [[driver]] "time", key "zone": is required; add zone = "Europe/Berlin"
	// UTC
}
