package sandbox

import "golang.org/x/sys/windows"

// statDisk is the space of the volume that holds dir: the bytes available to
// this user and the size of the volume.
func statDisk(dir string) (free, size int64, err error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var avail, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &totalFree); err != nil {
		return 0, 0, err
	}
	return int64(avail), int64(total), nil
}
