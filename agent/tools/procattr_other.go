//go:build !linux

package tools

import "syscall"

// shellAttr puts the shell in its own process group, so the whole tree can be killed.
// Only Linux can have the kernel kill it with agentrun.
func shellAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
