package worker_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/worker"
)

// TestOneProcessPerWorker checks a worker's process tree at each level, and at level
// strict with network: stage 1 becomes stage 2 (it execs rather than forks), so the
// worker is one process, the parent of its tools, and pid 1 of the sandbox at strict.
// With network the runner's proxy accepts on the listener the worker made on the
// sandbox's loopback, so no stage stays outside the confinement to relay for it. A
// worker of two processes costs a session a second Go runtime for as long as it lives.
func TestOneProcessPerWorker(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		level   sandbox.Level
		network bool
	}{"strict": {sandbox.LevelStrict, false}, "strict with network": {sandbox.LevelStrict, true},
		"landlock": {sandbox.LevelLandlock, false}, "off": {sandbox.LevelOff, false}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var edit func(*worker.Config)
			var serve func(net.Listener)
			if tc.network {
				edit, serve = withProxy(t)
			}
			c, _ := newClientWith(t, tc.level, "0467", "0467", edit)
			if serve != nil {
				c.SetProxy(serve)
			}
			out, isErr := bash(t, c, "echo $PPID")
			require.False(t, isErr, out)
			want := strconv.Itoa(c.PID())
			if tc.level == sandbox.LevelStrict {
				want = "1" // the worker, as the sandbox's pid namespace numbers it
			}
			assert.Equal(t, want, strings.TrimSpace(out), "the Bash tool's parent")
			assert.Empty(t, worker.Children(c.PID()), "no second stage")
			if tc.network {
				out, isErr = bash(t, c, `read -r line < /dev/tcp/127.0.0.1/${HTTP_PROXY##*:} && echo "$line"`)
				require.False(t, isErr, out)
				assert.Equal(t, "proxy\n", out, "the proxy answers on the sandbox's loopback")
			}
		})
	}
}

// orphanScript leaves an orphan that has already ended: python forks a child that
// exits, waits for that exit without collecting it, and exits itself, so the zombie
// passes to the worker (the sandbox's pid 1 or the subreaper) before the tool's own
// process has ended.
const orphanScript = `python3 -c '
import os
pid = os.fork()
if pid == 0:
    os._exit(7)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
'`

// TestOrphansAreReaped checks that the worker collects the orphans it adopts, and
// that doing so never takes the exit status of a tool's own process: each call leaves
// an ended orphan and exits 3.
func TestOrphansAreReaped(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 makes the orphans:", err)
	}
	for _, level := range sandbox.Levels {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			c, _ := newClient(t, level, "0467")
			for i := range 20 {
				w := c.Exec(context.Background(), orphanScript+"; exit 3", time.Minute, 0)
				require.NoError(t, w.Err)
				require.Equal(t, 3, w.ExitCode, "call %d: %s", i, w.Output)
				for _, pid := range worker.Children(c.PID()) {
					st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
					if err == nil {
						assert.NotContains(t, string(st[strings.LastIndexByte(string(st), ')'):]), ") Z", "call %d left zombie %d", i, pid)
					}
				}
			}
		})
	}
}

// withProxy gives a config network at level strict, and the client a proxy that
// answers each connection on the worker's loopback listener with "proxy" (the test
// owns its goroutines, which end with the listener).
func withProxy(t *testing.T) (edit func(*worker.Config), serve func(net.Listener)) {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	serve = func(l net.Listener) {
		wg.Go(func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return // the client closed it with the worker
				}
				_, _ = c.Write([]byte("proxy\n"))
				_ = c.Close()
			}
		})
	}
	return func(cfg *worker.Config) { cfg.Spec.Proxied = true }, serve
}

// TestWorkerName checks the name the process table gives a worker: its binary's, not
// "exe" (what an exec of /proc/self/exe leaves), at least once in ten starts.
func TestWorkerName(t *testing.T) {
	t.Parallel()
	named := 0
	for range 10 {
		c, _ := newClient(t, sandbox.LevelOff, "4467")
		out, isErr := bash(t, c, "cat /proc/$PPID/comm")
		require.False(t, isErr, out)
		if strings.TrimSpace(out) == worker.BinaryName[:min(len(worker.BinaryName), 15)] {
			named++
		}
		require.NoError(t, c.Close())
	}
	assert.Positive(t, named, "no worker of ten was named %s", worker.BinaryName)
}
