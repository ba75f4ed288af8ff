package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
)

// ConflictError is the error of a registration that would make the orchestrator
// expose two tools under one name (see [RejectConflicts]).
type ConflictError struct {
	// Name is the tool name that would be exposed twice.
	Name string
	// Labels are the drivers that list a tool of this name themselves, in
	// registration order; empty when the name comes from a layer.
	Labels []string
}

func (e *ConflictError) Error() string {
	var from string
	if len(e.Labels) > 0 {
		from = " (listed by " + strings.Join(e.Labels, ", ") + ")"
	}
	return fmt.Sprintf("tool name %q would be exposed more than once%s; add Namespacing to the pipeline or register a driver without this tool", e.Name, from)
}

// RejectConflicts returns the Layer that makes AddDriver fail, registering nothing,
// when the names the orchestrator would expose after the addition collide: two tools
// of one name on any page. It checks the names the whole pipeline exposes, wherever it
// stands in it, so with Namespacing in the pipeline there is never a conflict, and
// under ToolSwitching only the tools of one driver count together. The error is a
// [*ConflictError]. In listings and calls the layer changes nothing. The result is
// safe for concurrent use.
func RejectConflicts() Layer { return rejectConflicts{} }

type rejectConflicts struct{}

var _ RegistrationChecker = rejectConflicts{}

func (rejectConflicts) ListTools(ctx context.Context, drivers []Entry, inner Strategy) ([]mcs.Tool, error) {
	return inner.ListTools(ctx, drivers)
}

func (rejectConflicts) ExecuteTool(ctx context.Context, drivers []Entry, name string, args map[string]any, inner Strategy) (any, error) {
	return inner.ExecuteTool(ctx, drivers, name, args)
}

func (rejectConflicts) Instructions(context.Context) string { return "" }

// CheckRegistration returns a *ConflictError for the first name exposed twice.
func (rejectConflicts) CheckRegistration(ctx context.Context, proposed []Entry, exposed []mcs.Tool) error {
	seen := make(map[string]bool, len(exposed))
	for _, t := range exposed {
		if !seen[t.Name] {
			seen[t.Name] = true
			continue
		}
		ce := &ConflictError{Name: t.Name}
		for _, e := range proposed {
			tools, err := safeList(ctx, e.Driver)
			if err == nil && slices.ContainsFunc(tools, func(x mcs.Tool) bool { return x.Name == t.Name }) {
				ce.Labels = append(ce.Labels, e.Label)
			}
		}
		return ce
	}
	return nil
}
