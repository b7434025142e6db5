//go:build linux

package worker_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// parentOf is the parent pid of process pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			ppid, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err)
			return ppid
		}
	}
	t.Fatalf("no PPid in /proc/%d/status", pid)
	return 0
}

// openFiles maps each open fd of process pid to what it links to. A worker's stage 2
// is not dumpable, so only root may list its files: for others it is skipped.
func openFiles(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrPermission) && os.Getuid() != 0 {
		t.Logf("process %d: %v", pid, err)
		return nil
	}
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			out[e.Name()] = target
		}
	}
	return out
}

// holdsSocket says whether one of files is a socket.
func holdsSocket(files map[string]string) bool {
	for _, target := range files {
		if strings.HasPrefix(target, "socket:") {
			return true
		}
	}
	return false
}

// waitEnded returns once process pid has ended (a zombie counts), through a pidfd.
func waitEnded(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // gone and reaped already
	}
	require.NoError(t, err)
	defer func() { _ = unix.Close(fd) }()
	deadline := time.Now().Add(30 * time.Second)
	var n int
	for {
		// Past the deadline the wait is 0, not negative (which would wait for ever).
		n, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(max(0, time.Until(deadline).Milliseconds())))
		if !errors.Is(err, unix.EINTR) { // a signal to this process (the runtime's preemption, SIGCHLD)
			break
		}
	}
	require.NoError(t, err)
	require.Equal(t, 1, n, "process %d still runs after 30 s", pid)
}

// newSpawner returns a spawner for the clients, closed when the test ends.
func newSpawner(t *testing.T, clients ...*worker.Client) *worker.Spawner {
	t.Helper()
	sp := worker.NewSpawner()
	t.Cleanup(func() { _ = sp.Close() })
	for _, c := range clients {
		c.SetSpawner(sp)
	}
	return sp
}

// TestSpawnerStartsStrictWorkers checks that the workers of level strict of clients
// given a Spawner are children of the spawner's process, not of the caller, that they
// run tools as any worker does, that closing one ends its process, and that closing the
// spawner ends the workers still running.
func TestSpawnerStartsStrictWorkers(t *testing.T) {
	t.Parallel()
	a, wsA := newClient(t, sandbox.LevelStrict, "0467")
	b, _ := newClient(t, sandbox.LevelStrict, "0467")
	off, _ := newClient(t, sandbox.LevelOff, "0467")
	sp := newSpawner(t, a, b, off)
	out, isErr := bash(t, a, "echo made > made.txt; cat made.txt")
	require.False(t, isErr, out)
	assert.Equal(t, "made\n", out)
	got, err := os.ReadFile(filepath.Join(wsA, "made.txt"))
	require.NoError(t, err)
	assert.Equal(t, "made\n", string(got))
	out, isErr = bash(t, b, "echo pid=$$")
	require.False(t, isErr, out)
	out, isErr = bash(t, off, "true")
	require.False(t, isErr, out)

	spawner := parentOf(t, a.PID())
	assert.NotEqual(t, os.Getpid(), spawner, "the strict worker is not the caller's child")
	assert.Equal(t, os.Getpid(), parentOf(t, spawner), "the spawner is")
	argv, err := workertest.Cmdline(spawner)
	require.NoError(t, err)
	assert.Equal(t, []string{os.Args[0], worker.Command, "spawn"}, argv)
	assert.Equal(t, spawner, parentOf(t, b.PID()), "one spawner for both")
	files := openFiles(t, spawner)
	assert.True(t, holdsSocket(files), "the spawner's end of its socket pair: %v", files)
	for _, pid := range append([]int{a.PID()}, worker.Children(a.PID())...) {
		files := openFiles(t, pid)
		assert.False(t, holdsSocket(files), "the spawner's socket must not reach worker process %d: %v", pid, files)
	}
	assert.Equal(t, os.Getpid(), parentOf(t, off.PID()), "the other levels start from the caller")

	pidA, pidB := a.PID(), b.PID()
	require.NoError(t, a.Close())
	waitEnded(t, pidA)
	require.NoError(t, sp.Close())
	waitEnded(t, pidB) // it dies with its parent
	waitEnded(t, spawner)
	out, isErr = bash(t, b, "true")
	assert.True(t, isErr, out)
	out, isErr = bash(t, b, "true")
	assert.True(t, isErr, out)
	assert.Contains(t, out, "worker spawner: closed", "no worker starts through a closed spawner")
}

// TestSpawnerRestarts checks that a spawner whose process was killed starts another
// at the next worker, and that the workers of the killed one died with it.
func TestSpawnerRestarts(t *testing.T) {
	t.Parallel()
	a, _ := newClient(t, sandbox.LevelStrict, "0467")
	b, _ := newClient(t, sandbox.LevelStrict, "0467")
	newSpawner(t, a, b)
	out, isErr := bash(t, a, "true")
	require.False(t, isErr, out)
	first := parentOf(t, a.PID())
	pidA := a.PID()
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	waitEnded(t, first)
	waitEnded(t, pidA)

	out, isErr = bash(t, b, "echo again")
	require.False(t, isErr, out)
	assert.Equal(t, "again\n", out)
	second := parentOf(t, b.PID())
	assert.NotEqual(t, first, second)
	assert.Equal(t, os.Getpid(), parentOf(t, second))
}
