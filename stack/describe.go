package stack

import (
	"context"

	"github.com/mcs-go/mcs/middleware/permission"
)

// describer returns the arguments of a call as the consent handler should see
// them, or args itself when it has nothing to add.
type describer func(name string, args map[string]any) map[string]any

// describedConsent returns a handler that shows f the arguments of a call as
// the drivers' describers expand them (the mail driver adds the whole draft to
// send_draft {draft_id}). The describers are read when a call is asked about,
// so drivers built after the middleware take part. The arguments the tool
// receives are not changed.
func (b *Builder) describedConsent(f permission.ConsentFunc) permission.ConsentFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, name string, args map[string]any) (bool, error) {
		for _, d := range b.describers {
			args = d(name, args)
		}
		return f(ctx, name, args)
	}
}
