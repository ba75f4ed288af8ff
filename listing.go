package mcs

import "context"

// The listing protocol: optional interfaces of a [ToolDriver] that answer
// questions about its listing more cheaply or more precisely than ListTools, and
// the helpers that ask them, in the style of io/fs (fs.Stat uses fs.StatFS when
// the file system has it and opens the file otherwise). [ToolLookup] is the
// first of them. Callers use the helpers, never their own copy of the fallbacks,
// so that every driver, wrapped or not, is asked the same way. *[BaseDriver]
// implements every interface of the protocol by forwarding to the ToolDriver it
// was built over, so wrapping a driver to give it middleware of its own hides
// nothing about its listing.

// ToolLookup is an optional interface of a [ToolDriver] that can tell whether it
// publishes a tool without listing them all. BaseDriver uses it, when present, to
// decide which calls it owns; an orchestrator implements it with its cached index.
// Read it through [HasTool]. Implementations must be safe for concurrent use.
type ToolLookup interface {
	HasTool(ctx context.Context, name string) (bool, error)
}

// ToolDefiner is an optional interface of a [ToolDriver] that returns one tool's
// definition without listing them all; BaseDriver uses it, through
// [ToolDefinition], to fill [CallInfo.Tool]. ok is false when the driver does not
// publish name. The definition is the one ListTools lists (under
// [ContextWithHiddenTools], for a tool the driver hides), or a newer one when
// that listing is provisional (see [ToolSettler]). Implementations must be safe
// for concurrent use.
type ToolDefiner interface {
	ToolDefinition(ctx context.Context, name string) (tool Tool, ok bool, err error)
}

// VersionedTools is an optional interface of a [ToolDriver] whose listing can
// change during its life: tools added to a table, a server that announced new
// tools, a page turned in an orchestrator (whose layers and strategies implement
// it too). A holder of the driver that caches its
// listing (an orchestrator, an MCP server) reads the version before each use of
// the cache and lists again when it differs from the value the cache was built
// under; the listing of a driver without a version is cached until the holder is
// told to refresh it.
//
// ToolsVersion must increase after every change of state that affects ListTools,
// and never decrease; change the state first, then the version, so that a reader
// that sees the new version also sees the new state. It must be cheap (an atomic
// load: holders read it on every call) and safe for concurrent use.
//
// A wrapper, whose version is that of the driver it wraps, may have a version
// only sometimes: it reports whether it has one with a method
// ToolsVersioned() bool, whose answer never changes, and [ToolsVersion] honours
// it. *[BaseDriver] does so. Read versions through [ToolsVersion].
type VersionedTools interface {
	ToolsVersion() uint64
}

// ToolSettler is an optional interface of a [ToolDriver] whose listing may be
// provisional: the REST driver lists from its tool-table cache before it has
// decoded the document. SettleTools makes the listing final, raising
// ToolsVersion when that changed it, and returns the error that kept it from
// doing so. An orchestrator settles its drivers before its middleware first
// decides on a call of a listing, so that the definition in [CallInfo] is the
// driver's final word. A driver with nothing to settle returns nil. It must be
// safe for concurrent use, and cheap once settled.
type ToolSettler interface {
	SettleTools(ctx context.Context) error
}

// ToolDriverWrapper is implemented by a [ToolDriver] built over other tool
// drivers: *[BaseDriver] over the one it was built with, an orchestrator over the
// drivers registered in it. Wraps reports whether td is one of them, directly or
// further down (a wrapper asks the wrappers it holds in turn). It answers the
// question a composition needs, "would registering this driver inside td make a
// cycle?", without handing out the wrapped driver: a caller that held it could
// run its tools around the wrapper's middleware, so the protocol has no Unwrap.
// Wraps must be safe for concurrent use.
type ToolDriverWrapper interface {
	ToolDriver
	Wraps(td ToolDriver) bool
}

// HasTool reports whether td publishes a tool called name. It asks td's
// [ToolLookup] when td has one and otherwise looks for the name in
// td.ListTools(ctx), returning its error. It is as safe for concurrent use as
// td's methods are; a panic in them is not recovered.
func HasTool(ctx context.Context, td ToolDriver, name string) (bool, error) {
	if tl, ok := td.(ToolLookup); ok {
		return tl.HasTool(ctx, name)
	}
	tools, err := td.ListTools(ctx)
	if err != nil {
		return false, err
	}
	for i := range tools {
		if tools[i].Name == name {
			return true, nil
		}
	}
	return false, nil
}

// ToolDefinition returns the definition of the tool td publishes as name, and
// whether there is one. It asks td's [ToolDefiner] when td has one and otherwise
// returns the first tool of that name in td.ListTools(ctx), as listed (not
// copied), or ListTools' error. It is as safe for concurrent use as td's methods
// are; a panic in them is not recovered.
func ToolDefinition(ctx context.Context, td ToolDriver, name string) (Tool, bool, error) {
	if d, ok := td.(ToolDefiner); ok {
		return d.ToolDefinition(ctx, name)
	}
	tools, err := td.ListTools(ctx)
	if err != nil {
		return Tool{}, false, err
	}
	for i := range tools {
		if tools[i].Name == name {
			return tools[i], true, nil
		}
	}
	return Tool{}, false, nil
}

// ToolsVersion returns td's listing version and true when td has one: td
// implements [VersionedTools] and, when it also has a method
// ToolsVersioned() bool (a wrapper such as *[BaseDriver]), that reports true.
// Otherwise it returns 0 and false, and td's listing changes only when its
// holder is told so. Whether td has a version never changes, so a holder may ask
// once and then read td.ToolsVersion directly. Safe for concurrent use.
func ToolsVersion(td ToolDriver) (version uint64, ok bool) {
	v, ok := td.(VersionedTools)
	if !ok {
		return 0, false
	}
	if w, ok := td.(interface{ ToolsVersioned() bool }); ok && !w.ToolsVersioned() {
		return 0, false
	}
	return v.ToolsVersion(), true
}
