//go:build !mcs_nofast

package mcs

// fastPaths reports whether the kernel's fast paths (fastjson.go, jsonenc.go and
// the one-pass decoding of strict objects) are on: true unless the build tag
// mcs_nofast is set, which leaves every decoding and encoding to encoding/json.
const fastPaths = true
