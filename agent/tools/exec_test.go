package tools

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExec(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	tests := map[string]struct {
		give         ExecOptions
		wantOutput   string
		wantCode     int
		wantTimedOut bool
	}{
		"success":   {give: ExecOptions{Command: "pwd"}, wantOutput: dir + "\n"},
		"failure":   {give: ExecOptions{Command: "echo bad >&2; exit 4"}, wantOutput: "[stderr]\nbad\n[exit code 4]", wantCode: 4},
		"env":       {give: ExecOptions{Command: "echo $X", Env: []string{"X=1"}}, wantOutput: "1\n"},
		"timeout":   {give: ExecOptions{Command: "sleep 100", Timeout: 500 * time.Millisecond}, wantOutput: "[... command timed out after 0.5 seconds ...]", wantCode: -1, wantTimedOut: true},
		"truncated": {give: ExecOptions{Command: "head -c 5000 /dev/zero | tr '\\0' x", MaxOutput: 1000}, wantOutput: "[... truncated "},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.give.Dir = dir
			res := Exec(context.Background(), tt.give)
			require.NoError(t, res.Err)
			assert.Contains(t, res.Output, tt.wantOutput)
			assert.Equal(t, tt.wantCode, res.ExitCode)
			assert.Equal(t, tt.wantTimedOut, res.TimedOut)
			if tt.give.MaxOutput > 0 {
				assert.LessOrEqual(t, len(res.Output), tt.give.MaxOutput)
			}
		})
	}
}

func TestExecStartError(t *testing.T) {
	t.Parallel()
	res := Exec(context.Background(), ExecOptions{Command: "true", Dir: "/nonexistent/dir"})
	assert.Error(t, res.Err)
	assert.Equal(t, -1, res.ExitCode)
	assert.True(t, strings.Contains(res.Err.Error(), "no such file"), res.Err)
}

// groupLog records what Groups hears.
type groupLog struct {
	mu     sync.Mutex
	events []string
}

func (g *groupLog) Started(pgid int) { g.add("+" + strconv.Itoa(pgid)) }
func (g *groupLog) Ended(pgid int)   { g.add("-" + strconv.Itoa(pgid)) }
func (g *groupLog) add(e string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.events = append(g.events, e)
}

// TestGroupsHearOfEveryCommand checks that Bash and Exec report the process group the
// command really ran in, when it started and once it was killed.
func TestGroupsHearOfEveryCommand(t *testing.T) {
	t.Parallel()
	// Field 5 of /proc/self/stat is the process group; the shell reads its own.
	const printGroup = `read -r _ _ _ _ pgrp _ < /proc/$$/stat; echo "$pgrp"`
	t.Run("Bash", func(t *testing.T) {
		groups := &groupLog{}
		env := newEnv(t, "7777") // reading /proc is a system read
		env.Groups = groups
		res := call(t, Bash{}, env, in{"command": printGroup})
		require.False(t, res.IsError, res.Content)
		pgid := strings.TrimSpace(res.Content)
		assert.Equal(t, []string{"+" + pgid, "-" + pgid}, groups.events)
	})
	t.Run("Exec", func(t *testing.T) {
		groups := &groupLog{}
		res := Exec(context.Background(), ExecOptions{Command: printGroup, Dir: tempDir(t), Groups: groups})
		require.NoError(t, res.Err)
		pgid := strings.TrimSpace(res.Output)
		assert.Equal(t, []string{"+" + pgid, "-" + pgid}, groups.events)
	})
	t.Run("no start, nothing heard", func(t *testing.T) {
		groups := &groupLog{}
		res := Exec(context.Background(), ExecOptions{Command: "true", Dir: "/nonexistent/dir", Groups: groups})
		require.Error(t, res.Err)
		assert.Empty(t, groups.events)
	})
}
