// Package fastpath is the one switch of the module's fast paths: the code that
// re-implements a library's semantics for speed (the REST driver's decoders of
// OpenAPI documents and cache files, the validate middleware's fast check). The
// build tag mcs_nofast turns them all off, as purego does in the standard
// library, so that every result comes from the library itself; the kernel, which
// imports no package of the module, has a switch of its own under the same tag
// (its fast JSON decoding and encoding of calls).
//
// A fast path asks On at its entry point and, when it is false, gives way to the
// ordinary path exactly as it does for an input it cannot decide.
package fastpath
