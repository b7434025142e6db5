package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// sessionTasks counts the processes of the machine in the pids cgroups this test
// process made for its workers (named agentrun-PID-N).
func sessionTasks(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	mark := []byte("/agentrun-" + strconv.Itoa(os.Getpid()) + "-")
	n := 0
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cgroup"); err == nil && bytes.Contains(b, mark) {
			n++
		}
	}
	return n
}

// TestForkBombIsContained runs a fork bomb at level strict: the session's pids cgroup
// (as root) holds it. The kernel's own accounting of that cgroup shows the effect: the
// bomb reached the limit (forks were refused there) and the cgroup never held more than
// the limit's worth of tasks; and nothing of it is left after Close. Counting the
// machine's processes from here instead would undercount: the bomb's thousand runnable
// shells starve this process of the CPU it needs to sample /proc.
func TestForkBombIsContained(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fork bomb to its limit (not with -short)")
	}
	if os.Getuid() != 0 {
		t.Skip("the pids cgroup needs root; a non-root worker has its user namespace's RLIMIT_NPROC")
	}
	c, _ := newClientPolicy(t, sandbox.LevelStrict, "0467", "7777")
	_, _ = bash(t, c, "true")
	require.Contains(t, c.Ready().Layers, sandbox.LayerPids)
	dir := pidsCgroupOf(t, c.PID())
	in, err := json.Marshal(map[string]any{"command": `:(){ :|:& };: ; echo survived`, "timeout": 4000})
	require.NoError(t, err)
	r := c.RunTool(context.Background(), "Bash", in)
	require.NotContains(t, r.Content, "worker: stopped answering", "the worker outlived the bomb")
	assert.Positive(t, cgroupCounter(t, dir, "pids.events", "max"), "the bomb ran into the session's limit: %.300s", r.Content)
	if peak, err := os.ReadFile(filepath.Join(dir, "pids.peak")); err == nil { // Linux 6.13 and later
		n, err := strconv.Atoi(strings.TrimSpace(string(peak)))
		require.NoError(t, err)
		assert.Greater(t, n, 100, "the bomb ran")
		assert.LessOrEqual(t, n, sandbox.DefaultMaxPids, "the bomb stayed within the session's limit")
	}
	require.NoError(t, c.Close())
	assert.Zero(t, sessionTasks(t), "nothing of the bomb outlived the worker")
	assert.NoDirExists(t, dir, "the session's cgroup is removed with its worker")
	assert.False(t, strings.Contains(r.Content, "panic"), r.Content)
}

// pidsCgroupOf is the folder of the session cgroup (one this test process made) that
// process pid is in.
func pidsCgroupOf(t *testing.T, pid int) string {
	t.Helper()
	dirs, err := sandbox.PidsOf(os.Getpid())
	require.NoError(t, err)
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil && slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid)) {
			return dir
		}
	}
	require.FailNow(t, "no session cgroup holds the worker", "pid %d, in %v", pid, dirs)
	return ""
}

// cgroupCounter is the value of key in a cgroup's flat-keyed file (such as pids.events).
func cgroupCounter(t *testing.T, dir, file, key string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err)
			return n
		}
	}
	require.FailNow(t, "no "+key+" in "+file, "%s", b)
	return 0
}
