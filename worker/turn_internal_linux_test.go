package worker

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// TestStartsWaitingForTheirTurnHoldNoPipes checks that worker starts queued behind
// another hold no descriptors: while the test holds the run's turn, twenty starts wait
// for theirs and the process has the pipes it had; released, every one starts. (A run
// whose thousand sessions called a tool at once held six descriptors for each start
// waiting at the spawner, and failed sessions with "too many open files" under a limit
// it had been checked against.)
func TestStartsWaitingForTheirTurnHoldNoPipes(t *testing.T) {
	sp := NewSpawner()
	t.Cleanup(func() { _ = sp.Close() })
	release := sp.take()
	before := pipes(t)
	const n = 20
	started := make(chan *process, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			// Any program will do: the worker's pipes are made and closed alike.
			p, _, err := launch(sp, "/bin/true", sandbox.LevelOff, false)
			if assert.NoError(t, err) {
				started <- p
			}
		})
	}
	waitTaking(t, n)
	assert.Equal(t, before, pipes(t), "pipes held by starts waiting for their turn")
	release()
	wg.Wait()
	close(started)
	got := 0
	for p := range started {
		got++
		_, _ = p.req.Close(), p.rep.Close()
		_ = p.child.wait()
	}
	assert.Equal(t, n, got)
}

// pipes is how many of this process's descriptors are pipes.
func pipes(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(target, "pipe:") {
			n++
		}
	}
	return n
}

// waitTaking returns once n goroutines wait in Spawner.take, as their stacks show.
func waitTaking(t *testing.T, n int) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(30 * time.Second)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		if strings.Count(stacks, "worker.(*Spawner).take(") >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d starts do not wait for their turn:\n%s", n, stacks)
		runtime.Gosched()
	}
}
