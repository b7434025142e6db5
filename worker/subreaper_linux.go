package worker

import "golang.org/x/sys/unix"

// setSubreaper makes the calling process adopt its orphaned descendants.
func setSubreaper() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
