package main

import (
	"context"

	"github.com/agentrun/agentrun/sandbox"
)

const sandboxExamples = `  agentrun sandbox check    # user namespaces, Landlock ABI, seccomp, cgroup v2, and the best level`

// cmdSandbox prints what this machine allows for confining tools.
func (a *App) cmdSandbox(_ context.Context, args []string) error {
	fs := newFlags("sandbox")
	pos, err := a.parse(fs, "agentrun sandbox check", sandboxExamples, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "check" {
		return usagef("sandbox: want 'agentrun sandbox check'")
	}
	return sandbox.Probe().WriteText(a.Stdout)
}
