//go:build unix && !linux

package worker

import (
	"os"
	"strconv"
	"syscall"
)

// closeOnExec marks every file descriptor from 3 up close-on-exec (see the Linux
// version), one by one from /dev/fd.
func closeOnExec() error {
	fds, err := os.ReadDir("/dev/fd")
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
