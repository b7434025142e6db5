package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentrun/agentrun/sandbox"
)

const sandboxExamples = `  agentrun sandbox check    # user namespaces, Landlock ABI, seccomp, cgroup v2, and the best level`

// cmdSandbox prints what this machine allows for confining tools, and the system
// calls the seccomp filter refuses tools here.
func (a *App) cmdSandbox(_ context.Context, args []string) error {
	fs := newFlags("sandbox")
	pos, err := a.parse(fs, "agentrun sandbox check", sandboxExamples, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "check" {
		return usagef("sandbox: want 'agentrun sandbox check'")
	}
	if err := sandbox.Probe().WriteText(a.Stdout); err != nil {
		return err
	}
	if denied := sandbox.DeniedSyscalls(); len(denied) > 0 {
		if _, err := fmt.Fprintf(a.Stdout, "seccomp refuses: %s\n", strings.Join(denied, ", ")); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}
