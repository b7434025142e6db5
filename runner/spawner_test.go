package runner_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/sandbox"
	"github.com/agentrun/agentrun/transport/scripted"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// childrenOf lists the child processes of pid with their command lines.
func childrenOf(pid int) map[int][]string {
	out := map[int][]string{}
	for _, child := range worker.Children(pid) {
		if argv, err := workertest.Cmdline(child); err == nil { // else it ended
			out[child] = argv
		}
	}
	return out
}

// fifoWorkspace makes a test folder with a workspace ws in it that holds the named
// FIFOs, on which a test and its sessions' tools wait for each other.
func fifoWorkspace(t *testing.T, fifos ...string) (dir, ws string) {
	t.Helper()
	dir = t.TempDir()
	ws = filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	for _, f := range fifos {
		require.NoError(t, syscall.Mkfifo(filepath.Join(ws, f), 0o666))
	}
	return dir, ws
}

// withArgs keeps the processes whose arguments after the program are args.
func withArgs(procs map[int][]string, args ...string) []int {
	var pids []int
	for pid, argv := range procs {
		if len(argv) == len(args)+1 && strings.Join(argv[1:], " ") == strings.Join(args, " ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// serving keeps the workers among procs: each is stage 1 become stage 2, which serves
// ("__worker serve" and the descriptor of its config).
func serving(procs map[int][]string) []int {
	var pids []int
	for pid, argv := range procs {
		if len(argv) == 4 && argv[1] == worker.Command && argv[2] == "serve" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRunStartsStrictWorkersFromOneSpawner holds two strict sessions of a run in their
// Bash calls (on FIFOs in their shared workspace) and looks at the process table: the
// sessions' workers are children of one spawner process, the run's child, and none is
// the run's own child; once the run has returned, the spawner is gone.
func TestRunStartsStrictWorkersFromOneSpawner(t *testing.T) {
	if err := sandbox.Probe().Supports(sandbox.LevelStrict); err != nil {
		t.Skip(err)
	}
	dir, ws := fifoWorkspace(t, "ready", "go")
	gate, err := scripted.ParseScript("gate.yaml", []byte(`steps:
  - tool_calls: [{name: Bash, input: {command: "echo ready > ready && read x < go"}}]
  - text: Released.
`))
	require.NoError(t, err)
	spec := writeSpec(t, dir, `version: 1
concurrency: 2
defaults:
  tools: [Bash]
  workspace: {dir: ws, mode: shared}
  sandbox: {level: strict}
jobs:
  - {id: gate, model: gate, repeat: 2, prompt: Wait.}
`)
	r := newRunner(t, runner.Options{Out: filepath.Join(dir, "out"), Environ: os.Environ(),
		Providers: newInProcess(map[string]*scripted.Script{"gate": gate})})
	// Both ends open read-write, so that neither open waits for the other side and
	// neither side sees an end while the other is still to come.
	ready, err := os.OpenFile(filepath.Join(ws, "ready"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { _ = ready.Close() }()
	release, err := os.OpenFile(filepath.Join(ws, "go"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { _ = release.Close() }()

	var run sync.WaitGroup
	var sum *runner.Summary
	var runErr error
	run.Go(func() {
		sum, runErr = r.Run(context.Background(), spec)
		_, _ = ready.WriteString("the run ended\n") // should a session not have got there
	})
	lines := bufio.NewScanner(ready)
	for range 2 {
		require.True(t, lines.Scan())
		if lines.Text() != "ready" {
			run.Wait()
			require.NoError(t, runErr)
			transcript, _ := os.ReadFile(filepath.Join(dir, "out", runner.SessionsDir, "gate.r1", runner.TranscriptFile))
			t.Fatalf("a session did not reach its Bash call:\n%s\n%s", sum.Text(), transcript)
		}
	}

	mine := childrenOf(os.Getpid())
	spawners := withArgs(mine, worker.Command, "spawn")
	require.Len(t, spawners, 1, "one spawner, the run's child: %v", mine)
	assert.Empty(t, serving(mine), "no worker is the run's own child: %v", mine)
	assert.Len(t, serving(childrenOf(spawners[0])), 2, "both workers are the spawner's")

	_, err = release.WriteString("go\ngo\n")
	require.NoError(t, err)
	run.Wait()
	require.NoError(t, runErr)
	assert.Equal(t, 2, sum.Totals.Passed, sum.Text())
	_, err = os.Stat(fmt.Sprintf("/proc/%d", spawners[0]))
	assert.ErrorIs(t, err, os.ErrNotExist, "the spawner has ended and been waited for")
	assert.Empty(t, withArgs(childrenOf(os.Getpid()), worker.Command, "spawn"))
}
