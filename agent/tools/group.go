package tools

import "syscall"

// The process-group handling of Bash, for the other long-lived processes of a session
// (the worker's stdio MCP servers): one home for how a group is started and ended.

// GroupAttr starts a process in its own process group, killed with its parent where
// the kernel can (Linux).
func GroupAttr() *syscall.SysProcAttr { return shellAttr() }

// SignalGroup sends sig to the process group pgid; a group that is gone is done
// (os.ErrProcessDone).
func SignalGroup(pgid int, sig syscall.Signal) error { return signalGroup(pgid, sig) }

// KillGroup sends SIGKILL to what is left of the process group pgid and waits, at most
// two seconds, until none of its members runs.
func KillGroup(pgid int) { killGroup(pgid) }

// SignalName names a signal as commands commonly die of it (SIGKILL, SIGTERM, ...).
func SignalName(s syscall.Signal) string { return signalName(s) }
