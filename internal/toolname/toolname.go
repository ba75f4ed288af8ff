// Package toolname shortens tool names to a length limit deterministically, so
// that the REST driver and the orchestrator's namespacing cut names the same way.
package toolname

import (
	"hash/fnv"
	"strings"
)

// HashLen is the length of the suffix Shorten appends: "_" and seven hex digits.
const HashLen = 8

// Shorten returns name when it has at most max bytes. A longer name is cut to
// its first max-HashLen bytes (a trailing "_" or "-" of the cut dropped, so the
// result never ends in "__" before the hash) followed by "_" and seven hex
// digits of the FNV-1a hash of the whole name. The result is stable across runs
// and processes, starts like the name, and two names that differ anywhere get
// different results except for a hash collision (about 1 in 268 million per
// pair). name is assumed to be ASCII, as tool names are. max must be more than
// HashLen; a smaller max returns the hash suffix alone, cut to max.
func Shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	const digits = "0123456789abcdef"
	sum := h.Sum32()
	var suffix [HashLen]byte
	suffix[0] = '_'
	for i := HashLen - 1; i >= 1; i-- {
		suffix[i] = digits[sum&0xf]
		sum >>= 4
	}
	if max <= HashLen {
		return string(suffix[HashLen-max:])
	}
	head := strings.TrimRight(name[:max-HashLen], "_-")
	return head + string(suffix[:])
}
