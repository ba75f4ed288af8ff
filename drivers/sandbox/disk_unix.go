//go:build !windows

package sandbox

import "golang.org/x/sys/unix"

// statDisk is statfs(2) of dir: the blocks available to an unprivileged user
// and the size of its file system, in bytes.
func statDisk(dir string) (free, size int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	bs := int64(st.Bsize)
	return int64(st.Bavail) * bs, int64(st.Blocks) * bs, nil
}
