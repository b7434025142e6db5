package worker

import (
	"math"

	"golang.org/x/sys/unix"
)

// closeOnExec marks every file descriptor from 3 up close-on-exec, so that no process
// this one starts inherits a file it did not pass on purpose: the worker's pipes to the
// runner (a tool holding the reply pipe could forge the results of its own calls), or
// a file its own parent leaked. A descriptor passed to a child explicitly (ForkExec's
// Files, os/exec's ExtraFiles) is cleared of the flag in the child.
func closeOnExec() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	return closeOnExecListed("/proc/self/fd") // before Linux 5.11: one by one
}
