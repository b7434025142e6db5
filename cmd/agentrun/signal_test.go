//go:build e2e

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/protocol"
	"github.com/agentrun/agentrun/sandbox"
)

// TestE2ESignalTerm sends SIGTERM to a run whose 100 sessions all have a tool running:
// within five seconds the run exits 130, every session has a cancelled result (or a
// finished one), the summaries exist, and no tool process is left.
func TestE2ESignalTerm(t *testing.T) {
	skipShort(t)
	sec := newSecrets(t)
	marker := newMarker(t, "signal-term")
	out := filepath.Join(t.TempDir(), "out")
	cmd, stdout, stderr := startAgentrun(t, runEnv(t, sec, "", marker),
		runArgs(filepath.Join(e2eDir, "signal-term.yaml"), out)...)
	waitFor(t, "every session's tool to start", func() bool {
		return streamsWith(out, `"type":"tool_call"`) == e2eSessions
	})
	// The scan that must find nothing after the run sees the tools while they run.
	waitFor(t, "every tool process", func() bool { return len(markerProcesses(t, marker)) >= e2eSessions })

	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	code := exitCode(t, cmd)
	took := time.Since(sent)
	t.Logf("exited %s after SIGTERM", took.Round(time.Millisecond))
	assert.Equal(t, exitInterrupted, code, "stderr:\n%s", lastLines(stderr.String(), 20))
	assert.Less(t, took, signalDeadline, "results and summaries are written within five seconds")
	assertNoProcesses(t, marker)
	assertNoGoroutines(t, stderr.String())

	sessions, sum := verifyRun(t, out, e2eSessions)
	for key, s := range sessions {
		assert.Contains(t, []protocol.Status{protocol.StatusCancelled, protocol.StatusSuccess}, s.result.Status, key)
	}
	t.Logf("statuses: %v", sum.Totals.ByStatus)
	assert.Len(t, checkStdout(t, stdout.String()), e2eSessions, "stdout carries every session's result")
	assertNoSecrets(t, out, sec.values(), stdout.String(), stderr.String())
}

// TestE2ESignalKillResume kills a run of 50 quick and 50 slow sessions with SIGKILL once
// some have succeeded, then resumes it: no tool process outlives the killed run for
// long, the resumed run exits 0, the summary has every session exactly once, the
// sessions that had succeeded keep their results and are not run again, and every
// stream ends with one result.
func TestE2ESignalKillResume(t *testing.T) {
	skipShort(t)
	sec := newSecrets(t)
	marker := newMarker(t, "signal-kill")
	env := runEnv(t, sec, "", marker) // the same marker both times: it is part of the spec digest
	spec := filepath.Join(e2eDir, "signal-kill.yaml")
	out := filepath.Join(t.TempDir(), "out")
	cmd, _, _ := startAgentrun(t, env, runArgs(spec, out)...)
	waitFor(t, "40 finished sessions", func() bool {
		files, _ := filepath.Glob(filepath.Join(out, "sessions", "*", "result.json"))
		return len(files) >= 40
	})
	require.NotEmpty(t, markerProcesses(t, marker), "tools are running when the run is killed")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	assert.Equal(t, -1, exitCode(t, cmd), "killed by the signal")

	before := resultFiles(t, out)
	beforeFiles := map[string][]byte{}
	succeeded := 0
	for key, r := range before {
		if r.Status == protocol.StatusSuccess {
			succeeded++
			b, err := os.ReadFile(filepath.Join(out, "sessions", key, "result.json"))
			require.NoError(t, err)
			beforeFiles[key] = b
		}
	}
	require.Positive(t, succeeded, "some sessions succeeded before the kill")
	require.Less(t, len(before), e2eSessions, "the kill came before the end of the run")
	assert.NoFileExists(t, filepath.Join(out, "summary.json"), "a killed run writes no summary")
	t.Logf("%d of %d sessions had a result before the kill, %d of them success", len(before), e2eSessions, succeeded)

	// The killed run's shells died with it; what they started in the background (a
	// five-minute sleep) is ended by its process reaper, not by the test.
	waitFor(t, "the reaper to end the killed run's tools", func() bool { return len(markerProcesses(t, marker)) == 0 })

	// Where this machine gives sessions a pids cgroup (as root, with a writable
	// hierarchy), each had one, which the killed run could not remove.
	killed := sessionCgroups(t, cmd.Process.Pid)
	if probe, err := sandbox.NewCgroup(sandbox.CgroupLimits{Pids: sandbox.DefaultMaxPids}); err == nil {
		require.NoError(t, probe.Remove())
		require.NotEmpty(t, killed, "the killed run left its sessions' cgroups")
	}
	// Its workers die with it too (their parent-death signal), each with its pid
	// namespace, which on a loaded machine takes a moment: the resumed run removes
	// only the cgroups they have left.
	waitFor(t, "the killed run's workers to end", func() bool {
		for _, dir := range killed {
			if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil && len(bytes.TrimSpace(b)) > 0 {
				return false
			}
		}
		return true
	})

	o := agentrun(t, invocation{bin: leakBin(t), args: runArgs(spec, out, "--resume"), env: env})
	t.Logf("resumed in %s", o.elapsed.Round(10*time.Millisecond))
	require.Equal(t, 0, o.code, "stderr:\n%s", lastLines(o.stderr, 20))
	assert.Empty(t, sessionCgroups(t, cmd.Process.Pid), "the resumed run removed the killed run's empty cgroups")
	assertNoProcesses(t, marker)
	assertNoGoroutines(t, o.stderr)

	sessions, sum := verifyRun(t, out, e2eSessions)
	assert.Equal(t, e2eSessions, sum.Totals.ByStatus[protocol.StatusSuccess], "nothing lost")
	assert.Equal(t, succeeded, sum.Totals.Reused)
	rerun := checkStdout(t, o.stdout)
	for _, row := range sum.Sessions {
		prev, had := before[row.Key]
		if had && prev.Status == protocol.StatusSuccess {
			assert.True(t, row.Reused, "%s succeeded before the kill and is reused", row.Key)
			assert.Equal(t, prev.SessionID, row.SessionID, "%s keeps its session", row.Key)
			assert.False(t, rerun[row.SessionID], "%s is not run again", row.Key)
			after, err := os.ReadFile(filepath.Join(out, "sessions", row.Key, "result.json"))
			require.NoError(t, err)
			assert.Equal(t, beforeFiles[row.Key], after, "result.json of %s is untouched", row.Key)
			continue
		}
		assert.False(t, row.Reused, row.Key)
		assert.True(t, rerun[row.SessionID], "%s ran in the resumed run", row.Key)
		assert.Equal(t, 1, sessions[row.Key].result.Attempts, row.Key)
	}
	assert.Len(t, rerun, e2eSessions-succeeded, "the resumed run ran only what was missing")
	assertNoSecrets(t, out, sec.values(), o.stdout, o.stderr)
}

// sessionCgroups lists the session cgroups the agentrun process pid made.
func sessionCgroups(t *testing.T, pid int) []string {
	t.Helper()
	found, err := sandbox.CgroupsOf(pid)
	require.NoError(t, err)
	return found
}
