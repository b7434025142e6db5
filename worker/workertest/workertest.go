// Package workertest builds agentrun-worker for the tests of packages that start
// sessions' workers, so that they need not re-execute their own test binary for each
// session: a race-instrumented test binary costs several times agentrun-worker's CPU to
// start, and a session starts its worker at least once.
package workertest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/testbuild"
	"github.com/agentrun/agentrun/worker"
)

// set is the test binary's agentrun-worker. Like a test binary it carries no VCS stamp,
// so that a test binary's client and it are of one build (worker.Config.Build).
var set = testbuild.New("worker", testbuild.Cmd{File: worker.BinaryName,
	Args: []string{"build", "-buildvcs=false", "github.com/agentrun/agentrun/cmd/agentrun-worker"}})

// Bin returns the path of agentrun-worker, building it on the test binary's first call
// (testbuild.Set.Dir).
func Bin(tb testing.TB) string {
	tb.Helper()
	return set.Path(tb, worker.BinaryName)
}

// Children lists the child processes of pid, from /proc/PID/task/*/children: the
// workers, stages and tools a test looks for. A thread or process that has ended
// meanwhile is left out.
func Children(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil // it has exited
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

// Cmdline is the argument list of process pid, from /proc/PID/cmdline.
func Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}
