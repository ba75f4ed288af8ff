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

// DeriveCapabilities returns a copy of m whose Capabilities are m's own flags followed
// by the flag of every contract v implements that is not listed yet, in the order of
// the Capability constants. m's slices are not shared with the result.
func DeriveCapabilities(m Meta, v any) Meta {
	out := m
	out.Bindings = slices.Clone(m.Bindings)
	out.SupportedLLMs = slices.Clone(m.SupportedLLMs)
	caps := slices.Clone(m.Capabilities)
	add := func(ok bool, c Capability) {
		if ok && !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	_, isDriver := v.(Driver)
	_, isToolDriver := v.(ToolDriver)
	_, isNative := v.(SupportsNativeTools)
	_, isStreaming := v.(SupportsStreaming)
	_, isMiddleware := v.(SupportsToolMiddleware)
	_, isHealth := v.(SupportsHealthcheck)
	add(isDriver, CapabilityStandalone)
	add(isToolDriver, CapabilityOrchestratable)
	add(isNative, CapabilityNativeTools)
	add(isStreaming, CapabilityStreaming)
	add(isMiddleware, CapabilityToolMiddleware)
	add(isHealth, CapabilityHealthcheck)
	out.Capabilities = caps
	return out
}
