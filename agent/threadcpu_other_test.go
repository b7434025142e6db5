//go:build !linux

package agent_test

import (
	"testing"
	"time"
)

// threadCPU is the process's CPU time where a thread's own is not at hand: an upper
// bound of the calling thread's.
func threadCPU(testing.TB) time.Duration { return cpuTime() }
