package permission

import (
	"context"
	"maps"
)

// A Describer tells a person deciding about a call what its arguments alone do
// not show: it returns details of the call of name with args (a mail driver
// returns the whole draft that send_draft {draft_id} would send), or nil when
// it has none. It must not modify args, and must be safe for concurrent use.
type Describer func(ctx context.Context, name string, args map[string]any) map[string]any

// WithDescriber adds details to what a person sees before deciding about a
// call that no rule decides: the consent handler receives the call's arguments
// with the details added (a detail never replaces an argument of the same name),
// and an approval request made by [WithApprovals] keeps them as its Details, so
// that the approver sees them too. The tool receives the arguments unchanged, and
// the approval's fingerprint covers the arguments only: details are for display.
// The describer runs only for calls that are asked about or queued. Several
// WithDescriber options run in order, their details merged (an earlier detail
// wins); a nil describer is ignored.
func WithDescriber(d Describer) Option {
	return func(c *config) {
		if d != nil {
			c.describers = append(c.describers, d)
		}
	}
}

// details returns the details the describers give for a call, nil when none.
func (m *Middleware) details(ctx context.Context, name string, args map[string]any) map[string]any {
	var out map[string]any
	for _, d := range m.describers {
		for k, v := range d(ctx, name, args) {
			if _, isArg := args[k]; isArg {
				continue
			}
			if _, seen := out[k]; seen {
				continue
			}
			if out == nil {
				out = make(map[string]any)
			}
			out[k] = v
		}
	}
	return out
}

// described returns args with the details added, args itself when there are
// none.
func described(args, details map[string]any) map[string]any {
	if len(details) == 0 {
		return args
	}
	out := maps.Clone(args)
	if out == nil {
		out = make(map[string]any, len(details))
	}
	maps.Copy(out, details)
	return out
}
