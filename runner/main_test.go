package runner_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/runner"
	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/worker"
	"github.com/agentrun/agentrun/worker/workertest"
)

// workerBin is the agentrun-worker the sessions of these tests run their tools in.
var workerBin string

// TestMain fails the package's tests when a goroutine outlives them: every session,
// watchdog, progress ticker and HTTP connection must have been waited for or closed.
func TestMain(m *testing.M) {
	worker.ExitIfWorker()  // the internal tests start this test binary as their sessions' worker
	mcptest.ExitIfServer() // and the sessions' workers start it as their stdio MCP server
	bin, remove, err := workertest.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner tests:", err)
		os.Exit(1)
	}
	workerBin = bin
	testexit.QuickChildren() // some tests run copies of this binary
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		remove()
		testexit.Exit(code)
	}))
}

// newRunner is runner.New with the sessions' workers run as workerBin, unless o names
// a worker binary itself.
func newRunner(o runner.Options) *runner.Runner {
	if o.Sandbox.Binary == "" {
		o.Sandbox.Binary = workerBin
	}
	return runner.New(o)
}
