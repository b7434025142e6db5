package worker

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// notDumpable makes this process's /proc files (its fds, memory, environment) out of
// reach of the tools it starts, which run as the same user: execve made stage 2
// dumpable again, whatever stage 1 was. It is one prctl for the whole process.
func notDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	return nil
}
