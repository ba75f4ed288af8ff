// Package clone makes deep copies of the JSON-like values tool calls carry, so that
// observers and consent handlers can never change what a tool receives. It is
// the kernel's [mcs.CloneArgs] under the names the module's packages use.
package clone

import "github.com/mcs-go/mcs"

// MaxDepth is how deep a copy goes; deeper values are shared. Walkers of
// argument values (redaction, schema checks) use the same bound.
const MaxDepth = 100

// MaxNodes is how many maps, slices and arrays one copy makes at most; once it
// is spent, the remaining values are shared.
const MaxNodes = 1 << 16

// Args returns a deep copy of args; see [mcs.CloneArgs].
func Args(args map[string]any) map[string]any { return mcs.CloneArgs(args) }

// Value returns a deep copy of v; see [mcs.CloneValue].
func Value(v any) any { return mcs.CloneValue(v) }
