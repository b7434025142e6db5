package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
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

// TestForkBombIsContained runs a fork bomb at level strict: the session's cgroup (as
// root) or its user namespace's process limit holds it, the machine never gets more
// than the limit's worth of processes, and nothing of it is left after Close.
func TestForkBombIsContained(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the pids cgroup needs root; a non-root worker has its user namespace's RLIMIT_NPROC")
	}
	c, _ := newClientPolicy(t, sandbox.LevelStrict, "0467", "7777")
	_, _ = bash(t, c, "true")
	require.Contains(t, c.Ready().Layers, sandbox.LayerPids)
	in, err := json.Marshal(map[string]any{"command": `:(){ :|:& };: ; echo survived`, "timeout": 4000})
	require.NoError(t, err)
	peak := make(chan int, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		max := 0
		for {
			select {
			case <-stop:
				peak <- max
				return
			default:
				max = maxInt(max, sessionTasks(t))
			}
		}
	}()
	r := c.RunTool(context.Background(), "Bash", in)
	close(stop)
	<-done
	p := <-peak
	assert.Greater(t, p, 100, "the bomb ran")
	assert.LessOrEqual(t, p, sandbox.DefaultMaxPids, "the bomb stayed within the session's limit")
	require.NoError(t, c.Close())
	assert.Zero(t, sessionTasks(t), "nothing of the bomb outlived the worker")
	assert.False(t, strings.Contains(r.Content, "panic"), r.Content)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
