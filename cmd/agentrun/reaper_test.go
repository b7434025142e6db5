package main

import (
	"errors"
	"github.com/agentrun/agentrun/fuzzguard"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// startGroup starts a long sleep as the leader of its own process group, as the Bash
// tool starts its shells, and returns it; the test kills it if it still runs.
func startGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// killedBySIGKILL waits for cmd and reports whether SIGKILL ended it.
func killedBySIGKILL(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// stillRunning reports whether the group of cmd exists.
func stillRunning(cmd *exec.Cmd) bool { return syscall.Kill(-cmd.Process.Pid, 0) == nil }

// startTagged starts a long sleep with the run's tag in its environment, in a session
// of its own (as a daemon escapes its group), and returns it.
func startTagged(t *testing.T, tag string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), tagVar + "=" + tag}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

func TestReap(t *testing.T) {
	t.Parallel()
	const tag = "0123456789abcdef01234567"
	listed, ended := startGroup(t), startGroup(t)
	escaped, otherRun := startTagged(t, tag), startTagged(t, "fedcba9876543210fedcba98")
	in := "+" + strconv.Itoa(listed.Process.Pid) + "\n+" + strconv.Itoa(ended.Process.Pid) +
		"\n-" + strconv.Itoa(ended.Process.Pid) + "\n"

	failed := reap(readGroups(strings.NewReader(in)), "/proc", tag)

	assert.Zero(t, failed)
	assert.True(t, killedBySIGKILL(t, listed), "the group still listed when the input ended is killed")
	assert.True(t, killedBySIGKILL(t, escaped), "a process with the run's tag is killed, in whatever group")
	assert.True(t, stillRunning(ended), "a group agentrun had ended is left alone")
	assert.True(t, stillRunning(otherRun), "another run's processes are left alone")
}

func TestTaggedProcesses(t *testing.T) {
	t.Parallel()
	const tag = "00112233445566778899aabb"
	p := startTagged(t, tag)
	assert.Equal(t, []int{p.Process.Pid}, taggedProcesses("/proc", tag))
	assert.Empty(t, taggedProcesses("/proc", tag[:10]), "the whole tag must match")
	assert.Empty(t, taggedProcesses("/proc", ""), "no tag, no process")
	assert.Empty(t, taggedProcesses(filepath.Join(t.TempDir(), "missing"), tag), "no /proc, nothing")
}

func TestReadGroups(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		in   string
		want []int
	}{
		"listed":                {"+100\n+200\n", []int{100, 200}},
		"ended":                 {"+100\n+200\n-100\n", []int{200}},
		"no final newline":      {"+100\n+200", []int{100, 200}},
		"listed twice":          {"+100\n+100\n", []int{100}},
		"ended before listed":   {"-100\n+100\n", []int{100}},
		"never this process's":  {"+0\n+1\n+-5\n", nil},
		"junk":                  {"hello\n+\n*100\n+abc\n\n+100 \n", nil},
		"carriage return":       {"+100\r\n", nil},
		"very long line":        {"+" + strings.Repeat("9", 1<<17) + "\n+100\n", []int{100}},
		"nothing":               {"", nil},
		"an overflowing number": {"+99999999999999999999999\n", nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tt.want, readGroups(strings.NewReader(tt.in)))
		})
	}
}

// FuzzReadGroups checks that no input makes the reaper list a group it was not told of,
// one it was told had ended, or this process's group or every process (0, 1, -N). Its
// seed corpus is testdata/fuzz/FuzzReadGroups.
func FuzzReadGroups(f *testing.F) {
	f.Fuzz(func(t *testing.T, in string) {
		fuzzguard.Run(len(in), func() {
			listed := map[int]bool{}
			for _, line := range strings.Split(in, "\n") {
				if len(line) < 2 {
					continue
				}
				if n, err := strconv.Atoi(line[1:]); err == nil && n > 1 {
					switch line[0] {
					case '+':
						listed[n] = true
					case '-':
						delete(listed, n)
					}
				}
			}
			got := readGroups(strings.NewReader(in))
			for i, pgid := range got {
				if pgid <= 1 || !listed[pgid] || (i > 0 && got[i-1] >= pgid) {
					t.Fatalf("groups %v, want the set %v", got, listed)
				}
			}
			if len(got) != len(listed) {
				t.Fatalf("groups %v, want the set %v", got, listed)
			}
		})
	})
}

// TestReaperProcess runs the helper as agentrun runs it, from the real binary: a group
// still listed when agentrun goes away is killed; after a normal end nothing is but
// what carries the run's tag.
func TestReaperProcess(t *testing.T) {
	t.Parallel()
	t.Run("agentrun gone", func(t *testing.T) {
		r := startReaper(agentrunBin(t), zap.NewNop())
		require.NotNil(t, r)
		g := startGroup(t)
		r.Started(g.Process.Pid)
		// What a killed agentrun leaves: its end of the pipe closed by the kernel,
		// nothing unlisted.
		require.NoError(t, r.in.Close())
		require.NoError(t, r.cmd.Wait())
		assert.True(t, killedBySIGKILL(t, g))
	})
	t.Run("normal end", func(t *testing.T) {
		r := startReaper(agentrunBin(t), zap.NewNop())
		require.NotNil(t, r)
		g := startGroup(t)
		r.Started(g.Process.Pid)
		r.Ended(g.Process.Pid)
		daemon := startTagged(t, r.tag)
		require.NoError(t, r.Close())
		assert.True(t, stillRunning(g), "an ended group is not the reaper's")
		assert.True(t, killedBySIGKILL(t, daemon), "a tagged process that left its group is")
	})
	t.Run("environment", func(t *testing.T) {
		r := startReaper(agentrunBin(t), zap.NewNop())
		require.NotNil(t, r)
		defer r.close()
		assert.Equal(t, []string{"A=1", tagVar + "=" + r.tag}, r.environ([]string{"A=1"}))
		assert.Len(t, r.tag, 24)
	})
	t.Run("inside a test", func(t *testing.T) {
		r := startReaper("", zap.NewNop())
		assert.Nil(t, r.groups(), "no helper, and a nil tools.Groups")
		assert.Equal(t, []string{"A=1"}, r.environ([]string{"A=1"}))
	})
}
