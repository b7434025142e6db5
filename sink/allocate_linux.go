package sink

import (
	"os"
	"syscall"
)

// allocate gives file f size bytes of the disk's blocks, which later writes up to size
// need none of.
func allocate(f *os.File, size int64) error { return syscall.Fallocate(int(f.Fd()), 0, 0, size) }
