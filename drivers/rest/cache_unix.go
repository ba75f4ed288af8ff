//go:build unix

package rest

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// untrusted says why the cache file or directory fi must not be used, or returns
// nil: it must belong to the user running the program and be writable by nobody
// else, or another user could plant a listing in it.
func untrusted(fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("it belongs to user id %d, not to the user running this program", st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return errors.New("other users may write to it")
	}
	return nil
}

// openCacheFile opens a cache file for reading without blocking (O_NONBLOCK: a
// FIFO does not wait for a writer) and without following a symbolic link
// (O_NOFOLLOW). The caller checks that what it opened is a regular file;
// reading a regular file is not affected by O_NONBLOCK.
func openCacheFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}
