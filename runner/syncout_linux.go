package runner

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncOut makes everything written under dir durable with one syncfs(2) of its file
// system: one journal commit for a whole run's session files, where an fsync per file
// would cost one each (about 0.25 ms of kernel time on ext4, and a wait for the disk).
func syncOut(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer func() { _ = f.Close() }() // read-only: closing loses nothing
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
