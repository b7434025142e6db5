// Package workertest builds agentrun-worker for the tests of packages that start
// sessions' workers, so that they need not re-execute their own test binary for each
// session: a race-instrumented test binary costs several times agentrun-worker's CPU to
// start, and a session starts its worker at least once.
package workertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentrun/agentrun/worker"
)

// Build builds agentrun-worker into a new temporary folder and returns its path and a
// function that removes the folder. Like a test binary it carries no VCS stamp, so that
// a test binary's client and it are of one build (worker.Config.Build).
func Build() (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "agentrun-worker-")
	if err != nil {
		return "", nil, fmt.Errorf("build %s: %w", worker.BinaryName, err)
	}
	remove = func() { _ = os.RemoveAll(dir) }
	bin = filepath.Join(dir, worker.BinaryName)
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "github.com/agentrun/agentrun/cmd/agentrun-worker")
	if b, err := cmd.CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("build %s: %w\n%s", worker.BinaryName, err, b)
	}
	return bin, remove, nil
}
