package sandbox

// LandlockScopeABI is the first Landlock ABI that scopes signals (Linux 6.12): a
// process of the domain can signal no process outside it.
const LandlockScopeABI = 6

// Signals names the processes a tool's signals must not reach where no other layer
// keeps them out. At level landlock before LandlockScopeABI there is neither a pid
// namespace nor a signal scope, and a tool may signal every process of its uid: the
// runner's (kill -9 -1 ends the run and every session's result), and on a CI machine
// the agent that runs the job. The seccomp filter (ApplySeccomp) then refuses with
// EPERM each call that names one of them: kill, tgkill, rt_sigqueueinfo and
// rt_tgsigqueueinfo of one of Pids, kill of one of Groups or of every process (-1),
// pidfd_open of one of Pids, fcntl's F_SETOWN to one of them (the owner SIGIO is sent
// to) and setpgid into one of Groups (where kill(0) would reach); and every tkill,
// F_SETOWN_EX, FIOSETOWN and SIOCSPGRP, whose target it cannot read, or cannot tell
// from a thread of the runner's. pidfd_send_signal, whose pidfd may be a /proc/PID
// folder opened by path, fails with ENOSYS, as on a kernel before pidfds, so that
// programs fall back to kill(2). The zero value guards nothing.
type Signals struct {
	Pids   []int
	Groups []int
}

// guards reports whether s protects any process.
func (s Signals) guards() bool { return len(s.Pids) > 0 || len(s.Groups) > 0 }
