package runner_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/mcpclient/mcptest"
	"github.com/agentrun/agentrun/worker"
)

// TestMain fails the package's tests when a goroutine outlives them: every session,
// watchdog, progress ticker and HTTP connection must have been waited for or closed.
func TestMain(m *testing.M) {
	worker.ExitIfWorker()  // the runner starts this test binary as its sessions' worker
	mcptest.ExitIfServer() // and as their stdio MCP server
	goleak.VerifyTestMain(m)
}
