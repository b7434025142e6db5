package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// TestSandboxCheck runs 'agentrun sandbox check' and compares it with the probe.
func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	o := agentrun(t, invocation{args: []string{"sandbox", "check"}})
	require.Equal(t, 0, o.code, o.stderr)
	for _, want := range []string{"user namespaces", "landlock", "seccomp", "no_new_privs", "cgroup v2"} {
		assert.Contains(t, o.stdout, want)
	}
	assert.Contains(t, o.stdout, "best level: "+string(sandbox.Probe().Best()))
	if runtime.GOOS == "linux" {
		assert.Contains(t, o.stdout, "seccomp refuses: ptrace,", "the filter's calls are listed")
		assert.Contains(t, o.stdout, "io_uring_setup")
	}
	rep := sandbox.Probe()
	if rep.Supports(sandbox.LevelLandlock) == nil {
		want := "signals at landlock: the seccomp filter keeps them from agentrun"
		if rep.LandlockABI >= sandbox.LandlockScopeABI {
			want = "signals at landlock: Landlock's scope"
		}
		assert.Contains(t, o.stdout, want)
	}
	if size, err := sandbox.MachineScratch(); err == nil && rep.Supports(sandbox.LevelStrict) == nil {
		assert.Contains(t, o.stdout, fmt.Sprintf("scratch at strict: %d MiB a session", size>>20))
	}
	if memory, err := sandbox.MachineMemory(); err == nil {
		line := regexp.MustCompile(`(?m)^memory: .*$`).FindString(o.stdout)
		assert.Contains(t, line, fmt.Sprintf("memory: %d MiB a session (", sandbox.DefaultMemory(memory)>>20))
		if probe, err := sandbox.NewCgroup(sandbox.CgroupLimits{Memory: 1 << 30}); err == nil && slices.Contains(probe.Layers(), sandbox.LayerMemory) {
			require.NoError(t, probe.Remove())
			assert.True(t, strings.HasSuffix(line, "), held by a memory cgroup"), line)
		} else {
			assert.Contains(t, line, "), not held: ")
		}
	}
	bad := agentrun(t, invocation{args: []string{"sandbox", "wat"}})
	assert.Equal(t, 2, bad.code)
}

// touchScript makes the model create a file in the workspace with Bash.
const touchScript = `steps:
  - tool_calls:
      - name: Bash
        input: {command: "touch made-by-tool; echo level-ok"}
  - text: done
`

// TestExecSandboxPolicy checks that exec runs its tools in the sandbox it records, and
// that the policy is stored with the session: a second run of the session without the
// flags still has a read-only workspace, on disk.
func TestExecSandboxPolicy(t *testing.T) {
	t.Parallel()
	level := sandbox.LevelLandlock
	if sandbox.Probe().Supports(level) != nil {
		t.Skip("this machine has no Landlock")
	}
	dir, env, script := execSetup(t, touchScript)
	first := agentrun(t, invocation{args: []string{"exec", "--script", script, "--output-format", "stream-json",
		"--session", "s1", "--sandbox", string(level), "Touch it."}, env: env, dir: dir})
	require.Equal(t, 0, first.code, first.stderr)
	assert.FileExists(t, filepath.Join(dir, "made-by-tool"), "the worker ran the tool in the workspace")
	evs := jsonLines(t, first.stdout)
	require.NotEmpty(t, evs)
	assert.Equal(t, string(level), evs[0]["sandbox"].(map[string]any)["level"], "session_start names the level")
	last := evs[len(evs)-1]
	assert.Equal(t, string(level), last["sandbox"].(map[string]any)["level"])
	assert.Contains(t, last["sandbox"].(map[string]any)["layers"], "landlock")

	require.NoError(t, os.Remove(filepath.Join(dir, "made-by-tool")))
	// The session now becomes read-only; the next run without flags keeps it so.
	ro := agentrun(t, invocation{args: []string{"exec", "--script", script, "--session", "s2", "--sandbox", string(level),
		"--bash-mode", "0404", "Touch it."}, env: env, dir: dir})
	require.Equal(t, 0, ro.code, ro.stderr)
	var pol map[string]string
	b, err := os.ReadFile(filepath.Join(projectDir(t, env), "s2", "policy.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &pol))
	assert.Equal(t, map[string]string{"bash_mode": "0404", "sandbox_level": string(level)}, pol)
	again := agentrun(t, invocation{args: []string{"exec", "--script", script, "--session", "s2", "Touch it again."},
		env: env, dir: dir})
	require.Equal(t, 0, again.code, again.stderr)
	assert.NoFileExists(t, filepath.Join(dir, "made-by-tool"), "the stored read-only policy held on resume")
}

// TestExecSandboxUsage checks that a bad level or mode is a usage error.
func TestExecSandboxUsage(t *testing.T) {
	t.Parallel()
	dir, env, script := execSetup(t, touchScript)
	for _, args := range [][]string{{"--sandbox", "tight"}, {"--bash-mode", "0999"}} {
		o := agentrun(t, invocation{args: append([]string{"exec", "--script", script}, append(args, "Go.")...), env: env, dir: dir})
		assert.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		assert.True(t, strings.Contains(o.stderr, "--sandbox") || strings.Contains(o.stderr, "--bash-mode"), o.stderr)
		assert.NoFileExists(t, filepath.Join(dir, "made-by-tool"), "nothing ran")
	}
}

// TestLandlockSignalsLine: sandbox check says which layer keeps signals in at level
// landlock, by the Landlock ABI.
func TestLandlockSignalsLine(t *testing.T) {
	t.Parallel()
	assert.Contains(t, landlockSignals(sandbox.LandlockScopeABI-1), "the seccomp filter keeps them from agentrun")
	assert.Contains(t, landlockSignals(sandbox.LandlockScopeABI-1), "other sessions'")
	assert.Contains(t, landlockSignals(sandbox.LandlockScopeABI), "Landlock's scope (ABI 6)")
}
