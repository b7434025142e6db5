//go:build unix && !linux

package worker

// closeOnExec marks every file descriptor from 3 up close-on-exec (see the Linux
// version), one by one from /dev/fd.
func closeOnExec() error { return closeOnExecListed("/dev/fd") }
