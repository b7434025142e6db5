// The results the child scenarios report, for every architecture the sandbox builds on.

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// allTasks says "yes" if field has value want in every thread's status, else which
// thread has what.
func allTasks(field, want string) string {
	dirs, _ := filepath.Glob("/proc/self/task/*/status")
	if len(dirs) == 0 {
		return "no threads"
	}
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue // the thread has ended since the glob
		}
		if got := fieldOf(string(b), field); got != want {
			return fmt.Sprintf("%s has %s %q", d, field, got)
		}
	}
	return "yes"
}

// reportSyscall makes system call nr with up to six arguments and reports, as key,
// how it fared: "ok" or its errno's name.
func reportSyscall(key string, nr uintptr, a ...uintptr) {
	var args [6]uintptr
	copy(args[:], a)
	_, _, e := unix.Syscall6(nr, args[0], args[1], args[2], args[3], args[4], args[5])
	report(key, errnoName(e))
}

// errnoName is "EPERM", "ENOSYS" and so on, "ok" for no error.
func errnoName(e syscall.Errno) string {
	if e == 0 {
		return "ok"
	}
	return unix.ErrnoName(e)
}

// errResult is "ok", the errno name of err, or its text.
func errResult(err error) string {
	if err == nil {
		return "ok"
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return errnoName(e)
	}
	return err.Error()
}
