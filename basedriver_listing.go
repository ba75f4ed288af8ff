package mcs

import "context"

// *BaseDriver forwards the whole listing protocol to its tool driver.
var (
	_ ToolLookup        = (*BaseDriver)(nil)
	_ ToolDefiner       = (*BaseDriver)(nil)
	_ VersionedTools    = (*BaseDriver)(nil)
	_ ToolSettler       = (*BaseDriver)(nil)
	_ ToolDriverWrapper = (*BaseDriver)(nil)
)

// HasTool reports whether the tool driver publishes name, as [HasTool] asks it:
// through its [ToolLookup], else its listing. Tools the middleware hides (see
// [BaseDriver.HidesTool]) count, since their calls still run through the chain.
// Safe for concurrent use when the tool driver is.
func (b *BaseDriver) HasTool(ctx context.Context, name string) (bool, error) {
	return HasTool(ctx, b.td, name)
}

// ToolDefinition returns the tool driver's definition of name, as
// [ToolDefinition] asks it: through its [ToolDefiner], else its listing. A tool
// the middleware hides is defined too. Safe for concurrent use when the tool
// driver is.
func (b *BaseDriver) ToolDefinition(ctx context.Context, name string) (Tool, bool, error) {
	return ToolDefinition(ctx, b.td, name)
}

// ToolsVersion returns the tool driver's ToolsVersion when it implements
// [VersionedTools], else 0. Installing middleware does not change it: hiding a
// tool (see [ToolHider]) is decided anew on every listing.
//
// A constant 0 would claim that the listing never changes, which BaseDriver
// cannot know of a tool driver without a version; so BaseDriver also reports,
// with [BaseDriver.ToolsVersioned], whether its version means anything, and
// [ToolsVersion] (the function) reads both. Read the version through it.
func (b *BaseDriver) ToolsVersion() uint64 {
	if v, ok := ToolsVersion(b.td); ok {
		return v
	}
	return 0
}

// ToolsVersioned reports whether [BaseDriver.ToolsVersion] follows the tool
// driver's listing: whether the tool driver has a version itself (see
// [ToolsVersion]). The answer never changes.
//
// A driver that embeds *BaseDriver over a tool driver without a version and
// implements ToolsVersion itself must implement ToolsVersioned too, returning
// true.
func (b *BaseDriver) ToolsVersioned() bool {
	_, ok := ToolsVersion(b.td)
	return ok
}

// SettleTools settles the tool driver's listing when it is a [ToolSettler] and
// returns its error; for any other tool driver there is nothing to settle and it
// returns nil. Safe for concurrent use when the tool driver is.
func (b *BaseDriver) SettleTools(ctx context.Context) error {
	if s, ok := b.td.(ToolSettler); ok {
		return s.SettleTools(ctx)
	}
	return nil
}
