package worker_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// exited reports whether process pid has ended (gone, or a zombie waiting for its
// parent).
func exited(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	for i := len(st) - 1; i >= 0; i-- {
		if st[i] == ')' {
			return i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X')
		}
	}
	return false
}

// TestIdleExit checks that an idle worker with no process left exits and that the next
// call starts another, while a worker whose session still runs a background process
// stays, and that process answers the next call.
func TestIdleExit(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the idle exit (not with -short)")
	}
	for _, level := range []sandbox.Level{sandbox.LevelStrict, sandbox.LevelLandlock} {
		t.Run(string(level), func(t *testing.T) {
			c, _ := newClientPolicy(t, level, "0467", "7777")
			c.SetIdleExit(50 * time.Millisecond)
			_, isErr := bash(t, c, "true")
			require.False(t, isErr)
			first := c.PID()
			assert.Eventually(t, func() bool { return exited(first) }, 10*time.Second, 10*time.Millisecond,
				"an idle worker with nothing left exits")
			_, isErr = bash(t, c, "true")
			require.False(t, isErr)
			assert.Equal(t, 2, c.Starts(), "the next call started a new worker")

			out, isErr := bash(t, c, "(sleep 30; echo late) > bg.out 2>&1 & echo $! > bg.pid")
			require.False(t, isErr, out)
			holder := c.PID()
			assert.Never(t, func() bool { return exited(holder) }, 300*time.Millisecond, 10*time.Millisecond,
				"a worker whose session has a background process stays")
			out, isErr = bash(t, c, "kill -0 $(cat bg.pid) && echo still-there")
			require.False(t, isErr, out)
			assert.Contains(t, out, "still-there", "the process started in one call lives into the next")
			assert.Equal(t, holder, c.PID(), "the same worker answered")
		})
	}
}

// TestNewWorkerServesItsFirstRequest checks that a worker's idle countdown starts only
// once it has had a frame: a worker started for a call never exits idle before reading
// it, however short its idle exit and however slow the runner is to send the call (a
// loaded machine), so the call is not refused as "exited idle twice in a row".
func TestNewWorkerServesItsFirstRequest(t *testing.T) {
	t.Parallel()
	for _, level := range sandbox.Levels {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			c, _ := newClient(t, level, "0467")
			c.SetIdleExit(time.Microsecond)
			for range 3 {
				out, isErr := bash(t, c, "echo served")
				require.False(t, isErr, out)
				assert.Equal(t, "served\n", out)
			}
		})
	}
}
