// Package orchestrator puts many tool drivers behind one driver.
//
// An [Orchestrator] is the first axis of composition in MCS: it is opaque, has its
// own identity and advertises only the capabilities it implements itself. It collects
// the tools of its registered drivers, resolves name collisions through a [Strategy],
// writes one prompt and dispatches each call the model makes to the driver that
// serves it. Because it is itself an mcs.ToolDriver, an orchestrator can be registered
// inside another one.
//
// A Strategy is usually a [Pipeline] of [Layer] values over [Flat]. A layer receives
// its inner strategy the way a tool middleware receives next, so users can write
// their own. The built-in layers are:
//
//   - [Namespacing]: label__tool names when more than one driver is registered;
//   - [ToolSwitching]: only the active driver's tools;
//   - [Pagination]: long listings one page at a time, with page-turning tools;
//   - [DetailLoading]: short descriptions plus a tool that returns the full ones;
//   - [RejectConflicts]: AddDriver fails when two exposed tools would share a name;
//   - [ToolSearch]: one search tool and a compact index instead of the listing, for
//     APIs with hundreds or thousands of operations.
//
// The orchestrator caches the exposed listing. A registered driver whose tools
// change says so through the kernel's listing protocol ([mcs.VersionedTools]; an
// [mcs.BaseDriver] forwards it from the driver it wraps, so a driver wrapped for
// middleware of its own stays current); the listing of any other driver is read
// again on [Orchestrator.Refresh] or when the driver set changes.
//
// Exposed names always fit the 64 characters providers accept: a namespaced name
// that would be longer keeps its start and ends in a stable hash of the whole name.
//
// A minimal setup:
//
//	o := orchestrator.New(nil) // Pipeline(Namespacing())
//	if err := o.AddDriver("crm", crm); err != nil { ... }
//	if err := o.AddDriver("billing", billing); err != nil { ... }
//	msg, err := o.SystemMessage(ctx, "")
//	...
//	resp := o.ProcessLLMResponse(ctx, modelOutput) // runs crm__list_contacts, ...
package orchestrator
