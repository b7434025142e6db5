// Package workertest builds agentrun-worker for the tests of packages that start
// sessions' workers, so that they need not re-execute their own test binary for each
// session: a race-instrumented test binary costs several times agentrun-worker's CPU to
// start, and a session starts its worker at least once.
package workertest

import (
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/agentrun/agentrun/worker"
)

// Build builds agentrun-worker into dir and returns its path. Like a test binary it
// carries no VCS stamp, so that a test binary's client and it are of one build
// (worker.Config.Build).
func Build(dir string) (string, error) {
	out := filepath.Join(dir, worker.BinaryName)
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", out, "github.com/agentrun/agentrun/cmd/agentrun-worker")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", worker.BinaryName, err, b)
	}
	return out, nil
}
