package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
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
	dirs, err := sandbox.CgroupsOf(os.Getpid())
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

// TestMemoryIsBounded runs, at each confined level, a tool that touches four times the
// session's memory limit (dd's buffer of 1 GiB against 256 MiB, room for a worker built with the race detector), and at strict one
// that fills the scratch space, whose pages count in the limit too. The kernel's
// accounting of the session's memory cgroup shows the effect: it never held more than
// the limit, and it killed the tool's process for it, not the worker, which answers
// the next call; the tool's result says why. The scratch space is at most half the
// limit, so filling it ends in ENOSPC and leaves the next command memory to start in.
func TestMemoryIsBounded(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the memory cgroup needs root")
	}
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock} {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			const limit = 256 << 20
			c, _ := newClientWith(t, level, "0467", "7777", func(cfg *worker.Config) { cfg.Spec.Memory = limit })
			_, _ = bash(t, c, "true")
			require.Contains(t, c.Ready().Layers, sandbox.LayerMemory)
			dir := memoryCgroupOf(t, c.PID())
			pid := c.PID()
			out, _ := bash(t, c, "dd if=/dev/zero of=/dev/null bs=1G count=1; echo status=$?")
			assert.Contains(t, out, "status=137", "dd was not killed")
			assert.Contains(t, out, "the session reached its memory limit of 256 MiB", "the result does not say why")
			assert.Positive(t, memoryOOMKills(t, dir), "the kernel killed nothing for the limit")
			assert.LessOrEqual(t, memoryPeak(t, dir), uint64(limit), "the session held more than its limit")
			if level == sandbox.LevelStrict {
				out, _ = bash(t, c, "head -c 512M /dev/zero > /tmp/big; echo status=$?; stat -c size=%s /tmp/big")
				assert.Contains(t, out, "No space left on device", out)
				assert.Contains(t, out, fmt.Sprintf("size=%d", limit/2), "the scratch space is not half the limit: %s", out)
				assert.LessOrEqual(t, memoryPeak(t, dir), uint64(limit), "the session held more than its limit")
			}
			out, isErr := bash(t, c, "rm -f /tmp/big; echo still-here")
			require.False(t, isErr, out)
			assert.Contains(t, out, "still-here", "the next command has memory to start in")
			// Many processes, each smaller than the worker: the kernel's choice goes by
			// score first, and the tools' processes have the highest. Those left of
			// them may outlive the call (background processes stay); the worker lives.
			rss, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			require.NoError(t, err)
			t.Logf("worker: %s", regexp.MustCompile(`VmRSS:.*`).Find(rss))
			kills := memoryOOMKills(t, dir)
			out, _ = bash(t, c, `for i in $(seq 100); do ( x=$(head -c 4000000 /dev/zero | tr '\0' a); sleep 1 ) & done; wait`)
			assert.Greater(t, memoryOOMKills(t, dir), kills, "the kernel killed nothing for the limit: %s", out)
			assert.Contains(t, out, "the session reached its memory limit", out)
			assert.Equal(t, pid, c.PID(), "the worker was started anew")
			assert.NoError(t, syscall.Kill(pid, 0), "the worker was killed")
			score, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/oom_score_adj")
			require.NoError(t, err)
			assert.Equal(t, "0", strings.TrimSpace(string(score)), "the worker keeps its own score")
		})
	}
}

// memoryCgroupOf is the folder of the session's memory cgroup that process pid is in:
// the v2 folder that also holds its pids limit, or the v1 memory hierarchy's.
func memoryCgroupOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.Contains(parts[2], "/agentrun-") {
			continue
		}
		switch {
		case parts[1] == "":
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")); err == nil {
				return filepath.Join("/sys/fs/cgroup", parts[2])
			}
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			return filepath.Join("/sys/fs/cgroup/memory", parts[2])
		}
	}
	require.FailNow(t, "no session memory cgroup holds the worker", "%s", b)
	return ""
}

// memoryOOMKills is how many processes the kernel killed for the cgroup's limit.
func memoryOOMKills(t *testing.T, dir string) int {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "memory.events")); err == nil {
		return cgroupCounter(t, dir, "memory.events", "oom_kill")
	}
	return cgroupCounter(t, dir, "memory.oom_control", "oom_kill")
}

// memoryPeak is the most memory the cgroup held.
func memoryPeak(t *testing.T, dir string) uint64 {
	t.Helper()
	name := "memory.max_usage_in_bytes"
	if _, err := os.Stat(filepath.Join(dir, "memory.peak")); err == nil {
		name = "memory.peak"
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(t, err)
	return n
}

// TestToolsHaveTheHighestOOMScore: at every level, with a memory cgroup or without, a
// tool's process (and what it starts) has the highest OOM score, and the worker keeps
// its own, so that memory running short kills a tool's process first.
func TestToolsHaveTheHighestOOMScore(t *testing.T) {
	t.Parallel()
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock, sandbox.LevelOff} {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			c, _ := newClientPolicy(t, level, "0467", "7777")
			out, isErr := bash(t, c, "cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'")
			require.False(t, isErr, out)
			assert.Equal(t, "1000\n1000", strings.TrimSpace(out))
			own, err := os.ReadFile("/proc/self/oom_score_adj")
			require.NoError(t, err)
			score, err := os.ReadFile("/proc/" + strconv.Itoa(c.PID()) + "/oom_score_adj")
			require.NoError(t, err)
			assert.Equal(t, string(own), string(score), "the worker keeps the score it started with")
		})
	}
}
