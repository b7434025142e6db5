package worker_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/sandbox"
)

// TestStagesRunOnOneProcessor checks the environment of a worker's own process, which
// stage 1 became by exec: it runs with one Go processor (a worker serves one session,
// whose tools run as processes of their own; more processors only add threads and
// memory per session), while its tools keep the machine's processors.
func TestStagesRunOnOneProcessor(t *testing.T) {
	t.Parallel()
	for _, level := range sandbox.Levels {
		t.Run(string(level), func(t *testing.T) {
			t.Parallel()
			c, _ := newClient(t, level, "0467")
			out, isErr := bash(t, c, "echo ${GOMAXPROCS-unset}")
			require.False(t, isErr, out)
			assert.Equal(t, "unset\n", out, "the tools' environment")
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", c.PID()))
			if errors.Is(err, fs.ErrPermission) && os.Getuid() != 0 {
				t.Skipf("worker %d: %v", c.PID(), err)
			}
			require.NoError(t, err)
			vars := strings.Split(string(bytes.TrimRight(env, "\x00")), "\x00")
			assert.Contains(t, vars, "GOMAXPROCS=1", "the worker's environment")
		})
	}
}
