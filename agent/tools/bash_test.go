package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentrun/agentrun/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBash(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		command string
		want    string
		wantErr bool
	}{
		"stdout":          {command: "echo hello", want: "hello\n"},
		"stderr labelled": {command: "echo out; echo err >&2", want: "out\n[stderr]\nerr\n"},
		"stderr only":     {command: "echo err >&2", want: "[stderr]\nerr\n"},
		"exit code":       {command: "echo partial; exit 3", want: "partial\n[exit code 3]", wantErr: true},
		"no output":       {command: "true", want: "(no output)"},
		"no newline":      {command: "printf abc; printf def >&2; exit 1", want: "abc\n[stderr]\ndef\n[exit code 1]", wantErr: true},
		"workspace cwd":   {command: "cat marker.txt", want: "in the workspace\n"},
		"stdin is empty":  {command: "cat; echo done", want: "done\n"},
		"not a login sh":  {command: "shopt -q login_shell && echo login || echo plain", want: "plain\n"},
		"minimal env":     {command: `echo "$TERM $LANG $PATH"`, want: "dumb C.UTF-8 " + defaultPath + "\n"},
		"invalid utf-8":   {command: `printf 'a\xffb\n'`, want: "a\uFFFDb\n"},
		"killed":          {command: "kill -SEGV $$", want: "[killed by signal SIGSEGV]", wantErr: true},
		"multiline":       {command: "for i in 1 2 3; do\n  echo $i\ndone", want: "1\n2\n3\n"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, policy.DefaultMode)
			writeTree(t, env.Workspace, map[string]string{"marker.txt": "in the workspace\n"})
			res := call(t, Bash{}, env, in{"command": tt.command})
			assert.Equal(t, tt.want, res.Content)
			assert.Equal(t, tt.wantErr, res.IsError)
		})
	}
}

func TestBashProcEnv(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.ProcEnv = []string{"PATH=/usr/bin:/bin", "GREETING=hi"}
	res := call(t, Bash{}, env, in{"command": `echo "$GREETING ${LANG:-unset}"`})
	assert.Equal(t, "hi unset\n", res.Content)
}

func TestBashErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		give string
		want string
	}{
		"no command":    {give: `{}`, want: "no command provided"},
		"blank command": {give: `{"command":"  \n"}`, want: "no command provided"},
		"zero timeout":  {give: `{"command":"true","timeout":0}`, want: "timeout must be at least 1 second"},
		"bad timeout":   {give: `{"command":"true","timeout":"soon"}`, want: `invalid input: want an integer, got "soon"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			res := Bash{}.Run(context.Background(), Call{Input: json.RawMessage(tt.give), Env: newEnv(t, policy.DefaultMode)})
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content)
		})
	}
}

// TestBashDeniedDoesNotRun: the policy check happens before anything runs.
func TestBashDeniedDoesNotRun(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	res := call(t, Bash{}, env, in{"command": "touch ran.txt && cat /etc/shadow"})
	assert.True(t, res.IsError)
	assert.True(t, strings.HasPrefix(res.Content, "command blocked by bash safety policy (required=4006 allowed=0467;"), res.Content)
	_, err := os.Stat(filepath.Join(env.Workspace, "ran.txt"))
	assert.True(t, os.IsNotExist(err), "the command did not run")
}

// runWatched runs a Bash call and fails the test if it does not return in time.
func runWatched(t *testing.T, ctx context.Context, env *Env, input in) Result {
	t.Helper()
	b, err := json.Marshal(input)
	require.NoError(t, err)
	done := make(chan Result, 1)
	go func() { done <- Bash{}.Run(ctx, Call{Input: b, Env: env}) }()
	select {
	case res := <-done:
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("Bash did not return within 30 s")
		return Result{}
	}
}

// firstLinePID reads the pid the command printed with echo $$.
func firstLinePID(t *testing.T, content string) int {
	t.Helper()
	line, _, _ := strings.Cut(content, "\n")
	pid, err := strconv.Atoi(line)
	require.NoError(t, err, "first line %q", line)
	return pid
}

// groupGone reports whether no live process is left in the process group. Members
// that are zombies waiting for their reaper run nothing and count as gone.
func groupGone(t *testing.T, pgid int) bool {
	t.Helper()
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return true
	}
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // state ppid pgrp …
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if f[0] != "Z" && f[0] != "X" {
			return false
		}
	}
	return true
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a timeout (not with -short)")
	}
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	res := runWatched(t, context.Background(), env, in{"command": "echo $$; sleep 100 & sleep 100; wait", "timeout": 1})
	assert.True(t, res.IsError)
	assert.True(t, strings.HasSuffix(res.Content, "[... command timed out after 1 seconds ...]"), res.Content)
	assert.True(t, groupGone(t, firstLinePID(t, res.Content)), "no process of the group is left")
}

func TestBashTimeoutCappedByEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a timeout (not with -short)")
	}
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.Timeout = time.Second
	res := runWatched(t, context.Background(), env, in{"command": "echo $$; sleep 100", "timeout": 3600})
	assert.True(t, strings.HasSuffix(res.Content, "[... command timed out after 1 seconds ...]"), res.Content)
	assert.True(t, groupGone(t, firstLinePID(t, res.Content)))
}

func TestBashTermIgnored(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a kill grace (not with -short)")
	}
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	res := runWatched(t, context.Background(), env, in{"command": "trap '' TERM; echo $$; sleep 100 & sleep 100; wait", "timeout": 1})
	assert.True(t, strings.HasSuffix(res.Content, "[... command timed out after 1 seconds ...]"), res.Content)
	assert.True(t, groupGone(t, firstLinePID(t, res.Content)), "SIGKILL follows the grace period")
}

func TestBashCancelKillsGroup(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.Activity = cancel // the first output cancels the call
	res := runWatched(t, ctx, env, in{"command": "echo $$; sleep 100 & sleep 100; wait"})
	assert.True(t, res.IsError)
	assert.True(t, strings.HasSuffix(res.Content, "[... command cancelled ...]"), res.Content)
	assert.True(t, groupGone(t, firstLinePID(t, res.Content)))
}

func TestBashLeftoverProcessesKilled(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	res := runWatched(t, context.Background(), env, in{"command": "echo $$; (sleep 100 &); echo done"})
	assert.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasSuffix(res.Content, "\ndone\n"), res.Content)
	assert.True(t, groupGone(t, firstLinePID(t, res.Content)))
}

// TestBashEscapedProcessDoesNotHang: a process that leaves the group (setsid) but
// keeps stdout open cannot make the call hang. The FIFO makes the shell wait until
// the escaped process runs in its own session.
func TestBashEscapedProcessDoesNotHang(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	res := runWatched(t, context.Background(), env, in{"command": "mkfifo f && (setsid sh -c 'echo $$ > f; exec sleep 100' &) && cat f"})
	pid := firstLinePID(t, res.Content)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	assert.Contains(t, res.Content, "kept its output open; stopped reading")
}

func TestBashHugeOutputTruncated(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.MaxOutput = 10007
	var calls atomic.Int32
	env.Activity = func() { calls.Add(1) }
	// 10 MB of two-, three- and four-byte characters between two markers.
	res := runWatched(t, context.Background(), env, in{"command": "echo HEAD-START; yes 'é€😀' | head -c 10000000; echo TAIL-END"})
	require.False(t, res.IsError)
	c := res.Content
	assert.True(t, utf8.ValidString(c), "valid UTF-8")
	assert.LessOrEqual(t, len(c), env.MaxOutput)
	assert.True(t, strings.HasPrefix(c, "HEAD-START\né€😀\n"), c[:40])
	assert.True(t, strings.HasSuffix(c, "é€😀\nTAIL-END\n"), c[len(c)-40:])
	i := strings.Index(c, "\n[... truncated ")
	require.GreaterOrEqual(t, i, 0)
	j := strings.Index(c[i:], " bytes ...]\n")
	require.Greater(t, j, 0)
	dropped, err := strconv.Atoi(c[i+len("\n[... truncated ") : i+j])
	require.NoError(t, err)
	markerLen := j + len(" bytes ...]\n")
	assert.Equal(t, 11+10_000_000+9, len(c)-markerLen+dropped, "kept plus dropped bytes are the whole output")
	assert.Positive(t, calls.Load(), "Activity was called")
	assert.Less(t, calls.Load(), int32(1000), "Activity is rate-limited")
}

func TestBashStdoutAndStderrShareTheCap(t *testing.T) {
	t.Parallel()
	env := newEnv(t, policy.DefaultMode)
	env.MaxOutput = 2000
	res := runWatched(t, context.Background(), env, in{"command": "head -c 5000 /dev/zero | tr '\\0' o; head -c 5000 /dev/zero | tr '\\0' e >&2"})
	assert.LessOrEqual(t, len(res.Content), env.MaxOutput)
	out, errOut, ok := strings.Cut(res.Content, "[stderr]\n")
	require.True(t, ok)
	assert.Contains(t, out, "[... truncated ")
	assert.Contains(t, errOut, "[... truncated ")
	assert.InDelta(t, len(out), len(errOut), 10, "each stream gets about half")
}

func TestSplitBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b, budget int
		wantA, wantB int
	}{
		{a: 10, b: 20, budget: 100, wantA: 80, wantB: 90},
		{a: 10, b: 500, budget: 100, wantA: 50, wantB: 90},
		{a: 500, b: 10, budget: 100, wantA: 90, wantB: 50},
		{a: 500, b: 500, budget: 100, wantA: 50, wantB: 50},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.a, tt.b), func(t *testing.T) {
			a, b := splitBudget(tt.a, tt.b, tt.budget)
			assert.Equal(t, tt.wantA, a)
			assert.Equal(t, tt.wantB, b)
		})
	}
}
