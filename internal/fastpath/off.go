//go:build mcs_nofast

package fastpath

// On reports whether the fast paths are on: false, the build tag mcs_nofast is
// set.
const On = false
