package worker

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// setSubreaper makes the calling process adopt its orphaned descendants.
func setSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// stage2Attr starts stage 2 so that it dies with stage 1.
func stage2Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
