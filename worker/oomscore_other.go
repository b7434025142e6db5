//go:build !linux

package worker

import "github.com/agentrun/agentrun/agent/tools"

// openOOMScore gives stage 2 no OOM score to set: the kernels here have none.
func openOOMScore() int { return -1 }

// preferVictims is next: the kernels here have no OOM score.
func preferVictims(next tools.Procs, _ int) tools.Procs { return next }
