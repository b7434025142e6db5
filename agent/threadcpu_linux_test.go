package agent_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time of the calling thread, user and kernel.
func threadCPU(tb testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
