package worker_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentrun/agentrun/testexit"
	"github.com/agentrun/agentrun/worker"
)

// childScenarios are what a copy of the test binary runs instead of the tests, by the
// name in scenarioEnv; other _test files add theirs from init.
var childScenarios = map[string]func() int{}

// TestMain runs the test binary as a worker when a client starts it so.
func TestMain(m *testing.M) {
	worker.ExitIfWorker()
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(lineServer(mode))
	}
	if run := childScenarios[os.Getenv(scenarioEnv)]; run != nil {
		os.Exit(run())
	}
	if os.Getenv(scenarioEnv) == "nonroot" {
		os.Exit(nonRootScenario())
	}
	testexit.Parallel(4) // the tests mostly wait on workers, servers and grace periods
	goleak.VerifyTestMain(m, goleak.Cleanup(testexit.Exit))
}
