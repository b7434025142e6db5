package tools

import "syscall"

// shellAttr puts the shell in its own process group, so the whole tree can be killed,
// and has the kernel kill it with agentrun should agentrun itself die.
func shellAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
