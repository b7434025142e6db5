//go:build unix

package worker

import (
	"os"
	"strconv"
	"syscall"
)

// closeOnExecListed marks close-on-exec, one by one, every descriptor from 3 up that the
// folder dir (/proc/self/fd or /dev/fd) lists.
func closeOnExecListed(dir string) error {
	fds, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
