package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveStaleCgroups makes the cgroups a killed run leaves (empty, creator gone), one
// that still has a task, and one of a live process, and checks that only the first kind
// is removed from the hierarchy. They are made in a cgroup of the test's own, below where
// sessions' cgroups go, so that no other run's RemoveStaleCgroups (a test of another
// package, running at the same time) removes them first.
func TestRemoveStaleCgroups(t *testing.T) {
	top, err := PidsBase()
	if err != nil {
		t.Skipf("no writable pids hierarchy (%v): nothing to leave behind", err)
	}
	base := filepath.Join(top, fmt.Sprintf("test-stale-%d", os.Getpid())) // not a session cgroup's name
	require.NoError(t, os.Mkdir(base, 0o755))
	t.Cleanup(func() { assert.NoError(t, os.Remove(base)) })
	gone := exec.Command("true")
	require.NoError(t, gone.Run())
	dead := gone.Process.Pid
	require.False(t, processExists(dead), "pid %d was reused", dead)
	mk := func(name string) string {
		dir := filepath.Join(base, name)
		require.NoError(t, os.Mkdir(dir, 0o755))
		t.Cleanup(func() { _ = os.Remove(dir) })
		return dir
	}
	stale := []string{mk(fmt.Sprintf("agentrun-%d-1", dead)), mk(fmt.Sprintf("agentrun-%d-2", dead))}
	live := mk(fmt.Sprintf("agentrun-%d-999", os.Getpid()))
	other := mk(fmt.Sprintf("agentrun-%d-x", dead)) // not a session cgroup's name
	busy := mk(fmt.Sprintf("agentrun-%d-3", dead))
	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	p := &Cgroup{dirs: []string{busy}, pids: busy}
	require.NoError(t, p.Add(sleeper.Process.Pid))

	made, err := cgroupsOfIn(base, dead)
	require.NoError(t, err)
	assert.ElementsMatch(t, append(slices.Clone(stale), busy), made, "the dead run's session cgroups, by its pid")

	n, err := removeStaleIn(base)
	require.NoError(t, err)
	assert.Equal(t, len(stale), n)
	for _, dir := range stale {
		assert.NoDirExists(t, dir, "an empty cgroup of a dead run is removed")
	}
	assert.DirExists(t, live, "a live process's cgroup stays")
	assert.DirExists(t, other)
	assert.DirExists(t, busy, "a cgroup with a task stays")
	require.NoError(t, sleeper.Process.Kill())
	_ = sleeper.Wait()
	require.NoError(t, p.Remove())
}
