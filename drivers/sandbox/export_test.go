package sandbox

// SetDiskSpace replaces the reading of the workspace's free space until the
// returned function is called.
func SetDiskSpace(f func(dir string) (free, size int64, err error)) (restore func()) {
	old := diskSpace
	diskSpace = f
	return func() { diskSpace = old }
}

// DiskSpace is the real reading of the free space of dir's file system.
func DiskSpace(dir string) (free, size int64, err error) { return statDisk(dir) }

// WatchDisk starts the watchdog of one command and returns its finish.
func WatchDisk(dir string, limit int64) (finish func() (bool, string), err error) {
	w, err := watchDisk(dir, limit)
	if err != nil {
		return nil, err
	}
	return w.finish, nil
}
