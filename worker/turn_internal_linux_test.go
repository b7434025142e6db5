package worker

import (
	"fmt"
	"io"
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

// BenchmarkStderrCopy copies a worker's stderr, a line and its end, from a pipe into
// its tail as both kinds of worker do (io.Copy, os/exec's through it): B/op is what the
// copy allocates, and holds for as long as the worker runs.
func BenchmarkStderrCopy(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		_, _ = w.WriteString("worker: a line of its stderr\n")
		_ = w.Close()
		t := &tailBuffer{max: 8 << 10}
		if _, err := io.Copy(t, r); err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
	}
}

// TestTailBufferKeepsTheHead writes a worker's crash as its stderr has it, the cause on
// the first line and kilobytes of goroutine dump after it: the text kept has the cause
// and the end, with what was left out between them said. (It kept only the end, and a
// worker that died under a fork bomb said no more than its last goroutines.)
func TestTailBufferKeepsTheHead(t *testing.T) {
	b := &tailBuffer{max: 8 << 10}
	_, _ = b.Write([]byte("runtime: failed to create new OS thread\nfatal error: newosproc\n"))
	for i := range 500 {
		_, _ = fmt.Fprintf(b, "goroutine %d [select]:\n\truntime.gopark(...)\n", i)
	}
	_, _ = b.Write([]byte("rip    0x7f2b64f31eec\n"))
	got := b.String()
	assert.True(t, strings.HasPrefix(got, "runtime: failed to create new OS thread\nfatal error: newosproc\n"), "%.200s", got)
	assert.True(t, strings.HasSuffix(got, "rip    0x7f2b64f31eec\n"))
	assert.True(t, strings.Contains(got, " bytes left out ...]\n"), "no mark of what was left out")
	assert.LessOrEqual(t, len(got), 8<<10+64)
	short := &tailBuffer{max: 8 << 10}
	_, _ = short.Write([]byte("worker: no config from stage 1\n"))
	assert.Equal(t, "worker: no config from stage 1\n", short.String())
}
