package sandbox

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Apply sets the limits on the calling process (rlimits are per process on Linux, so
// every thread is covered) and thereby on every process it starts. It only lowers: where
// the process's hard limit is below a limit already (a container's --ulimit, a service's
// LimitNOFILE), that hard limit stays, as raising it would need CAP_SYS_RESOURCE.
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
		var now syscall.Rlimit
		if err := syscall.Getrlimit(r.resource, &now); err != nil {
			return fmt.Errorf("rlimit %s: %w", r.name, err)
		}
		v := min(r.v, now.Max)
		if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("rlimit %s %d: %w", r.name, v, err)
		}
	}
	return nil
}
