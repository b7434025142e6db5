package main

import (
	"os"
	"testing"

	"github.com/agentrun/agentrun/worker"
)

// TestMain runs the test binary as a worker when a session of BenchmarkRunSandbox
// starts it so: the runner starts its own executable as each session's worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == worker.Command {
		os.Exit(worker.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}
