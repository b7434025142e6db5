//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

var errUnsupported = errors.New("sandbox: kernel confinement needs Linux")

// SysProcAttr returns the attributes that start the worker: here only a session of its
// own, without the terminal agentrun runs in.
func SysProcAttr(Level) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// MachineScratch fails: there is no scratch space without level strict.
func MachineScratch() (uint64, error) { return 0, errUnsupported }

// MachineMemory fails: there are no session cgroups without Linux.
func MachineMemory() (uint64, error) { return 0, errUnsupported }

// EnterRoot is not available on this platform.
func EnterRoot(Spec, []string) error { return errUnsupported }

// Hostname is the sandbox's host name at level strict.
const Hostname = "agentrun-sandbox"
