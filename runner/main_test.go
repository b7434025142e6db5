package runner_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// TestMain fails the package's tests when a goroutine outlives them: every session,
// watchdog, progress ticker and HTTP connection must have been waited for or closed.
func TestMain(m *testing.M) {
	worker.ExitIfWorker()    // the internal tests start this test binary as their sessions' worker
	testexit.QuickChildren() // some tests run copies of this binary
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}

// newRunner is runner.New with the sessions' workers run as workertest's agentrun-worker,
// unless o names a worker binary itself. With -short it skips the test: the tests that
// run sessions, each in worker processes of its own, are the slow part of the package.
// (A test that only plans calls runner.New.)
func newRunner(tb testing.TB, o runner.Options) *runner.Runner {
	tb.Helper()
	if testing.Short() {
		tb.Skip("runs sessions in their workers (not with -short)")
	}
	if o.Sandbox.Binary == "" {
		o.Sandbox.Binary = workertest.Bin(tb)
	}
	return runner.New(o)
}
