//go:build race

package testexit

import "syscall"

// exit is the exit_group system call itself: no deferred work, no race finalisation.
func exit(code int) { syscall.Exit(code) }
