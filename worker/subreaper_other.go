//go:build unix && !linux

package worker

import "syscall"

// setSubreaper is a no-op where the kernel has no subreapers.
func setSubreaper() error { return nil }

// stage2Attr starts stage 2; without Pdeathsig, stage 1's exit closes its pipes.
func stage2Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
