package worker_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/worker"
)

// TestMain runs the test binary as a worker when a client starts it so.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == worker.Command {
		os.Exit(worker.Main(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}
