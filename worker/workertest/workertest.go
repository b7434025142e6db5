// Package workertest builds agentrun-worker for the tests of packages that start
// sessions' workers, so that they need not re-execute their own test binary for each
// session: a race-instrumented test binary costs several times agentrun-worker's CPU to
// start, and a session starts its worker at least once.
package workertest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentrun/agentrun/testbuild"
	"github.com/agentrun/agentrun/worker"
)

// set is the test binary's agentrun-worker. Like a test binary it carries no VCS stamp,
// so that a test binary's client and it are of one build (worker.Config.Build). It is
// linked statically, as the release's is (.goreleaser.yaml, the Dockerfile): a worker
// starts twice per session, and the dynamic loader and C library of a cgo build would
// add a third of its start's CPU to every figure measured with it.
var set = testbuild.New("worker", testbuild.Cmd{File: worker.BinaryName,
	Args: []string{"build", "-buildvcs=false", "github.com/agentrun/agentrun/cmd/agentrun-worker"},
	Env:  []string{"CGO_ENABLED=0"}})

// Bin returns the path of agentrun-worker, building it on the test binary's first call
// (testbuild.Set.Dir).
func Bin(tb testing.TB) string {
	tb.Helper()
	return set.Path(tb, worker.BinaryName)
}

// Cmdline is the argument list of process pid, from /proc/PID/cmdline.
func Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}
