package mcs

import "slices"

// Capability is a flag in [Meta] that advertises a contract a driver type implements.
type Capability string

// The capability flags of the core and optional contracts, in their canonical order.
const (
	CapabilityStandalone     Capability = "standalone"      // implements Driver
	CapabilityOrchestratable Capability = "orchestratable"  // implements ToolDriver
	CapabilityNativeTools    Capability = "native_tools"    // implements SupportsNativeTools
	CapabilityStreaming      Capability = "streaming"       // implements SupportsStreaming
	CapabilityToolMiddleware Capability = "tool_middleware" // implements SupportsToolMiddleware
	CapabilityHealthcheck    Capability = "healthcheck"     // implements SupportsHealthcheck
)

// Binding names one way a driver connects to a system: a capability such as "rest",
// an adapter such as "http" and a spec format such as "OpenAPI".
type Binding struct {
	Capability string
	Adapter    string
	SpecFormat string
}

// Meta is the static data sheet of a driver type. It never reflects runtime
// configuration such as the middleware an instance runs.
type Meta struct {
	ID      string
	Name    string
	Version string
	// Bindings lists the systems the driver type connects to.
	Bindings []Binding
	// SupportedLLMs lists the models the driver supports ("*" for any); nil for a pure
	// ToolDriver.
	SupportedLLMs []string
	// Capabilities lists the contracts the driver type implements.
	Capabilities []Capability
}

// HasCapability reports whether c is among m's capabilities.
func (m Meta) HasCapability(c Capability) bool {
	return slices.Contains(m.Capabilities, c)
}

// DeriveCapabilities is the one rule that turns a driver's contracts into its
// flags. It returns a copy of m whose Capabilities are exactly the flags v has a
// right to: m's own flags in their order, without the flag of any core or optional
// contract of this package that v does not implement (a flag copied from a wrapped
// driver's meta, for example), followed by the flag of every contract v implements
// that is not listed yet, in the order of the Capability constants. Flags that are
// not one of the constants (a driver's own) are kept as they are. m's slices are not
// shared with the result.
//
// Call it with the value a client will hold, so that a type assertion on that value
// and its meta always agree: a driver that embeds *BaseDriver and adds a contract
// overrides Meta as DeriveCapabilities(d.BaseDriver.Meta(), d).
func DeriveCapabilities(m Meta, v any) Meta {
	out := m
	out.Bindings = slices.Clone(m.Bindings)
	out.SupportedLLMs = slices.Clone(m.SupportedLLMs)
	has := implemented(v)
	caps := make([]Capability, 0, len(m.Capabilities)+len(coreCapabilities))
	for _, c := range m.Capabilities {
		if i := slices.Index(coreCapabilities[:], c); (i >= 0 && !has[i]) || slices.Contains(caps, c) {
			continue
		}
		caps = append(caps, c)
	}
	for i, c := range coreCapabilities {
		if has[i] && !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	out.Capabilities = caps
	return out
}

// coreCapabilities are the flags of this package's contracts, in canonical order.
var coreCapabilities = [...]Capability{
	CapabilityStandalone, CapabilityOrchestratable, CapabilityNativeTools,
	CapabilityStreaming, CapabilityToolMiddleware, CapabilityHealthcheck,
}

// implemented reports, for each of coreCapabilities, whether v implements its
// contract.
func implemented(v any) [len(coreCapabilities)]bool {
	_, isDriver := v.(Driver)
	_, isToolDriver := v.(ToolDriver)
	_, isNative := v.(SupportsNativeTools)
	_, isStreaming := v.(SupportsStreaming)
	_, isMiddleware := v.(SupportsToolMiddleware)
	_, isHealth := v.(SupportsHealthcheck)
	return [...]bool{isDriver, isToolDriver, isNative, isStreaming, isMiddleware, isHealth}
}
