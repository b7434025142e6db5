//go:build linux && !amd64 && !arm64

package sandbox

import (
	"fmt"
	"runtime"
)

// ApplySeccomp fails: the filter knows the system calls of amd64 and arm64 only.
func ApplySeccomp(Sockets) error {
	return fmt.Errorf("seccomp: unsupported architecture %s", runtime.GOARCH)
}

// ApplySeccompThread fails, as ApplySeccomp does.
func ApplySeccompThread(s Sockets) error { return ApplySeccomp(s) }

// DeniedSyscalls is empty where no filter is applied.
func DeniedSyscalls() []string { return nil }
