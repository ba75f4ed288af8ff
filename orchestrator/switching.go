package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/mcs-go/mcs"
)

// Switching is the Layer that exposes only the tools of one driver, the active
// target, and executes calls only against it. The operator chooses the target with
// SetActive; with exactly one driver registered, that driver is active implicitly.
// With several drivers and no registered active one, nothing is listed and calls fail
// with an error that says what to do.
//
// Names shared by several drivers are no conflict under Switching, since only one
// driver is exposed at a time; registration checks still apply the name rule to
// every driver's tools. Create it with [ToolSwitching]. A Switching is safe for
// concurrent use and SetActive may run while calls run, but the target is not
// pinned per call: a call already under way keeps its driver set and goes to the
// target active when it reaches the layer (a name the new target lacks fails with
// [mcs.ErrUnknownTool]). Switch between conversation turns. It belongs to one pipeline.
type Switching struct {
	active  atomic.Pointer[string]
	version atomic.Uint64
	labels  memo[map[string]int]
}

var (
	_ Layer              = (*Switching)(nil)
	_ mcs.VersionedTools = (*Switching)(nil)
	_ windowLayer        = (*Switching)(nil)
)

// ToolSwitching returns a Switching with no active target.
func ToolSwitching() *Switching { return &Switching{} }

// SetActive makes the driver registered under label the active target; "" clears
// the choice. A label that is not registered (yet) is accepted: until a driver is
// registered under it, nothing is listed (unless exactly one driver is registered).
// It returns an error wrapping [ErrInvalidLabel] when label is not a valid label. The
// orchestrator lists the new target's tools from its next call on.
func (s *Switching) SetActive(label string) error {
	if label != "" {
		if err := checkLabel(label); err != nil {
			return err
		}
	}
	s.active.Store(&label)
	s.version.Add(1)
	return nil
}

// Active returns the label set with SetActive, "" when none.
func (s *Switching) Active() string {
	if p := s.active.Load(); p != nil {
		return *p
	}
	return ""
}

// ToolsVersion increases with every SetActive.
func (s *Switching) ToolsVersion() uint64 { return s.version.Load() }

// target returns the one-driver slice of the active target, or an error saying why
// there is none.
func (s *Switching) target(drivers []Entry) ([]Entry, error) {
	a := s.Active()
	if a != "" {
		if i, ok := labelIndex(&s.labels, drivers)[a]; ok {
			return drivers[i : i+1], nil
		}
	}
	if len(drivers) == 1 {
		return drivers, nil
	}
	switch {
	case len(drivers) == 0:
		return nil, errors.New("no driver is registered")
	case a == "":
		return nil, errors.New("no driver is active: choose one with SetActive")
	default:
		return nil, fmt.Errorf("the active driver %q is not registered: register it or choose another with SetActive", a)
	}
}

// ListTools lists the active target's tools through inner; nothing when no driver is
// active.
func (s *Switching) ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	t, err := s.target(drivers)
	if err != nil {
		return nil, nil
	}
	return inner.ListTools(ctx, t)
}

// ExecuteTool runs the call against the active target through inner.
func (s *Switching) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error) {
	t, err := s.target(drivers)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", mcs.ErrUnknownTool, name, err)
	}
	return inner.ExecuteTool(ctx, t, name, args)
}

// Instructions returns "".
func (s *Switching) Instructions(context.Context) string { return "" }

// listEvery lists what every driver would expose as the target; a name listed by an
// earlier driver is dropped from a later one, since the two are never exposed
// together.
func (s *Switching) listEvery(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	var out []mcs.Tool
	var errs []error
	owner := map[string]int{}
	for i := range drivers {
		tools, err := inner.ListTools(ctx, drivers[i:i+1])
		if err != nil {
			if _, partial := listErrors(err); !partial {
				return nil, err
			}
			errs = append(errs, err)
		}
		for _, t := range tools {
			if o, seen := owner[t.Name]; seen && o != i {
				continue
			}
			owner[t.Name] = i
			out = append(out, t)
		}
	}
	return out, errors.Join(errs...)
}
