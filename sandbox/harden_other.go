//go:build !linux

package sandbox

import "os"

// ApplySeccomp fails: seccomp is Linux's.
func ApplySeccomp(Sockets, Signals) (*os.File, error) { return nil, ErrNotLinux }

// DeniedSyscalls is empty off Linux.
func DeniedSyscalls() []string { return nil }

// DropCapabilities fails: capabilities are Linux's.
func DropCapabilities() error { return ErrNotLinux }

// SetNoNewPrivs fails: no_new_privs is Linux's.
func SetNoNewPrivs() error { return ErrNotLinux }

// SetNotDumpable fails: it is a Linux prctl.
func SetNotDumpable() error { return ErrNotLinux }

// Apply fails: the limits are applied only on Linux.
func (l Limits) Apply() error { return ErrNotLinux }
