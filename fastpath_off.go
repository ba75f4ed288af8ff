//go:build mcs_nofast

package mcs

// fastPaths reports whether the kernel's fast paths are on: false, the build tag
// mcs_nofast is set.
const fastPaths = false
