package main

import (
	"context"
	"fmt"
	"slices"
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
	rep := sandbox.Probe() // it starts a child in new namespaces: once
	if err := rep.WriteText(a.Stdout); err != nil {
		return err
	}
	var lines []string
	if denied := sandbox.DeniedSyscalls(); len(denied) > 0 {
		lines = append(lines, "seccomp refuses: "+strings.Join(denied, ", "))
	}
	if rep.Supports(sandbox.LevelLandlock) == nil {
		lines = append(lines, "signals at landlock: "+landlockSignals(rep.LandlockABI))
	}
	if size, err := sandbox.MachineScratch(); err == nil && rep.Supports(sandbox.LevelStrict) == nil {
		lines = append(lines, fmt.Sprintf("scratch at strict: %d MiB a session (/tmp, /dev/shm and a private home together; "+
			"a quarter of memory, at most 4096 and half the memory limit, unless sandbox.scratch_mib says otherwise)", size>>20))
	}
	if memory, err := sandbox.MachineMemory(); err == nil {
		lines = append(lines, fmt.Sprintf("memory: %d MiB a session (its processes and scratch space together; "+
			"half of memory, unless sandbox.memory_mib says otherwise), %s", sandbox.DefaultMemory(memory)>>20, memoryHeld()))
	}
	for _, l := range lines {
		if _, err := fmt.Fprintln(a.Stdout, l); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// landlockSignals says what keeps the tools' signals in at level landlock with
// Landlock ABI abi.
func landlockSignals(abi int) string {
	if abi >= sandbox.LandlockScopeABI {
		return fmt.Sprintf("Landlock's scope (ABI %d): a tool signals its session's processes alone", abi)
	}
	return fmt.Sprintf("the seccomp filter keeps them from agentrun, the processes that started it and their groups; "+
		"Landlock ABI %d has no scope (6), so other processes of the uid, other sessions' among them, are within reach", abi)
}

// memoryHeld says whether this machine holds the sessions' memory limit: where
// agentrun may make a memory cgroup (one is made and removed to find out).
func memoryHeld() string {
	if c, err := sandbox.NewCgroup(sandbox.CgroupLimits{Memory: 1 << 30}); err == nil {
		held := slices.Contains(c.Layers(), sandbox.LayerMemory)
		if c.Remove() == nil && held {
			return "held by a memory cgroup"
		}
	}
	return "not held: no writable memory cgroup hierarchy here (one takes root, or a cgroup delegated to this user)"
}
