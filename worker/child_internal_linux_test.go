package worker

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startWithPidfd starts sh -c script with its stdin and stderr the given files, and
// returns its pid and pidfd. The test process is its parent and does not reap it, so
// that its end shows as a zombie.
func startWithPidfd(t *testing.T, script string, stdin, stderr *os.File) (pid, pidfd int) {
	t.Helper()
	pidfd = -1
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", script}, &syscall.ProcAttr{
		Files: []uintptr{stdin.Fd(), stderr.Fd(), stderr.Fd()},
		Sys:   &syscall.SysProcAttr{PidFD: &pidfd},
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, pidfd, 0)
	t.Cleanup(func() {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	})
	return pid, pidfd
}

// state is the state letter of process pid in /proc.
func state(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))[0]
}

// TestSpawnedChildWaitsForTheEnd checks that wait returns only once the process has
// ended, with its stderr read to the end, and that kill ends it.
func TestSpawnedChildWaitsForTheEnd(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		script string
		end    func(c *spawnedChild, stdin *os.File) error
		// stderr is all of its stderr, when the test can know it.
		stderr string
	}{
		"exits when its input ends": {script: "echo before >&2; read x; echo after >&2",
			end:    func(_ *spawnedChild, stdin *os.File) error { return stdin.Close() },
			stderr: "before\nafter\n"},
		"killed": {script: "read x; echo never >&2",
			end: func(c *spawnedChild, _ *os.File) error { return c.kill() }},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inR, inW, err := os.Pipe()
			require.NoError(t, err)
			errR, errW, err := os.Pipe()
			require.NoError(t, err)
			pid, pidfd := startWithPidfd(t, tt.script, inR, errW)
			_ = inR.Close()
			_ = errW.Close()
			out := &tailBuffer{max: 1 << 10} // locked: the copy writes while the test reads
			c, err := newSpawnedChild(pid, pidfd, errR, out)
			require.NoError(t, err)
			type waited struct {
				err   error
				state string // the process's right after wait returned
			}
			done := make(chan waited, 1)
			go func() {
				err := c.wait()
				done <- waited{err, state(t, pid)}
			}()
			require.NoError(t, tt.end(c, inW))
			w := <-done
			require.NoError(t, w.err)
			_ = inW.Close()
			assert.Equal(t, "Z", w.state, "wait returned after the end, before any reaping")
			if tt.stderr != "" {
				assert.Equal(t, tt.stderr, out.String(), "all of its stderr")
			} else {
				assert.NotContains(t, out.String(), "never")
			}
		})
	}
}
