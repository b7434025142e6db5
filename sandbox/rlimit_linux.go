package sandbox

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Apply sets the limits on the calling process (rlimits are per process on Linux, so
// every thread is covered) and thereby on every process it starts.
//
// It goes through syscall.Setrlimit, not x/sys/unix: for RLIMIT_NOFILE that tells
// os/exec to stop restoring the soft limit the Go runtime found at start-up in each
// child, which would otherwise undo the limit for the tools.
func (l Limits) Apply() error {
	for _, r := range []struct {
		name     string
		resource int
		v        uint64
	}{
		{"processes", unix.RLIMIT_NPROC, l.Processes},
		{"file size", syscall.RLIMIT_FSIZE, l.FileSize},
		{"address space", syscall.RLIMIT_AS, l.AddressSpace},
		{"open files", syscall.RLIMIT_NOFILE, l.OpenFiles},
	} {
		if r.v == 0 {
			continue
		}
		if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: r.v, Max: r.v}); err != nil {
			return fmt.Errorf("rlimit %s %d: %w", r.name, r.v, err)
		}
	}
	return nil
}
