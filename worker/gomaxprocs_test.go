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
	"github.com/agentrun/agentrun/worker"
)

// TestStagesRunOnOneProcessor checks the environment of a worker's own processes, the
// one that stage 1 became by exec or, with the network bridge, both stages: they run
// with one Go processor (a worker serves one session, whose tools run as processes of
// their own; more processors only add threads and memory per session), while its
// tools keep the machine's processors.
func TestStagesRunOnOneProcessor(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		level   sandbox.Level
		bridged bool
	}{"strict": {sandbox.LevelStrict, false}, "strict with the bridge": {sandbox.LevelStrict, true},
		"landlock": {sandbox.LevelLandlock, false}, "off": {sandbox.LevelOff, false}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var edit func(*worker.Config)
			want := 1
			if tc.bridged {
				edit, want = withProxySocket(t), 2
			}
			c, _ := newClientWith(t, tc.level, "0467", "0467", edit)
			out, isErr := bash(t, c, "echo ${GOMAXPROCS-unset}")
			require.False(t, isErr, out)
			assert.Equal(t, "unset\n", out, "the tools' environment")
			stages := append([]int{c.PID()}, worker.Children(c.PID())...)
			require.Len(t, stages, want, "the worker's processes")
			for _, pid := range stages {
				env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
				if errors.Is(err, fs.ErrPermission) && os.Getuid() != 0 {
					t.Skipf("process %d: %v", pid, err)
				}
				require.NoError(t, err)
				vars := strings.Split(string(bytes.TrimRight(env, "\x00")), "\x00")
				assert.Contains(t, vars, "GOMAXPROCS=1", "the environment of worker process %d", pid)
			}
		})
	}
}
