//go:build unix

package confine

import "syscall"

const openNonblock = syscall.O_NONBLOCK
