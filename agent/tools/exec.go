package tools

import (
	"context"
	"time"
)

// ExecOptions describe a shell command run on behalf of agentrun itself, outside any
// tool call and any policy (a job's checks).
type ExecOptions struct {
	// Command runs with bash -c in Dir, with Env (nil: a minimal environment).
	Command string
	Dir     string
	Env     []string
	// Timeout limits the command (0: DefaultTimeout).
	Timeout time.Duration
	// MaxOutput caps the output kept, head and tail (0: DefaultMaxOutput).
	MaxOutput int
	// Groups, when set, hears of the command's process group (see Env.Groups).
	Groups Groups
	// Procs, when set, starts and waits for the command's process (see Env.Procs).
	Procs Procs
}

// ExecResult is what the command did.
type ExecResult struct {
	// Output is stdout, then stderr after a "[stderr]" line, truncated head and tail.
	Output string
	// ExitCode is the command's exit status; -1 when a signal ended it.
	ExitCode int
	TimedOut bool
	// Err is set when the command could not start.
	Err error
}

// Exec runs a command the way Bash does (own process group, the whole group killed at
// the timeout or on cancellation, bounded output) and reports its exit code.
func Exec(ctx context.Context, o ExecOptions) ExecResult {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	env := &Env{Workspace: o.Dir, ProcEnv: o.Env, MaxOutput: o.MaxOutput, Groups: o.Groups, Procs: o.Procs}
	maxOut := env.maxOutput()
	res := runShell(ctx, env, o.Command, timeout, maxOut)
	if res.startErr != nil {
		return ExecResult{ExitCode: -1, Err: res.startErr}
	}
	content, _ := renderShell(res, timeout, maxOut)
	code := res.exitCode
	if res.signal != "" || res.timedOut || res.cancelled {
		code = -1
	}
	return ExecResult{Output: content, ExitCode: code, TimedOut: res.timedOut}
}
