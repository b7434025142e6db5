package worker_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/worker"
)

// TestMain runs the test binary as a worker when a client starts it so.
func TestMain(m *testing.M) {
	worker.ExitIfWorker()
	goleak.VerifyTestMain(m)
}
