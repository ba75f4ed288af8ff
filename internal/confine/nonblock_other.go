//go:build !unix

package confine

const openNonblock = 0
