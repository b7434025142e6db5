//go:build !linux

package sink

import "os"

// allocate gives file f size bytes of the disk's blocks, written as zeros where there
// is no fallocate(2).
func allocate(f *os.File, size int64) error {
	_, err := f.WriteAt(make([]byte, size), 0)
	return err
}
