package stack

import (
	"context"
)

// describer returns the arguments of a call as a person deciding about it
// should see them, or args itself when it has nothing to add.
type describer func(name string, args map[string]any) map[string]any

// describe is the permission middleware's [permission.Describer] of the stack:
// the details the drivers' describers add to a call (the mail driver adds the
// whole draft to send_draft {draft_id}), for the consent handler and for
// approval requests. The describers are read when a call is asked about, so
// drivers built after the middleware take part.
func (b *Builder) describe(_ context.Context, name string, args map[string]any) map[string]any {
	view := args
	for _, d := range b.describers {
		view = d(name, view)
	}
	var details map[string]any
	for k, v := range view {
		if _, isArg := args[k]; isArg {
			continue
		}
		if details == nil {
			details = make(map[string]any)
		}
		details[k] = v
	}
	return details
}
